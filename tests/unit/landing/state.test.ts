// The record of a failed iteration with several hosts goes on the shared head like a landing: refused
// because another host landed first ("moved"), it is written again on the new head and published again; a
// claim taken over ("lost") ends it. Driven step by step with the dock's answers, no timing. A number another
// host's record took meanwhile is never written twice: the record and the commit's trailer take the next one.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git } from '../../../lib/repo/git.ts';
import { tempDir } from '../../support/temp.ts';
import type { Dock, Published } from '../../../lib/landing/types.ts';
import { taskState } from '../../../lib/landing/state.ts';
import type { IterationInfo, IterationResult, Task, TaskSource } from '../../../lib/sources/types.ts';

const task: Task = { id: 'US-001', title: 'Story 1', status: 'open' };
const info: IterationInfo = { iteration: 3, maxIterations: 10, sessionId: 's' };
const result = { iteration: 3, task, kind: 'fail', reason: 'tests failed', tasksDone: [], filesChanged: [], claimedComplete: false, agentText: '', durationMs: 1 } as unknown as IterationResult;

function harness(answers: Published['kind'][], last = 0) {
  const calls: string[] = [];
  let heads = 0;
  const dock = {
    remote: { name: 'origin', branch: 'b', host: 'h', hostId: 'h-1', claims: 'refs' },
    target: async () => (calls.push('target'), `head-${++heads}`),
    publish: async () => {
      const kind = answers.shift() ?? 'landed';
      calls.push(`publish:${kind}`);
      return kind === 'lost' ? { kind, why: 'taken over' } : { kind };
    },
    rewind: async (to: string) => void calls.push(`rewind:${to}`),
  } as unknown as Dock;
  const source = {
    lastIteration: async () => last,
    settle: async (settled: IterationResult, at: IterationInfo) => void calls.push(`settle:${at.iteration}${settled.iteration === at.iteration ? '' : ` (result ${settled.iteration})`}`),
  } as unknown as TaskSource;
  const main = { changedUnder: async () => [], cwd: '/repo' } as unknown as Git;
  const state = taskState({ dock, source, main, stateFiles: () => ['prd.json'], worker: 1, leftOut: () => undefined });
  return { state, calls };
}

describe('a failed iteration recorded on the shared head', () => {
  it('another host landed first (moved): rewound, written again on the new head, published again', async () => {
    const { state, calls } = harness(['moved', 'landed']);
    await state.recordFailure(task, result, info);
    expect(calls).toEqual(['target', 'settle:3', 'publish:moved', 'rewind:head-1', 'target', 'settle:3', 'publish:landed']);
  });

  it('its claim taken over (lost): rewound, and not written again', async () => {
    const { state, calls } = harness(['lost']);
    await state.recordFailure(task, result, info);
    expect(calls).toEqual(['target', 'settle:3', 'publish:lost', 'rewind:head-1']);
  });
});

describe('a number another host recorded meanwhile', () => {
  it('the source records the iteration under the next free number, in the result and the info alike', async () => {
    // The shared head's progress log ends at iteration 3 (another host's): this host's iteration 3 becomes 4.
    // (Spec Kit numbers its progress.txt entry by the result, PRD its history record by the info.)
    const { state, calls } = harness(['landed'], 3);
    const at = await state.settleOn(result, info);
    expect(at.iteration).toBe(4);
    expect(calls).toEqual(['settle:4']);
  });

  it("ralph's commit of the work, amended with the state, says the new number in its Ralph-Iteration trailer", async () => {
    const dir = tempDir('ralph-state-');
    const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' });
    git('init', '-q');
    git('config', 'user.name', 'T');
    git('config', 'user.email', 't@example.test');
    writeFileSync(path.join(dir, 'work.txt'), 'done\n');
    git('add', 'work.txt');
    git('commit', '-q', '-m', 'ralph: T003 Part T003\n\nRalph-Iteration: 3\nRalph-Task: T003\nRalph-Worker: w1\nRalph-Host: host2');
    writeFileSync(path.join(dir, 'progress.txt'), '## Iteration 4 - now\n');
    const dock = { remote: { name: 'origin', branch: 'b', host: 'host2', hostId: 'h-2', claims: 'refs' } } as unknown as Dock;
    const main = new Git(dir);
    const state = taskState({ dock, source: {} as TaskSource, main, stateFiles: () => ['progress.txt'], worker: 1, leftOut: () => undefined });
    await state.commit('(unused when amending)', true, 4);
    expect(git('log', '--format=%B')).toBe('ralph: T003 Part T003\n\nRalph-Iteration: 4\nRalph-Task: T003\nRalph-Worker: w1\nRalph-Host: host2\n\n');
    expect(git('show', '--name-only', '--format=', 'HEAD').split('\n').filter(Boolean).sort()).toEqual(['progress.txt', 'work.txt']);
  });
});
