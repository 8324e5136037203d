#!/usr/bin/env node
// Benchmark agent for the output flood: writes BENCH_FLOOD_BYTES (default 1 GiB) of claude stream-json
// from prebuilt buffers, as fast as the reader takes it: blocks of one 10 MiB assistant line followed
// by 6 MiB of 4 KiB assistant lines, one recorded api_retry line after half the blocks (a line ralph acts
// on, in the middle a capped log leaves out), then the recorded result line. Plain node, no per-line work.
//   BENCH_AGENT_TIMES  appends "<start ns> <end ns> <bytes>" when done
//   --sha256 [HEAD TAIL]  print JSON instead of writing the stream (for checking logs): its sha256 and size,
//                      the sha256 of its first HEAD and last TAIL bytes, and the lines ralph acts on with where they start
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
const retries = readFileSync(path.join(here, '..', '..', 'tests', 'fixtures', 'recordings', 'claude-429-retry.jsonl'), 'utf8');
const retry = Buffer.from(`${retries.split('\n').find((text) => text.includes('"api_retry"'))}\n`);
const small = Buffer.concat(Array.from({ length: smallPart / smallLine }, (_, index) => line(smallLine, `small line ${index} of the flood; `)));
const block = Buffer.concat([line(bigLine, 'a 10 MiB line of agent text with words and spaces '), small]);
const blocks = Math.max(0, Math.ceil((total - result.length) / block.length));

/** The stream, piece by piece (the same buffers again and again). */
function* pieces() {
  for (let index = 0; index < blocks; index += 1) {
    if (index === Math.floor(blocks / 2) && blocks > 0) yield retry;
    yield block;
  }
  yield result;
}

/** sha256 of the bytes [start, end) of the stream. */
function hashOf(start, end) {
  const hash = createHash('sha256');
  let at = 0;
  for (const piece of pieces()) {
    const from = Math.max(start, at);
    const to = Math.min(end, at + piece.length);
    if (from < to) hash.update(from === at && to === at + piece.length ? piece : piece.subarray(from - at, to - at));
    at += piece.length;
    if (at >= end) break;
  }
  return hash.digest('hex');
}

let size = 0;
for (const piece of pieces()) size += piece.length;
const sha = process.argv.indexOf('--sha256');
if (sha !== -1) {
  const head = Math.min(size, Number(process.argv[sha + 1] ?? 0));
  const tail = Math.min(size, Number(process.argv[sha + 2] ?? 0));
  const acted = [];
  let at = 0;
  for (const piece of pieces()) {
    if (piece === retry || piece === result) acted.push({ line: piece.toString('utf8').trimEnd(), at });
    at += piece.length;
  }
  process.stdout.write(`${JSON.stringify({ sha256: hashOf(0, size), bytes: size, head: { bytes: head, sha256: hashOf(0, head) }, tail: { bytes: tail, sha256: hashOf(size - tail, size) }, acted })}\n`);
} else {
  const start = BigInt(Date.now()) * 1_000_000n;
  const write = (buffer) => new Promise((resolve) => (process.stdout.write(buffer) ? resolve() : process.stdout.once('drain', resolve)));
  for (const piece of pieces()) if (piece !== result) await write(piece);
  await new Promise((resolve) => process.stdout.write(result, resolve));
  const end = BigInt(Date.now()) * 1_000_000n;
  if (process.env.BENCH_AGENT_TIMES) appendFileSync(process.env.BENCH_AGENT_TIMES, `${start} ${end} ${size}\n`);
}
