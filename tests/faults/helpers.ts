// Shared set-up for the fault-injection suite: projects for each mode, the raw-output agent, and the checks
// every fault ends with (exit code, task source, lock, logs, no surviving agent process).
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { agentPids, pidAlive, waitFor, type Sandbox } from '../e2e/helpers.ts';
import { FEATURE, TASKS_PATH, specKitProject as makeSpecKitProject } from '../e2e/projects.ts';

export * from '../e2e/helpers.ts';
export * from '../e2e/projects.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const RAW_AGENT = path.join(HERE, 'raw-agent.mjs');

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

/** The fault suite's Spec Kit project (five tasks unless told otherwise). */
export function specKitProject(box: Sandbox, tasks = TASKS): void {
  makeSpecKitProject(box, tasks);
}

export const readTasks = (box: Sandbox): string => readFileSync(path.join(box.repo, TASKS_PATH), 'utf8');
export const progressTxt = (box: Sandbox): string => readFileSync(path.join(box.repo, FEATURE, 'progress.txt'), 'utf8');
/** Iteration numbers of progress.txt's `## Iteration N - …` entries, in file order. */
export const progressIterations = (text: string): number[] => [...text.matchAll(/^## Iteration (\d+) - /gm)].map((match) => Number(match[1]));

export const readPrdJson = (box: Sandbox): { userStories: Array<Record<string, unknown>> } => JSON.parse(readFileSync(path.join(box.repo, 'prd.json'), 'utf8'));

export const lockPath = (box: Sandbox): string => path.join(box.repo, '.ralph.lock');

/** The lock and proper-lockfile's lock folder are both gone. */
export function expectLockGone(box: Sandbox): void {
  expect(existsSync(lockPath(box)), '.ralph.lock left behind').toBe(false);
  expect(existsSync(`${lockPath(box)}.d`), '.ralph.lock.d left behind').toBe(false);
}

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
