// An iteration's verdict: which tasks it finished and whether it passed. Pure.
import type { Classification } from '../agents/types.ts';
import type { IterationOutcome } from '../events.ts';
import type { Snapshot } from '../sources/types.ts';

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
