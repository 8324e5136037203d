// The no-progress breaker: a pure decision over the session's iteration records. A loop that finishes no
// task and changes nothing for several iterations in a row is dead; one that keeps changing files without
// finishing its task is making progress, but only up to a limit of iterations on that one task.
import type { IterationRecord } from '../events.ts';
import type { TaskWords } from '../sources/types.ts';

export interface BreakerLimits {
  /** Iterations in a row that finish no task and change nothing before the run stops; 0 turns it off. */
  noProgress: number;
  /** Iterations in a row on one task without finishing it (even with changes); 0 turns it off. */
  taskIterations: number;
}

export const DEFAULT_BREAKER: BreakerLimits = { noProgress: 5, taskIterations: 10 };

export type BreakerRecord = Pick<IterationRecord, 'taskId' | 'taskTitle' | 'outcome' | 'reason' | 'changed'>;

export type BreakerDecision = { kind: 'continue' } | { kind: 'stop'; why: 'no_progress' | 'task_limit'; taskIds: string[]; reason: string };

/** An iteration finished a task the source and ralph both accept. */
function finished(record: BreakerRecord): boolean {
  return record.outcome === 'pass';
}

/** Changed files or moved HEAD (outside the source's own task state); a missing flag counts as a change. */
function progressed(record: BreakerRecord): boolean {
  return finished(record) || record.changed !== false;
}

/** `bead ws-1.2 "Title" was tried 5 times`, or `bead A "…" (3 times) and bead B "…" (2 times) were tried`. */
function tried(records: readonly BreakerRecord[], words: TaskWords): { ids: string[]; text: string } {
  const counts = new Map<string, { title: string; times: number }>();
  for (const record of records) {
    const entry = counts.get(record.taskId) ?? { title: record.taskTitle, times: 0 };
    entry.times += 1;
    counts.set(record.taskId, entry);
  }
  const times = (count: number): string => `${count} time${count === 1 ? '' : 's'}`;
  const named = [...counts].map(([id, entry]) => ({ name: `${words.task} ${id} "${entry.title}"`, times: entry.times }));
  const text =
    named.length === 1
      ? `${named[0]!.name} was tried ${times(named[0]!.times)}`
      : `${named.map((entry) => `${entry.name} (${times(entry.times)})`).join(', ').replace(/, ([^,]*)$/, ' and $1')} were tried`;
  return { ids: [...counts.keys()], text };
}

/** The last distinct reasons, newest last, so the message says what kept going wrong. */
function lastReasons(records: readonly BreakerRecord[], count = 2): string {
  const reasons: string[] = [];
  for (const record of [...records].reverse()) {
    if (record.reason && !reasons.includes(record.reason)) reasons.unshift(record.reason);
    if (reasons.length >= count) break;
  }
  return reasons.join('; ') || 'none given';
}

/**
 * Whether the loop goes on, from this session's records (oldest first) and the limits. An iteration whose
 * agent asked a person a question is left out: neither progress nor a dead loop, and it breaks no run.
 */
export function decideBreaker(all: readonly BreakerRecord[], limits: BreakerLimits, words: TaskWords = { task: 'task', finished: 'finished' }): BreakerDecision {
  const records = all.filter((record) => record.outcome !== 'question');
  if (limits.noProgress > 0 && records.length >= limits.noProgress) {
    const window = records.slice(-limits.noProgress);
    if (window.every((record) => !progressed(record))) {
      const { ids, text } = tried(window, words);
      return {
        kind: 'stop',
        why: 'no_progress',
        taskIds: ids,
        reason:
          `no progress in ${window.length} iterations in a row (no ${words.task} ${words.finished}, no file changed, no commit): ` +
          `${text} and never ${words.finished}; last reason: ${lastReasons(window)}; stopped by --max-no-progress ${limits.noProgress}`,
      };
    }
  }
  if (limits.taskIterations > 0 && records.length >= limits.taskIterations) {
    const window = records.slice(-limits.taskIterations);
    const taskId = window[0]!.taskId;
    if (window.every((record) => record.taskId === taskId && !finished(record))) {
      return {
        kind: 'stop',
        why: 'task_limit',
        taskIds: [taskId],
        reason:
          `${words.task} ${taskId} "${window[0]!.taskTitle}" was worked on ${window.length} iterations in a row and never ${words.finished}, although files changed; ` +
          `last reason: ${lastReasons(window)}; stopped by --max-task-iterations ${limits.taskIterations} (split the ${words.task} or raise the limit)`,
      };
    }
  }
  return { kind: 'continue' };
}
