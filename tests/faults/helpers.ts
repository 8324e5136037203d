// Shared set-up for the fault-injection suite: projects for each mode, the raw-output agent, and the checks
// every fault ends with (exit code, task source, lock, logs, no surviving agent process).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { agentPids, pidAlive, waitFor, type Sandbox } from '../e2e/helpers.ts';

export * from '../e2e/helpers.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const RAW_AGENT = path.join(HERE, 'raw-agent.mjs');

export const FEATURE = 'specs/001-demo';
export const TASKS_PATH = `${FEATURE}/tasks.md`;

export const TASKS = [
  '# Tasks: Demo',
  '',
  '## Phase 1: Setup',
  '',
  '- [X] T001 Create the project structure',
  '',
  '## Phase 2: User Story 1 - Greet (Priority: P1) 🎯 MVP',
  '',
  '- [ ] T002 [US1] Write greet() in src/greet.ts',
  '- [ ] T003 [US1] Test greet() in tests/greet.test.ts',
  '',
  '## Phase 3: User Story 2 - Farewell (Priority: P2)',
  '',
  '- [ ] T004 [US2] Write farewell() in src/farewell.ts',
  '- [ ] T005 [US2] Test farewell() in tests/farewell.test.ts',
  '',
].join('\n');

/** Commits the set-up with the test identity, even in a sandbox that has none for ralph. */
export function commitAll(box: Sandbox, message: string): void {
  const env = { ...box.env, GIT_AUTHOR_NAME: 'Ralph Test', GIT_AUTHOR_EMAIL: 'ralph@example.test', GIT_COMMITTER_NAME: 'Ralph Test', GIT_COMMITTER_EMAIL: 'ralph@example.test' };
  execFileSync('git', ['add', '-A'], { cwd: box.repo, env });
  execFileSync('git', ['commit', '-qm', message], { cwd: box.repo, env });
}

/** A committed Spec Kit project: specs/001-demo with spec, plan and tasks (branch 001-… picks it). */
export function specKitProject(box: Sandbox, tasks = TASKS): void {
  const dir = path.join(box.repo, FEATURE);
  mkdirSync(dir, { recursive: true });
  mkdirSync(path.join(box.repo, '.specify', 'memory'), { recursive: true });
  writeFileSync(path.join(box.repo, '.specify', 'memory', 'constitution.md'), '# Constitution\n');
  writeFileSync(path.join(box.repo, '.specify', 'init-options.json'), '{"integration":"claude"}\n');
  writeFileSync(path.join(dir, 'spec.md'), '# Spec: demo\n');
  writeFileSync(path.join(dir, 'plan.md'), '# Plan: demo\n');
  writeFileSync(path.join(dir, 'tasks.md'), tasks);
  commitAll(box, 'spec kit feature');
}

export const readTasks = (box: Sandbox): string => readFileSync(path.join(box.repo, TASKS_PATH), 'utf8');
export const progressTxt = (box: Sandbox): string => readFileSync(path.join(box.repo, FEATURE, 'progress.txt'), 'utf8');
/** Iteration numbers of progress.txt's `## Iteration N - …` entries, in file order. */
export const progressIterations = (text: string): number[] => [...text.matchAll(/^## Iteration (\d+) - /gm)].map((match) => Number(match[1]));

/** A claude stream-json result line carrying `text` as the final answer. */
export const answer = (text: string): string => JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: text, num_turns: 1, total_cost_usd: 0.001 });
/** An edit that ticks a Spec Kit task the way an agent does. */
export const tick = (id: string) => ({ file: TASKS_PATH, from: `- [ ] ${id}`, to: `- [X] ${id}` });

/** A PRD report answer in claude's result line. */
export const report = (status = 'completed'): string =>
  answer(`Done.\n\n## Ralph Report\nStatus: ${status}\nSummary: worked on the story\nChanges:\n- app.txt: changed\nQuality:\n- tests: pass\nLearnings:\n- none\nCommits:\n- none\n`);

