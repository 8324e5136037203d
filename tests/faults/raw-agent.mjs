// Wraps tests/fakes/fake-agent.mjs (which does the scenario's edits, logging and replay) and puts raw bytes
// around its stdout, for faults a text-only scenario cannot express. Extra step fields, ignored by the fake:
//   rawBefore / rawAfter: base64 bytes written before / after the fake's output (invalid UTF-8, NUL, …)
//   tailBytes: N bytes of one JSON-looking line with no newline at the end, written last
//   selfSignal: a signal the wrapper sends itself at the end (e.g. "SIGSEGV": a crash with no result)
// Every stdout byte count goes to FAKE_RAW_COUNTS (one number per call), so tests can compare the log.
import { appendFileSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const fake = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fakes', 'fake-agent.mjs');
const env = process.env;
if (env.FAKE_AGENT_PIDS) appendFileSync(env.FAKE_AGENT_PIDS, `${process.pid}\n`);

let call = 0;
try {
  call = Number(readFileSync(env.FAKE_AGENT_STATE, 'utf8')) || 0;
} catch {
  call = 0;
}
const steps = env.FAKE_AGENT_SCENARIO ? (JSON.parse(readFileSync(env.FAKE_AGENT_SCENARIO, 'utf8')).steps ?? []) : [];
const step = steps[Math.min(call, steps.length - 1)] ?? {};

let written = 0;
const write = (chunk) =>
  new Promise((resolve) => {
    written += chunk.length;
    process.stdout.write(chunk, resolve);
  });

const stdin = readFileSync(0);
if (step.rawBefore) await write(Buffer.from(step.rawBefore, 'base64'));

const child = spawn(process.execPath, [fake, ...process.argv.slice(2)], { stdio: ['pipe', 'pipe', 'inherit'], env });
child.stdin.end(stdin);
for await (const chunk of child.stdout) await write(chunk);
const code = await new Promise((resolve) => child.on('close', (exitCode) => resolve(exitCode ?? 1)));

if (step.rawAfter) await write(Buffer.from(step.rawAfter, 'base64'));
if (step.tailBytes) {
  const head = Buffer.from('{"type":"assistant","message":{"content":[{"type":"text","text":"');
  const body = Buffer.alloc(step.tailBytes - head.length, 'y');
  await write(Buffer.concat([head, body]));
}
if (env.FAKE_RAW_COUNTS) appendFileSync(env.FAKE_RAW_COUNTS, `${written}\n`);
if (step.selfSignal) {
  process.kill(process.pid, step.selfSignal);
  setInterval(() => {}, 1000);
} else {
  process.exitCode = code;
}
