// The run's summary, however it ended: what the session record, both reports, --json and the on-exit hook
// say. Counted from the iteration records as they stand; the loop's own figures come in `partial`.
import type { IterationRecord, RunSummary } from '../events.ts';
import { agentTotals, type AgentRoster } from '../iteration/agent-roster.ts';
import { questionSummaries } from '../questions/index.ts';
import type { Prepared } from './prepare.ts';

export interface SummaryContext {
  sessionId: string;
  startedAt: number;
  now: () => number;
  /** The run's records, appended to as iterations end. */
  records: readonly IterationRecord[];
  /** What the run prepared and the agents it ran, once known. */
  prepared: () => Prepared | undefined;
  roster: () => AgentRoster | undefined;
}

export type Summarize = (status: RunSummary['status'], exitCode: number, message: string, partial?: Partial<RunSummary>) => RunSummary;

export function summarizer(ctx: SummaryContext): Summarize {
  // The questions of the run's tasks still open as it ends (waiting, or answered and not yet worked on).
  const questionsField = (): Partial<RunSummary> => {
    const prepared = ctx.prepared();
    const questions = prepared ? questionSummaries(prepared.root, prepared.source) : [];
    return questions.length > 0 ? { questions } : {};
  };
  return (status, exitCode, message, partial) => {
    const { records, startedAt } = ctx;
    const prepared = ctx.prepared();
    const roster = ctx.roster();
    const endedAt = ctx.now();
    return {
      status,
      exitCode,
      message,
      sessionId: ctx.sessionId,
      source: prepared?.source.name ?? 'unknown',
      agent: prepared?.agent.name ?? 'unknown',
      iterations: records.length,
      tasksCompleted: records.reduce((sum, item) => sum + item.tasksDone.length, 0),
      tasksRemaining: 0,
      tasksSkipped: 0,
      skippedTaskIds: [],
      startedAt: new Date(startedAt).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs: endedAt - startedAt,
      costUsd: records.reduce((sum, item) => sum + item.costUsd, 0),
      records: [...records],
      ...(roster ? { agents: agentTotals([...records], roster) } : {}),
      ...partial,
      ...questionsField(),
      success: exitCode === 0,
      completedCount: records.reduce((sum, item) => sum + item.tasksDone.length, 0),
      failedCount: records.filter((item) => item.outcome === 'fail').length,
    };
  };
}

/**
 * The summary of a run whose loop did not end it (interrupted, failed): what is left comes from the source,
 * all of it when the run could not start.
 */
export async function summarizeLeft(summarize: Summarize, prepared: Prepared | undefined, status: RunSummary['status'], exitCode: number, message: string): Promise<RunSummary> {
  const left = prepared ? await prepared.source.snapshot().catch(() => undefined) : undefined;
  const skippedTaskIds = left?.skipped?.map((task) => task.id) ?? [];
  return summarize(status, exitCode, message, left ? { tasksRemaining: left.remaining.length, tasksSkipped: skippedTaskIds.length, skippedTaskIds } : {});
}
