#!/usr/bin/env node
// A scripted stand-in for every agent CLI (claude, codex, gemini, …), replaying recorded real output.
// It logs each call (argv, stdin, selected env) to FAKE_AGENT_LOG; then, named after a CLI it knows, it
// refuses what that CLI refuses (tests/fakes/agent-clis.mjs); then it follows FAKE_AGENT_SCENARIO:
//   { "steps": [step, …] }   call n uses steps[n] (the last step repeats)
//   { "byPrompt": [{ "match": "US-001", "steps": [step, …] }, …] }   the first entry whose `match` occurs in
//     the prompt (stdin or argv) wins; its k-th matching call uses its steps[k] (several agents run at once
//     with --parallel, so what a call does follows its task, not the order of calls)
// step fields (all optional):
//   replay: recording file (relative to tests/fixtures/recordings) printed line by line on stdout
//   lines: extra stdout lines (after replay); "__RESET_EPOCH__" becomes now + resetInSeconds (epoch s)
//   stderr: text for stderr;  exit: exit code (default 0);  delayMs: pause between lines
//   run: commands to execute first, without a shell, e.g. [["bd","close","x.1","--reason","done","--json"]]
//   edit: [{ file, from, to }] string replacements in files (relative to cwd), e.g. ticking a checkbox
//   write: { "path": "content" } files to write (relative to cwd, folders made as needed)
//   append: { "path": "text" } text appended to files (relative to cwd), after the writes
//   after: commands executed after the edits and writes, without a shell (the agent's own git commit)
//   hang: true → after the output, sleep until killed;  ignoreTerm: true → ignore SIGTERM
//   grandchild: true → start a grandchild that ignores SIGTERM and sleeps; its pid goes to FAKE_AGENT_PIDS
//   marker: a line printed on stderr once the step started (tests wait for it before signalling)
//   workMs: time the "work" takes, slept after the edits and writes, before any output
//   touch: an absolute path created once the step started; awaitFiles: absolute paths it waits for (30 s
//     at most) before going on: a barrier that holds agents of several workers until all have started
//   awaitContent: [{ file, includes }] waits (30 s at most) until each absolute file contains the text
//   waitFile: an absolute path; after the marker, wait until that file exists (the test releases the step)
//   bytes/lineBytes: flood stdout with that many bytes of assistant events of about lineBytes each
//   chunks: [{ text, stream: "stdout"|"stderr", waitForLog }] raw writes after the lines, in order, no newline
//           added; waitForLog first waits until ralph's iteration log (.ralph/logs/*/iteration-*) holds that
//           text, so the chunk before it was surely read on its own (a secret split across two reads)
//   probe: { write: [path…], read: [path…], report: "file" } tries to write (creating folders) and to read
//          each path, and writes { "write:<path>": "ok" | error code, "read:<path>": "ok:<text>" | code } as
//          JSON to report (relative to cwd): what a sandbox let the agent do
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusal } from './agent-clis.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const recordings = path.join(here, '..', 'fixtures', 'recordings');
const name = path.basename(process.argv[1] ?? 'agent');
const args = process.argv.slice(2);
const env = process.env;

let stdin = '';
try {
  stdin = readFileSync(0, 'utf8');
} catch {
  stdin = '';
}

const statePath = env.FAKE_AGENT_STATE ?? path.join(process.cwd(), '.fake-agent-state');
let call = 0;
try {
  call = Number(readFileSync(statePath, 'utf8')) || 0;
} catch {
  call = 0;
}
writeFileSync(statePath, String(call + 1));

if (env.FAKE_AGENT_LOG) {
  const picked = {};
  for (const key of ['IS_SANDBOX', 'SPECIFY_FEATURE_DIRECTORY', 'CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', 'RALPH_SECRET_PROBE', 'BEADS_DIR', 'BEADS_ACTOR', 'BD_ACTOR']) if (env[key] !== undefined) picked[key] = env[key];
  appendFileSync(env.FAKE_AGENT_LOG, JSON.stringify({ name, call, argv: args, stdin, cwd: process.cwd(), env: picked, pid: process.pid, time: new Date().toISOString() }) + '\n');
}

// Like the real CLI of its name: refuses a flag it does not know and the combinations it rejects (skipping
// permissions as root outside a declared sandbox, stream-json without --verbose, …), before doing anything.
const refused = refusal(name, args, { env, cwd: process.cwd(), uid: process.getuid?.() });
if (refused) {
  process.stderr.write(refused.stderr);
  process.exit(refused.exit);
}

let scenario = { steps: [{ replay: 'claude-ok.jsonl' }] };
if (env.FAKE_AGENT_SCENARIO) scenario = JSON.parse(readFileSync(env.FAKE_AGENT_SCENARIO, 'utf8'));
const prompt = `${stdin}\n${args.join(' ')}`;
const matched = (scenario.byPrompt ?? []).find((entry) => prompt.includes(entry.match));
let steps = scenario.steps ?? [];
let index = call;
if (matched) {
  // Calls per match are counted in a file of their own beside the call counter.
  const countPath = `${statePath}.${Buffer.from(matched.match).toString('hex')}`;
  try {
    index = Number(readFileSync(countPath, 'utf8')) || 0;
  } catch {
    index = 0;
  }
  writeFileSync(countPath, String(index + 1));
  steps = matched.steps ?? [];
}
const step = steps[Math.min(index, steps.length - 1)] ?? {};

