#!/usr/bin/env node
// The agent of the crash tests: does the task its prompt names, whatever the order ralph gives them in
// (one worker, several, after a crash and a restart). PRD (`- Task: **US-001**`): writes work/US-001.txt
// and sets `passes: true` in prd.json, as snarktank agents do. Spec Kit (the first T### of "This iteration's
// work"): writes work/T002.txt and ticks its box in tasks.md. Beads (`/sp:next`, as the sp plugin does it):
// the bead a worker's prompt names (`Work on bead ws-9w6.2 `), else the first one `bd ready` lists; claims
// it, writes work/ws-9w6.2.txt and closes it with bd (and, with CRASH_AGENT_COMMIT set, commits that file
// itself). Then the answer each prompt asks for.
// CRASH_AGENT_MS: time the work takes (after the files, before the answer), so random kills find it at work.
// CRASH_AGENT_DEAF: ignores SIGTERM while it works (a forced exit's case: only SIGKILL ends it).
// CRASH_AGENT_STARTED: a file it creates as it starts. CRASH_AGENT_AWAIT: a file it waits for before it
// works (made by the test, or by another host's agent as it starts), so two hosts' iterations interleave in
// one order; after 30 s without it, it fails.
// Logs each call ({ task, pid, cwd }) to CRASH_AGENT_LOG.
// The sandboxes' `claude` is crash-agent.sh, which does the same for PRD and Spec Kit prompts without a
// node start and hands everything else (beads) to this file.
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const prompt = `${readFileSync(0, 'utf8')}\n${process.argv.slice(2).join(' ')}`;
const prd = /- Task: \*\*([^*]+)\*\*/.exec(prompt)?.[1];
const work = prompt.split("This iteration's work")[1] ?? '';
const speckit = /\b(T\d{3})\b/.exec(work)?.[1];
const beads = !prd && !speckit && prompt.includes('/sp:next');
const bd = (args) => execFileSync('bd', [...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const issues = (text) => {
  const data = JSON.parse(text || '[]');
  return Array.isArray(data) ? data : (data.data ?? data.issues ?? []);
};
const bead = beads ? (/Work on bead (\S+) /.exec(prompt)?.[1] ?? issues(bd(['ready', '--limit', '0'])).find((issue) => issue.issue_type !== 'epic')?.id) : undefined;
const task = prd ?? speckit ?? bead;
// A prompt cut short (ralph killed while writing it to stdin) names no task: nothing is done.
if (task === undefined) process.exit(1);
if (process.env.CRASH_AGENT_LOG) appendFileSync(process.env.CRASH_AGENT_LOG, `${JSON.stringify({ task, pid: process.pid, cwd: process.cwd() })}\n`);
if (process.env.CRASH_AGENT_STARTED) writeFileSync(process.env.CRASH_AGENT_STARTED, '');
if (process.env.CRASH_AGENT_AWAIT) {
  const until = Date.now() + 30_000;
  while (!existsSync(process.env.CRASH_AGENT_AWAIT)) {
    if (Date.now() > until) {
      process.stderr.write(`crash agent: ${process.env.CRASH_AGENT_AWAIT} never appeared\n`);
      process.exit(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

mkdirSync('work', { recursive: true });
writeFileSync(path.join('work', `${task}.txt`), `${task} done\n`);
if (prd && existsSync('prd.json')) {
  const doc = JSON.parse(readFileSync('prd.json', 'utf8'));
  for (const story of doc.userStories ?? []) if (story.id === prd) story.passes = true;
  writeFileSync('prd.json', `${JSON.stringify(doc, null, 2)}\n`);
}
if (speckit) {
  for (const feature of existsSync('specs') ? readdirSync('specs') : []) {
    const file = path.join('specs', feature, 'tasks.md');
    if (!existsSync(file)) continue;
    writeFileSync(file, readFileSync(file, 'utf8').replace(`- [ ] ${speckit} `, `- [X] ${speckit} `));
  }
}
if (bead) {
  // A worker's bead is claimed for it already (its actor's claim again changes nothing).
  if (!/Work on bead /.test(prompt)) bd(['update', bead, '--claim']);
  bd(['close', bead, '--reason', 'done by the crash agent']);
  // CRASH_AGENT_COMMIT: commits its work itself, as the sp plugin's /sp:next may.
  if (process.env.CRASH_AGENT_COMMIT) {
    execFileSync('git', ['add', '--', path.join('work', `${bead}.txt`)], { stdio: 'ignore' });
    execFileSync('git', ['commit', '-q', '-m', `${bead}: done`, '--', path.join('work', `${bead}.txt`)], { stdio: 'ignore' });
  }
}
if (process.env.CRASH_AGENT_DEAF) process.on('SIGTERM', () => {});
const ms = Number(process.env.CRASH_AGENT_MS ?? 0);
if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
const text = prd
  ? `Done.\n\n## Ralph Report\nStatus: completed\nSummary: did ${task}\nChanges:\n- work/${task}.txt: added\nQuality:\n- tests: pass\nLearnings:\n- none\nCommits:\n- none\n`
  : `Did ${task}.`;
process.stdout.write(`${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: text, num_turns: 1, total_cost_usd: 0.001 })}\n`);
