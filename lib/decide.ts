import type { Classification } from './agents/types.ts';
import type { IterationOutcome } from './events.ts';
import type { Snapshot } from './sources/types.ts';

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

/** Ids that were not done before the iteration and are done after it. */
export function tasksFinished(before: Snapshot, after: Snapshot): string[] {
  const open = new Set(before.remaining.map((task) => task.id));
  return after.done.filter((task) => open.has(task.id)).map((task) => task.id);
}

/**
 * An iteration passes only when the task source shows progress (and the gates, when any ran, pass);
 * the agent's word alone never counts. An agent that ended well, finished nothing and asked a `question`
 * stopped for a person: neither a failure nor a pass.
 */
export function decideOutcome(input: {
  agent: Classification;
  exhausted: boolean;
  tasksDone: string[];
  gatesPassed?: boolean;
  question?: string;
}): { outcome: IterationOutcome; reason: string } {
  if (input.agent.kind !== 'ok') {
    const reason = input.agent.reason;
    return { outcome: 'fail', reason: input.exhausted ? `agent still failing after retries: ${reason}` : reason };
  }
  if (input.question !== undefined && input.tasksDone.length === 0) return { outcome: 'question', reason: `asked: ${input.question}` };
  if (input.gatesPassed === false) return { outcome: 'fail', reason: 'quality gates failed' };
  if (input.tasksDone.length > 0) return { outcome: 'pass', reason: `completed ${input.tasksDone.join(', ')}` };
  return { outcome: 'no_change', reason: 'the task source shows no finished task' };
}
