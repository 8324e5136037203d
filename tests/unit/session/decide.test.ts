import { describe, expect, it } from 'vitest';
import { decideNext } from '../../../lib/session/decide.ts';
import { decideOutcome, tasksFinished } from '../../../lib/iteration/outcome.ts';
import type { Snapshot, Task } from '../../../lib/sources/types.ts';

const task = (id: string, status = 'open'): Task => ({ id, title: id, status });
const snap = (ready: string[], remaining: string[], done: string[] = []): Snapshot => ({ ready: ready.map((id) => task(id)), remaining: remaining.map((id) => task(id)), done: done.map((id) => task(id, 'closed')) });

describe('decideNext', () => {
  const limits = { maxIterations: 3 };
  it.each([
    ['complete when nothing remains', snap([], []), 0, { kind: 'complete' }],
    ['complete beats the limit', snap([], [], ['a']), 3, { kind: 'complete' }],
    ['stuck when work remains but none is ready', snap([], ['a']), 0, { kind: 'stuck' }],
    ['limit after max iterations', snap(['a'], ['a']), 3, { kind: 'limit', why: 'iterations' }],
    ['run otherwise', snap(['a'], ['a', 'b']), 2, { kind: 'run' }],
    ['stuck, not complete, when only skipped tasks are left', { ...snap([], [], ['a']), skipped: [task('b', 'skipped')] }, 0, { kind: 'stuck' }],
    ['runs the others while a task is skipped', { ...snap(['c'], ['c'], ['a']), skipped: [task('b', 'skipped')] }, 0, { kind: 'run' }],
    ['waiting, not stuck, when only tasks waiting for answers are left', { ...snap([], ['b']), waiting: [task('b')] }, 0, { kind: 'waiting' }],
    ['waiting when the others wait on a task waiting for an answer', { ...snap([], ['b', 'c']), waiting: [task('b')] }, 0, { kind: 'waiting' }],
    ['waiting before the iteration limit', { ...snap([], ['b']), waiting: [task('b')] }, 3, { kind: 'waiting' }],
    ['runs the others while a task waits for an answer', { ...snap(['c'], ['b', 'c']), waiting: [task('b')] }, 0, { kind: 'run' }],
  ])('%s', (_name, snapshot, iterations, expected) => {
    expect(decideNext(snapshot, { iterations, costUsd: 0 }, limits)).toEqual(expected);
  });

  it('stops on the cost budget', () => {
    expect(decideNext(snap(['a'], ['a']), { iterations: 1, costUsd: 2.5 }, { maxIterations: 9, maxCost: 2 })).toEqual({ kind: 'limit', why: 'cost' });
  });
});

describe('decideOutcome', () => {
  it('passes only when the source shows a finished task', () => {
    expect(decideOutcome({ agent: { kind: 'ok' }, exhausted: false, tasksDone: ['a'] }).outcome).toBe('pass');
    expect(decideOutcome({ agent: { kind: 'ok' }, exhausted: false, tasksDone: [] }).outcome).toBe('no_change');
  });

  it('fails when the agent failed or the gates failed', () => {
    expect(decideOutcome({ agent: { kind: 'transient', reason: '429' }, exhausted: true, tasksDone: [] })).toEqual({ outcome: 'fail', reason: 'agent still failing after retries: 429' });
    expect(decideOutcome({ agent: { kind: 'timeout', reason: 'idle' }, exhausted: false, tasksDone: ['a'] }).outcome).toBe('fail');
    expect(decideOutcome({ agent: { kind: 'ok' }, exhausted: false, tasksDone: ['a'], gatesPassed: false }).outcome).toBe('fail');
  });

  it('an agent that ended well, finished nothing and asked a question asked: neither fail nor no change', () => {
    expect(decideOutcome({ agent: { kind: 'ok' }, exhausted: false, tasksDone: [], question: '404 or 410?' })).toEqual({ outcome: 'question', reason: 'asked: 404 or 410?' });
    // A finished task wins over a question; a failed run is a failure whatever it said.
    expect(decideOutcome({ agent: { kind: 'ok' }, exhausted: false, tasksDone: ['a'], question: '404 or 410?' }).outcome).toBe('pass');
    expect(decideOutcome({ agent: { kind: 'transient', reason: '500' }, exhausted: true, tasksDone: [], question: '404 or 410?' }).outcome).toBe('fail');
  });

  it('lists the tasks finished between two snapshots', () => {
    expect(tasksFinished(snap(['a'], ['a', 'b'], ['z']), snap(['b'], ['b'], ['z', 'a']))).toEqual(['a']);
  });
});
