// What the loop does next, from the source's snapshot and the budgets. Pure.
import type { Snapshot } from '../sources/types.ts';

export type NextStep =
  | { kind: 'complete' }
  | { kind: 'stuck' }
  /** Nothing can start, and tasks wait for answers to their agents' questions. */
  | { kind: 'waiting' }
  | { kind: 'limit'; why: 'iterations' | 'cost' }
  | { kind: 'run' };

/**
 * What the loop does next, from the source's snapshot and the budgets. Complete only when nothing is left:
 * a task set aside after repeated failures is still open work, so it ends the run as stuck, never complete;
 * a task waiting for an answer is still remaining, and when nothing else can start the run ends waiting.
 */
export function decideNext(snapshot: Snapshot, done: { iterations: number; costUsd: number }, limits: { maxIterations: number; maxCost?: number }): NextStep {
  if (snapshot.remaining.length === 0 && (snapshot.skipped?.length ?? 0) === 0) return { kind: 'complete' };
  if (snapshot.ready.length === 0) return (snapshot.waiting?.length ?? 0) > 0 ? { kind: 'waiting' } : { kind: 'stuck' };
  if (done.iterations >= limits.maxIterations) return { kind: 'limit', why: 'iterations' };
  if (limits.maxCost !== undefined && done.costUsd >= limits.maxCost) return { kind: 'limit', why: 'cost' };
  return { kind: 'run' };
}