export const SNARK = {
  project: 'Demo',
  branchName: 'ralph/demo',
  description: 'demo',
  userStories: [
    { id: 'US-001', title: 'First story', description: 'd', acceptanceCriteria: ['works'], priority: 1, passes: false, notes: '' },
    { id: 'US-002', title: 'Second story', description: 'd', acceptanceCriteria: ['works'], priority: 2, passes: false, notes: '' },
  ],
};

/** A committed prd.json project whose only gate always passes. */
export function prdProject(box: Sandbox, prd: unknown = SNARK, gate = 'node -e "process.exit(0)"'): void {
  writeFileSync(path.join(box.repo, 'prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
  writeFileSync(path.join(box.repo, 'ralph.config.json'), JSON.stringify({ gate: [gate] }));
  commitAll(box, 'prd');
}

export const readPrdJson = (box: Sandbox): { userStories: Array<Record<string, unknown>> } => JSON.parse(readFileSync(path.join(box.repo, 'prd.json'), 'utf8'));

/** PRD history records (.rulebook-ralph/history/iteration-N.json), by iteration number. */
export function prdHistory(box: Sandbox): Array<Record<string, unknown>> {
  const dir = path.join(box.repo, '.rulebook-ralph', 'history');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Record<string, unknown>)
    .sort((a, b) => Number(a.iterationNumber) - Number(b.iterationNumber));
}

export const lockPath = (box: Sandbox): string => path.join(box.repo, '.ralph.lock');

/** The lock and proper-lockfile's lock folder are both gone. */
export function expectLockGone(box: Sandbox): void {
  expect(existsSync(lockPath(box)), '.ralph.lock left behind').toBe(false);
  expect(existsSync(`${lockPath(box)}.d`), '.ralph.lock.d left behind').toBe(false);
}

/** The PID of the real ralph process (tsx's wrapper is its parent), read from the lock. */
export const ralphPid = (box: Sandbox): number => Number(readFileSync(lockPath(box), 'utf8').split('\n')[0]);

/** The log folders of every session, oldest first. */
export function sessionDirs(box: Sandbox): string[] {
  const logs = path.join(box.repo, '.ralph', 'logs');
  return existsSync(logs) ? readdirSync(logs).sort().map((name) => path.join(logs, name)) : [];
}

/** The only session's log folder. */
export function sessionDir(box: Sandbox): string {
  const dirs = sessionDirs(box);
  expect(dirs).toHaveLength(1);
  return dirs[0]!;
}

/** The raw bytes of one iteration's log in the only session (`.jsonl`: stdout, `.stderr.log`: stderr). */
export const iterationLog = (box: Sandbox, iteration: number, ext: 'jsonl' | 'stderr.log' = 'jsonl'): Buffer => readFileSync(path.join(sessionDir(box), `iteration-${iteration}.${ext}`));

/** Every agent process (and grandchild) the fakes recorded is gone; waits briefly for the kernel to reap. */
export async function expectNoSurvivors(box: Sandbox): Promise<void> {
  const pids = agentPids(box);
  await waitFor(() => pids.every((pid) => !pidAlive(pid)), 3000, 'agent processes to be gone').catch(() => undefined);
  for (const pid of pids) expect(pidAlive(pid), `agent process ${pid} survived`).toBe(false);
}

/** Puts the raw-output wrapper on PATH as `name` (a tiny sh script, so no exec bit is needed on the .mjs). */
export function useRawAgent(box: Sandbox, name = 'claude'): string {
  const counts = path.join(box.root, 'raw-counts');
  const bin = path.join(box.bin, name);
  rmSync(bin, { force: true });
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${RAW_AGENT}" "$@"\n`);
  chmodSync(bin, 0o755);
  box.env.FAKE_RAW_COUNTS = counts;
  return counts;
}

/** Bytes the raw agent wrote on stdout, per call. */
export const rawCounts = (box: Sandbox): number[] => (existsSync(box.env.FAKE_RAW_COUNTS ?? '') ? readFileSync(box.env.FAKE_RAW_COUNTS!, 'utf8').split('\n').filter(Boolean).map(Number) : []);

export const b64 = (bytes: Buffer | string): string => Buffer.from(bytes).toString('base64');

/** Test options: fast backoff, short kill grace. */
export const QUICK = ['--retry-delay', '10ms', '--retry-max-delay', '50ms', '--kill-grace', '300ms'];
