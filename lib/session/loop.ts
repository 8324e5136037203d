// The session's state machine: look at the source, decide (done, stuck, a limit, or the next task), run
// one iteration, record it; until something ends the run.
import { mkdirSync } from 'node:fs';
import type { Agent } from '../agents/types.ts';
import type { Config } from '../config.ts';
import { decideNext } from '../decide.ts';
import type { Deps } from '../deps.ts';
import { abortError, ExitCode } from '../errors.ts';
import type { EventBus, IterationRecord, RunStatus, RunSummary } from '../events.ts';
import type { GateResult } from '../gates.ts';
import type { Git } from '../git.ts';
import { runIteration } from '../iteration/index.ts';
import type { UsageWait } from '../iteration/usage-wait.ts';
import type { IterationInfo, Snapshot, Task, TaskSource } from '../sources/types.ts';

export interface LoopContext {
  root: string;
  config: Config;
  deps: Deps;
  source: TaskSource;
  agent: Agent;
  /** Agent profile after source defaults were applied. */
  profile?: string;
  git: Git;
  bus: EventBus;
  signal: AbortSignal;
  sessionId: string;
  logDir: string;
  maxIterations: number;
  usageWait: UsageWait;
  /** Runs ralph's quality gates after an agent run; undefined when none are configured. */
  gates?: (iteration: number) => Promise<GateResult[]>;
  /** Commits a passing iteration's work (commit policy on); returns the commit, undefined when nothing changed. */
  commit?: (task: Task, iteration: number) => Promise<string | undefined>;
  /** The records so far, kept by the caller so an interruption can still report them. */
  records: IterationRecord[];
}

export type LoopResult = Omit<RunSummary, 'startedAt' | 'endedAt' | 'durationMs' | 'sessionId' | 'source' | 'agent'>;

/** The loop: snapshot, decide, run one iteration, record; until done or a limit. */
export async function runLoop(ctx: LoopContext): Promise<LoopResult> {
  const { source, bus } = ctx;
  mkdirSync(ctx.logDir, { recursive: true });
  const firstIteration = ((await source.lastIteration?.()) ?? 0) + 1;
  let costUsd = 0;
  const finish = (status: RunStatus, exitCode: number, message: string, snapshot: Snapshot | undefined): LoopResult => ({
    status,
    exitCode,
    message,
    iterations: ctx.records.length,
    tasksCompleted: ctx.records.reduce((sum, item) => sum + item.tasksDone.length, 0),
    tasksRemaining: snapshot?.remaining.length ?? 0,
    costUsd,
    records: ctx.records,
  });

  // HEAD as the next iteration starts: read once, then carried from each iteration's end.
  let head = await ctx.git.head();
  for (let count = 0; ; count += 1) {
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    const before = await source.snapshot();
    const next = decideNext(before, { iterations: count, costUsd }, { maxIterations: ctx.maxIterations, maxCost: ctx.config.maxCost });
    if (next.kind === 'complete') {
      const skipped = before.skipped?.length ? `; ${before.skipped.length} skipped: ${before.skipped.map((task) => task.id).join(', ')}` : '';
      const what = count === 0 ? `nothing to do: every task of ${source.describe()} is already complete` : `all tasks of ${source.describe()} are complete`;
      return finish('completed', ExitCode.complete, `${what}${skipped}`, before);
    }
    if (next.kind === 'stuck') return finish('failed', ExitCode.failure, source.explainStuck(before), before);
    if (next.kind === 'limit') {
      const why = next.why === 'cost' ? `cost budget of $${ctx.config.maxCost} spent ($${costUsd.toFixed(4)})` : `iteration limit of ${ctx.maxIterations} reached`;
      return finish('limit_reached', ExitCode.limit, `${why} with ${before.remaining.length} tasks remaining`, before);
    }

    const task = before.ready[0]!;
    const info: IterationInfo = { iteration: firstIteration + count, maxIterations: firstIteration - 1 + ctx.maxIterations, sessionId: ctx.sessionId, head };
    const output = await runIteration({ ...ctx, cwd: ctx.root }, task, info, before);
    costUsd += output.run.costUsd;
    if (output.vanished) {
      // All tasks vanished (the agent emptied the file?): that is not completion.
      return finish('failed', ExitCode.failure, `the task source lists no tasks any more after iteration ${info.iteration} (${source.describe()}); check what the agent did to it`, output.after);
    }
    ctx.records.push(output.record);
    head = output.head;
    bus.emit({ type: 'iteration_end', record: output.record });
    if (output.record.claimedComplete && output.after.remaining.length > 0) {
      bus.emit({ type: 'warning', message: `premature completion promise in iteration ${info.iteration}: ${output.after.remaining.length} tasks remain; going on` });
    }
    if (output.run.exhausted) {
      const classification = output.run.classification;
      return finish('failed', ExitCode.failure, `agent still failing after ${output.run.attempts} attempts: ${'reason' in classification ? classification.reason : 'unknown'}`, output.after);
    }
  }
}
