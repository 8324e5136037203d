#!/usr/bin/env node
// The demo's scripted agent, installed as `claude` on the demo's PATH. It speaks Claude Code's
// `-p --output-format stream-json` dialect, really does the next ready beads task (edits a file,
// commits, `bd close`), and fails its second call once with an overloaded API (529) so the demo
// shows ralph's retry. No network, no model: the work it does comes from tasks.json beside it.
import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const plan = JSON.parse(readFileSync(path.join(here, 'tasks.json'), 'utf8'));
const delayMs = Number(process.env.DEMO_AGENT_DELAY_MS ?? 120);
const session = `demo-${process.pid}`;

try {
  readFileSync(0, 'utf8'); // the prompt (/sp:next); this agent knows what to do anyway
} catch {
  // no stdin
}

// Counts calls in .git/, which is never part of the work tree ralph compares.
const stateFile = path.join(git(['rev-parse', '--git-dir']).trim(), 'ralph-demo-agent-calls');
let call = 0;
try {
  call = Number(readFileSync(stateFile, 'utf8')) || 0;
} catch {
  call = 0;
}
writeFileSync(stateFile, String(call + 1));

function git(args) {
  return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}
function bd(args) {
  return JSON.parse(execFileSync('bd', [...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function emit(event) {
  process.stdout.write(`${JSON.stringify({ ...event, session_id: session })}\n`);
  await sleep(delayMs);
}
const say = (text) => emit({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] } });
let tools = 0;
async function tool(name, input, run) {
  tools += 1;
  const id = `toolu_demo_${tools}`;
  await emit({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] } });
  const output = run();
  await emit({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output, is_error: false }] } });
  return output;
}
async function result(text, fields) {
  await emit({ type: 'result', subtype: 'success', num_turns: tools + 1, result: text, ...fields });
}

await emit({ type: 'system', subtype: 'init', cwd: process.cwd(), model: 'demo-scripted', tools: ['Bash', 'Edit', 'Read'], permissionMode: 'bypassPermissions' });

if (call === 1) {
  // The shape of a real overloaded response (see tests/fixtures/recordings/claude-529.jsonl).
  const text = 'API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.';
  await emit({ type: 'assistant', message: { role: 'assistant', model: '<synthetic>', content: [{ type: 'text', text }] } });
  await result(text, { is_error: true, api_error_status: 529, api_error_type: 'overloaded_error', total_cost_usd: 0, usage: { input_tokens: 0, output_tokens: 0 } });
  process.exit(1);
}

await say('Let me find the next ready task of the epic.');
const ready = bd(['ready', '--exclude-type', 'epic', '--limit', '0']);
await tool('Bash', { command: 'bd ready --json' }, () => ready.map((issue) => `${issue.id} ${issue.title}`).join('\n') || '(nothing ready)');
const next = ready.map((issue) => plan.tasks.find((task) => task.id === issue.id)).find(Boolean);
if (!next) {
  await say('Nothing is left for me to do.');
  await result('Nothing is left to do. <promise>COMPLETE</promise>', { is_error: false, total_cost_usd: 0.001, usage: { input_tokens: 400, output_tokens: 20 } });
  process.exit(0);
}

await tool('Bash', { command: `bd update ${next.id} --claim --json` }, () => (bd(['update', next.id, '--claim']), `claimed ${next.id}`));
await say(`Working on ${next.id}: ${next.title}.`);
await tool('Read', { file_path: next.file }, () => readFileSync(next.file, 'utf8'));
await tool('Edit', { file_path: next.file }, () => {
  appendFileSync(next.file, next.append);
  return `The file ${next.file} has been updated.`;
});
await tool('Bash', { command: `git commit -am "${next.title} (${next.id})"` }, () => {
  git(['add', '-A']);
  git(['commit', '-q', '-m', `${next.title} (${next.id})`]);
  return git(['log', '--oneline', '-1']).trim();
});
await tool('Bash', { command: `bd close ${next.id} --json` }, () => (bd(['close', next.id, '--reason', 'implemented by the demo agent']), `closed ${next.id}`));
const left = bd(['ready', '--exclude-type', 'epic', '--limit', '0']).length;
const answer = `Done: ${next.title} (${next.id}).${left === 0 ? ' <promise>COMPLETE</promise>' : ''}`;
await say(answer);
const index = plan.tasks.indexOf(next);
await result(answer, { is_error: false, total_cost_usd: 0.0123 + index * 0.0031, usage: { input_tokens: 5200 + index * 640, output_tokens: 380 + index * 45 } });
