// The record of a failed iteration with several hosts goes on the shared head like a landing: refused
// because another host landed first ("moved"), it is written again on the new head and published again; a
// claim taken over ("lost") ends it. Driven step by step with the dock's answers, no timing.
import { describe, expect, it } from 'vitest';
import type { Dock, Published } from '../../../lib/landing/types.ts';
import { taskState } from '../../../lib/landing/state.ts';
import type { Git } from '../../../lib/repo/git.ts';
import type { IterationInfo, IterationResult, Task, TaskSource } from '../../../lib/sources/types.ts';

const task: Task = { id: 'US-001', title: 'Story 1', status: 'open' };
const info: IterationInfo = { iteration: 3, maxIterations: 10, sessionId: 's' };
const result = { iteration: 3, task, kind: 'fail', reason: 'tests failed', tasksDone: [], filesChanged: [], claimedComplete: false, agentText: '', durationMs: 1 } as unknown as IterationResult;

function harness(answers: Published['kind'][]) {
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
    lastIteration: async () => 0,
    settle: async (_result: IterationResult, at: IterationInfo) => void calls.push(`settle:${at.iteration}`),
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
