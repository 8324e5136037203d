import { describe, expect, it } from 'vitest';
import { decideBreaker, DEFAULT_BREAKER, type BreakerRecord } from '../../../lib/session/breaker.ts';

/** `idle` finished nothing and changed nothing; `work` changed files without finishing; `pass` finished. */
type Kind = 'idle' | 'work' | 'pass' | 'fail-idle';

function rec(kind: Kind, taskId = 'T1', reason?: string): BreakerRecord {
  switch (kind) {
    case 'idle':
      return { taskId, taskTitle: `title ${taskId}`, outcome: 'no_change', reason: reason ?? 'the task source shows no finished task', changed: false };
    case 'fail-idle':
      return { taskId, taskTitle: `title ${taskId}`, outcome: 'fail', reason: reason ?? 'timed out', changed: false };
    case 'work':
      return { taskId, taskTitle: `title ${taskId}`, outcome: 'no_change', reason: reason ?? 'the task source shows no finished task', changed: true };
    case 'pass':
      return { taskId, taskTitle: `title ${taskId}`, outcome: 'pass', reason: `completed ${taskId}`, changed: true };
  }
}

const limits = { noProgress: 3, taskIterations: 4 };

describe('decideBreaker', () => {
  it.each<[string, BreakerRecord[], 'continue' | 'no_progress' | 'task_limit']>([
    ['no records', [], 'continue'],
    ['fewer idle iterations than the limit', [rec('idle'), rec('idle')], 'continue'],
    ['idle iterations up to the limit', [rec('idle'), rec('idle'), rec('idle')], 'no_progress'],
    ['failed iterations that changed nothing count as idle', [rec('fail-idle'), rec('idle'), rec('fail-idle')], 'no_progress'],
    ['idle iterations spread over several tasks', [rec('idle', 'T1'), rec('idle', 'T2'), rec('idle', 'T3')], 'no_progress'],
    ['a change inside the window resets it', [rec('idle', 'T1'), rec('work', 'T2'), rec('idle', 'T1'), rec('idle', 'T1')], 'continue'],
    ['a passing iteration inside the window resets it', [rec('idle'), rec('idle'), rec('pass', 'T0'), rec('idle'), rec('idle')], 'continue'],
    ['idle iterations after earlier progress', [rec('pass', 'T0'), rec('work'), rec('idle'), rec('idle'), rec('idle')], 'no_progress'],
    ['file changes on one task are progress below the per-task limit', [rec('work'), rec('work'), rec('work')], 'continue'],
    ['file changes on one task stop at the per-task limit', [rec('work'), rec('work'), rec('idle'), rec('work')], 'task_limit'],
    ['the per-task count restarts when the task finishes', [rec('work'), rec('work'), rec('pass'), rec('work'), rec('work'), rec('work')], 'continue'],
    ['the per-task count restarts on another task', [rec('work', 'T1'), rec('work', 'T1'), rec('work', 'T2'), rec('work', 'T1'), rec('work', 'T1'), rec('work', 'T1')], 'continue'],
    ['a rejected iteration (fail with changes) counts toward the per-task limit', [rec('work'), rec('work'), { ...rec('work'), outcome: 'fail', reason: 'the reviewer rejected' }, rec('work')], 'task_limit'],
    ['questions are left out: they neither count toward the limit…', [rec('idle'), { ...rec('idle'), outcome: 'question', reason: 'asked: 404 or 410?' }, rec('idle')], 'continue'],
    ['…nor break a run of idle iterations', [rec('idle'), rec('idle'), { ...rec('idle', 'T2'), outcome: 'question', reason: 'asked: ?' }, rec('idle')], 'no_progress'],
    ['questions alone never stop the loop', Array.from({ length: 6 }, (_, index) => ({ ...rec('idle', `T${index}`), outcome: 'question' as const, reason: 'asked: ?' })), 'continue'],
    ['questions do not count toward the per-task limit', [rec('work'), rec('work'), { ...rec('work'), outcome: 'question', reason: 'asked: ?' }, rec('work')], 'continue'],
    ['records without the changed flag (older records) count as changed', [{ ...rec('idle'), changed: undefined }, rec('idle'), rec('idle')], 'continue'],
  ])('%s', (_name, records, expected) => {
    const decision = decideBreaker(records, limits);
    expect(decision.kind === 'stop' ? decision.why : decision.kind).toBe(expected);
  });

  it('a limit of 0 turns that rule off', () => {
    expect(decideBreaker([rec('idle'), rec('idle'), rec('idle')], { noProgress: 0, taskIterations: 4 }).kind).toBe('continue');
    expect(decideBreaker([rec('work'), rec('work'), rec('work'), rec('work')], { noProgress: 3, taskIterations: 0 }).kind).toBe('continue');
  });

  it('names the task tried, in the source\'s words, and the last reasons', () => {
    const decision = decideBreaker([rec('idle', 'ws-1.2', 'no bead closed'), rec('idle', 'ws-1.2', 'agent timed out'), rec('idle', 'ws-1.2', 'agent timed out')], limits, { task: 'bead', finished: 'closed' });
    expect(decision).toMatchObject({ kind: 'stop', why: 'no_progress', taskIds: ['ws-1.2'] });
    if (decision.kind !== 'stop') throw new Error('expected a stop');
    expect(decision.reason).toContain('no bead closed, no file changed, no commit');
    expect(decision.reason).toContain('bead ws-1.2 "title ws-1.2" was tried 3 times and never closed');
    expect(decision.reason).toContain('last reason: no bead closed; agent timed out');
    expect(decision.reason).toContain('--max-no-progress 3');
  });

  it('names every task of the window with its count', () => {
    const decision = decideBreaker([rec('idle', 'T1'), rec('idle', 'T2'), rec('idle', 'T1')], limits);
    if (decision.kind !== 'stop') throw new Error('expected a stop');
    expect(decision.taskIds).toEqual(['T1', 'T2']);
    expect(decision.reason).toContain('task T1 "title T1" (2 times) and task T2 "title T2" (1 time) were tried and never finished');
  });

  it('says which task ate the per-task budget', () => {
    const decision = decideBreaker([rec('work', 'T7'), rec('work', 'T7'), rec('work', 'T7'), rec('work', 'T7')], limits, { task: 'task', finished: 'checked off' });
    if (decision.kind !== 'stop') throw new Error('expected a stop');
    expect(decision.why).toBe('task_limit');
    expect(decision.reason).toContain('task T7 "title T7" was worked on 4 iterations in a row and never checked off, although files changed');
    expect(decision.reason).toContain('--max-task-iterations 4');
  });

  it('defaults stop a dead loop within 5 iterations and let a task take 10 iterations of real work', () => {
    const idle = Array.from({ length: 5 }, () => rec('idle'));
    expect(decideBreaker(idle.slice(0, 4), DEFAULT_BREAKER).kind).toBe('continue');
    expect(decideBreaker(idle, DEFAULT_BREAKER).kind).toBe('stop');
    const work = Array.from({ length: 10 }, () => rec('work'));
    expect(decideBreaker(work.slice(0, 9), DEFAULT_BREAKER).kind).toBe('continue');
    expect(decideBreaker(work, DEFAULT_BREAKER)).toMatchObject({ kind: 'stop', why: 'task_limit' });
  });
});
