#!/usr/bin/env node
// Benchmark agent for the output flood: writes BENCH_FLOOD_BYTES (default 1 GiB) of claude stream-json
// from prebuilt buffers, as fast as the reader takes it: blocks of one 10 MiB assistant line followed
// by 6 MiB of 4 KiB assistant lines, then the recorded result line. Plain node, no per-line work.
//   BENCH_AGENT_TIMES  appends "<start ns> <end ns> <bytes>" when done
//   --sha256           print the sha256 and size of the stream instead of writing it (for checking logs)
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const total = Number(process.env.BENCH_FLOOD_BYTES ?? 1024 * MiB);
const bigLine = Number(process.env.BENCH_FLOOD_LINE_BYTES ?? 10 * MiB);
const smallLine = 4096;
const smallPart = 6 * MiB;

/** One assistant event line of exactly `size` bytes, newline included. */
function line(size, fill) {
  const empty = JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: '' }] } });
  const text = fill.repeat(Math.ceil((size - empty.length - 1) / fill.length)).slice(0, size - empty.length - 1);
  const out = Buffer.from(`${JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] } })}\n`);
  if (out.length !== size) throw new Error(`line of ${out.length} bytes, wanted ${size}`);
  return out;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const recording = readFileSync(path.join(here, '..', '..', 'tests', 'fixtures', 'recordings', 'claude-ok.jsonl'), 'utf8');
const result = Buffer.from(`${recording.split('\n').filter(Boolean).at(-1).replaceAll('<promise>COMPLETE</promise>', '')}\n`);
const small = Buffer.concat(Array.from({ length: smallPart / smallLine }, (_, index) => line(smallLine, `small line ${index} of the flood; `)));
const block = Buffer.concat([line(bigLine, 'a 10 MiB line of agent text with words and spaces '), small]);
const blocks = Math.max(0, Math.ceil((total - result.length) / block.length));

if (process.argv.includes('--sha256')) {
  const hash = createHash('sha256');
  for (let index = 0; index < blocks; index += 1) hash.update(block);
  hash.update(result);
  process.stdout.write(`${hash.digest('hex')} ${blocks * block.length + result.length}\n`);
} else {
  const start = BigInt(Date.now()) * 1_000_000n;
  const write = (buffer) => new Promise((resolve) => (process.stdout.write(buffer) ? resolve() : process.stdout.once('drain', resolve)));
  for (let index = 0; index < blocks; index += 1) await write(block);
  await new Promise((resolve) => process.stdout.write(result, resolve));
  const end = BigInt(Date.now()) * 1_000_000n;
  if (process.env.BENCH_AGENT_TIMES) appendFileSync(process.env.BENCH_AGENT_TIMES, `${start} ${end} ${blocks * block.length + result.length}\n`);
}