if (step.ignoreTerm) process.on('SIGTERM', () => {});
if (step.marker) process.stderr.write(step.marker + '\n');
if (step.waitFile) while (!existsSync(step.waitFile)) await new Promise((resolve) => setTimeout(resolve, 20));

for (const command of step.run ?? []) {
  try {
    execFileSync(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (error) {
    process.stderr.write(`fake-agent: ${command.join(' ')} failed: ${error.message}\n`);
  }
}
for (const change of step.edit ?? []) {
  const file = path.resolve(change.file);
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replace(change.from, change.to));
}
for (const [file, content] of Object.entries(step.write ?? {})) {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(path.resolve(file), content);
}
for (const [file, text] of Object.entries(step.append ?? {})) appendFileSync(path.resolve(file), text);
for (const command of step.after ?? []) {
  try {
    execFileSync(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (error) {
    process.stderr.write(`fake-agent: ${command.join(' ')} failed: ${error.message}\n`);
  }
}
if (step.probe) {
  const seen = {};
  for (const file of step.probe.write ?? []) {
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      appendFileSync(file, 'written by the agent\n');
      seen[`write:${file}`] = 'ok';
    } catch (error) {
      seen[`write:${file}`] = error.code ?? String(error);
    }
  }
  for (const file of step.probe.read ?? []) {
    try {
      seen[`read:${file}`] = `ok:${readFileSync(file, 'utf8')}`;
    } catch (error) {
      seen[`read:${file}`] = error.code ?? String(error);
    }
  }
  writeFileSync(path.resolve(step.probe.report), JSON.stringify(seen, null, 2));
}
if (step.touch) writeFileSync(step.touch, `${process.pid}\n`);
for (const file of step.awaitFiles ?? []) {
  const until = Date.now() + 30_000;
  while (!existsSync(file) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}
for (const wanted of step.awaitContent ?? []) {
  const until = Date.now() + 30_000;
  const has = () => existsSync(wanted.file) && readFileSync(wanted.file, 'utf8').includes(wanted.includes);
  while (!has() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}
if (step.workMs) await new Promise((resolve) => setTimeout(resolve, step.workMs));

if (step.grandchild) {
  const child = spawn(process.execPath, ['-e', "process.on('SIGTERM',()=>{}); setInterval(()=>{}, 1000)"], { stdio: 'ignore' });
  if (env.FAKE_AGENT_PIDS) appendFileSync(env.FAKE_AGENT_PIDS, `${child.pid}\n`);
}
if (env.FAKE_AGENT_PIDS) appendFileSync(env.FAKE_AGENT_PIDS, `${process.pid}\n`);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const reset = String(Math.floor(Date.now() / 1000) + (step.resetInSeconds ?? 0));

const lines = [];
if (step.replay) {
  const file = path.isAbsolute(step.replay) ? step.replay : path.join(recordings, step.replay);
  if (!existsSync(file)) {
    process.stderr.write(`fake-agent: no recording ${file}\n`);
    process.exit(99);
  }
  lines.push(...readFileSync(file, 'utf8').split('\n').filter((line) => line.length > 0));
}
lines.push(...(step.lines ?? []));

function write(text) {
  return new Promise((resolve) => (process.stdout.write(text) ? resolve() : process.stdout.once('drain', resolve)));
}

for (const line of lines) {
  await write(line.replaceAll('__RESET_EPOCH__', reset) + '\n');
  if (step.delayMs) await sleep(step.delayMs);
}
if (step.bytes) {
  const size = step.lineBytes ?? 4096;
  const text = 'x'.repeat(Math.max(1, size - 120));
  const line = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text }] } }) + '\n';
  for (let sent = 0; sent < step.bytes; sent += line.length) await write(line);
  await write(readFileSync(path.join(recordings, 'claude-ok.jsonl'), 'utf8').split('\n').at(-2) + '\n');
}
function logsHold(text) {
  const logs = path.resolve('.ralph', 'logs');
  if (!existsSync(logs)) return false;
  for (const session of readdirSync(logs)) {
    for (const file of readdirSync(path.join(logs, session))) {
      if (file.startsWith('iteration-') && readFileSync(path.join(logs, session, file), 'latin1').includes(text)) return true;
    }
  }
  return false;
}
for (const chunk of step.chunks ?? []) {
  if (chunk.waitForLog) {
    const deadline = Date.now() + 20_000;
    while (!logsHold(chunk.waitForLog)) {
      if (Date.now() > deadline) {
        process.stderr.write(`fake-agent: the log never showed ${chunk.waitForLog}\n`);
        process.exit(98);
      }
      await sleep(20);
    }
  }
  if (chunk.stream === 'stderr') await new Promise((resolve) => process.stderr.write(chunk.text, resolve));
  else await write(chunk.text);
}
if (step.stderr) process.stderr.write(step.stderr.endsWith('\n') ? step.stderr : step.stderr + '\n');
if (step.hang) {
  setInterval(() => {}, 1000);
} else {
  process.exitCode = step.exit ?? 0;
}
