// Shared setup for the Spec Kit source tests: fixture copies in temp dirs and a fake context.
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../../../../lib/config/index.ts';
import type { Deps } from '../../../../lib/deps.ts';
import type { IterationInfo, IterationResult, SourceContext, Task } from '../../../../lib/sources/types.ts';
import { tempDir } from '../../../support/temp.ts';

export const FIXTURES = fileURLToPath(new URL('../../../fixtures/speckit/', import.meta.url));

export function fixturePath(...parts: string[]): string {
  return path.join(FIXTURES, ...parts);
}

export function readFixture(...parts: string[]): string {
  return readFileSync(fixturePath(...parts), 'utf8');
}

/** A private copy of a fixture project, safe to write into. */
export function copyFixture(name: string): string {
  const dir = tempDir(`ralph-speckit-${name}-`);
  cpSync(fixturePath(name), dir, { recursive: true });
  return dir;
}

export function emptyProject(): string {
  return tempDir('ralph-speckit-empty-');
}

export interface TestContext extends SourceContext {
  warnings: string[];
  clock: { now: number };
}

/** 2026-01-18 10:15:00 UTC. */
export const START = Date.UTC(2026, 0, 18, 10, 15, 0);

export function makeContext(root: string, options: { extra?: Record<string, string>; env?: NodeJS.ProcessEnv; branch?: string } = {}): TestContext {
  const config = resolveConfig({ flags: new Map(), env: {}, file: {} });
  for (const [key, value] of Object.entries(options.extra ?? {})) config.extra.set(key, value);
  const clock = { now: START };
  const sink = { write: () => true };
  const deps: Deps = {
    cwd: root,
    env: options.env ?? {},
    now: () => clock.now,
    sleep: async () => {},
    random: () => 0.5,
    stdout: sink,
    stderr: sink,
    exec: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
  };
  const warnings: string[] = [];
  return { root, branch: options.branch, config, deps, warn: (message) => warnings.push(message), warnings, clock };
}

export function info(iteration: number, maxIterations = 10): IterationInfo {
  return { iteration, maxIterations, sessionId: 'run-1' };
}

export function result(task: Task, iteration: number, overrides: Partial<IterationResult> = {}): IterationResult {
  return {
    iteration,
    task,
    kind: 'no_change',
    reason: 'the task source shows no finished task',
    tasksDone: [],
    filesChanged: [],
    claimedComplete: false,
    agentText: '',
    durationMs: 65_000,
    ...overrides,
  };
}
