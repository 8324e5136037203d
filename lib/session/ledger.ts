// What the loop decides: the run's counts and budget, whether another iteration may start, what an ended
// iteration means for the run (its record, a failure that ends the run, a rerun, the breaker), and, when
// nothing runs, whether the run ends, a pass of its own comes next (a hook, a converge pass) or tasks start.
import { ClaimLostError, errorMessage, ExitCode, StopRequestedError } from '../errors.ts';
import type { RunStatus } from '../events.ts';
import { convergeTask } from '../iteration/converge.ts';
import { hookTask } from '../iteration/hook-pass.ts';
import type { RemoteTarget } from '../landing/types.ts';
import { count, describeTasksLeft } from '../progress/tasks-left.ts';
import { describeWaiting } from '../questions/index.ts';
import type { HookPassInfo, Snapshot, Task } from '../sources/types.ts';
import { decideBreaker } from './breaker.ts';
import { decideNext } from './decide.ts';
import type { HookRuns } from './hooks.ts';
import type { Ended, LoopContext } from './loop-context.ts';
import { endLoop, type LoopResult } from './loop-end.ts';
import type { Reruns } from './reruns.ts';

/** A pass the loop starts on its own when nothing runs: the project's hook, or a converge pass. */
export type Pass = { task: Task; pass?: number; hook?: HookPassInfo };

/** What the loop does when nothing runs: end the run, start passes of its own, or go on picking tasks. */
export type IdleStep = { kind: 'end'; result: LoopResult } | { kind: 'passes'; passes: Pass[] } | { kind: 'tasks' };

type LedgerContext = Pick<LoopContext, 'root' | 'config' | 'source' | 'bus' | 'usageWait' | 'maxIterations' | 'records' | 'breaker' | 'convergence'>;

export class Ledger {
  costUsd = 0;
  /** Iterations started, for the budget. */
  started = 0;
  /** Iterations numbered (a lost claim is started, not numbered). */
  numbered = 0;
  /** Set when the run must end as failed once the iterations under way have ended. */
  failure: string | undefined;
  /** The first error an iteration ended with: it stops the others and ends the run. */
  firstError: unknown;
  lastSnapshot: Snapshot | undefined;
  /** Tasks done when this run first looked (several hosts: who landed what). */
  doneAtStart: number | undefined;
  /** A converge or hook pass runs: nothing starts beside it. */
  alone = false;

  constructor(
    private readonly ctx: LedgerContext,
    /** The number of this run's first iteration (the session's numbering goes on across runs). */
    readonly firstIteration: number,
    private readonly reruns: Reruns,
    readonly hooks: HookRuns,
    private readonly remote: RemoteTarget | undefined,
  ) {}

  /** Whether another iteration may start now, whatever the task. */
  mayStart(signal: AbortSignal): boolean {
    const { ctx } = this;
    if (signal.aborted || this.failure !== undefined || this.alone) return false;
    if (this.started >= ctx.maxIterations) return false;
    if (ctx.config.maxCost !== undefined && this.costUsd >= ctx.config.maxCost) return false;
    // No new agent while the session waits for a usage-limit reset, nor beside a task that must run alone.
    if (ctx.usageWait.until !== undefined) return false;
    return !this.reruns.blocking;
  }

  describeLimit(): string {
    const { maxCost } = this.ctx.config;
    return maxCost !== undefined && this.costUsd >= maxCost ? `cost budget of $${maxCost} spent ($${this.costUsd.toFixed(4)})` : `iteration limit of ${this.ctx.maxIterations} reached`;
  }

  finish(status: RunStatus, exitCode: number, message: string, snapshot: Snapshot | undefined): LoopResult {
    const { ctx, hooks } = this;
    return {
      ...endLoop({ status, exitCode, message: status === 'completed' ? `${message}${hooks.note()}` : message, snapshot, records: ctx.records, costUsd: this.costUsd, convergence: ctx.convergence, remote: this.remote, doneAtStart: this.doneAtStart }),
      ...hooks.summary(),
    };
  }

  /** Nothing runs: the run ends, a pass of the loop's own starts, or tasks do. */
  whenIdle(before: Snapshot, othersHold: boolean, signal: AbortSignal): IdleStep {
    const { ctx } = this;
    const { source } = ctx;
    const next = decideNext(before, { iterations: this.started, costUsd: this.costUsd }, { maxIterations: ctx.maxIterations, maxCost: ctx.config.maxCost });
    const step = next.kind === 'complete' ? ctx.convergence?.next(source.describe()) : undefined;
    // The project's hooks: before the first task, and once every task is done (and converged).
    const hook = this.hooks.next(next.kind, step);
    const end = (status: RunStatus, exitCode: number, message: string): IdleStep => ({ kind: 'end', result: this.finish(status, exitCode, message, before) });
    const passes: Pass[] = [];
    if (hook && !this.mayStart(signal)) return end('limit_reached', ExitCode.limit, `${this.describeLimit()} before the project's ${hook.name} hook`);
    if (hook) passes.push({ task: hookTask(hook), hook });
    else if (step?.kind === 'end') return end(step.status, step.exitCode, step.message);
    else if (step?.kind === 'pass' && !this.mayStart(signal)) return end('limit_reached', ExitCode.limit, `${this.describeLimit()} before converge pass ${step.pass}: not proven converged`);
    if (step?.kind === 'pass') passes.push({ task: convergeTask(step.pass, ctx.convergence!.maxPasses), pass: step.pass });
    else if (next.kind === 'complete' && !hook) {
      const skipped = before.skipped?.length ? `; ${before.skipped.length} skipped: ${before.skipped.map((task) => task.id).join(', ')}` : '';
      const what = ctx.records.length === 0 ? `nothing to do: every task of ${source.describe()} is already complete` : `all tasks of ${source.describe()} are complete`;
      return end('completed', ExitCode.complete, `${what}${skipped}`);
    }
    if ((next.kind === 'stuck' || next.kind === 'waiting') && !othersHold) return end('failed', ExitCode.failure, next.kind === 'stuck' ? source.explainStuck(before) : describeWaiting(ctx.root, source, before));
    if (next.kind === 'limit') return end('limit_reached', ExitCode.limit, `${this.describeLimit()} with ${describeTasksLeft(before.remaining.length, before.skipped?.map((item) => item.id))}`);
    return passes.length > 0 ? { kind: 'passes', passes } : { kind: 'tasks' };
  }

  /**
   * What an ended iteration means for the run. `stop` is called with the first error an iteration ended with
   * (it stops the others). Returns the iteration's output when it has one to record.
   */
  record(ended: Ended, stop: (error: unknown) => void): Extract<Ended, { output: unknown }>['output'] | undefined {
    const { ctx } = this;
    const { source, bus } = ctx;
    this.alone = false;
    if ('error' in ended) {
      // A stop ended this iteration's usage-limit wait: nothing to record, and the others finish their own.
      if (ended.error instanceof StopRequestedError) return undefined;
      if (ended.error instanceof ClaimLostError) {
        // Several hosts reach for the same task all the time: that is how they share the work (no budget
        // spent, no warning).
        if (this.remote) this.started -= 1;
        bus.emit({ type: this.remote ? 'info' : 'warning', message: `${errorMessage(ended.error)}; picking another task` });
        return undefined;
      }
      if (this.firstError === undefined) {
        this.firstError = ended.error;
        stop(ended.error);
      }
      return undefined;
    }
    const { output } = ended;
    // The record's cost includes the review's.
    this.costUsd += output.record.costUsd;
    if (output.vanished) {
      // All tasks vanished (the agent emptied the file?): that is not completion.
      this.failure ??= `the task source lists no tasks any more after iteration ${output.record.iteration} (${source.describe()}); check what the agent did to it`;
      return undefined;
    }
    ctx.records.push(output.record);
    bus.emit({ type: 'iteration_end', record: output.record });
    if (output.record.kept && !output.conflict) bus.emit({ type: 'info', message: `the work of iteration ${output.record.iteration} (${output.record.taskId}) was not merged: kept on branch ${output.record.kept}` });
    const again = this.reruns.ended(ended.task, output.conflict);
    if (again) bus.emit({ type: 'warning', message: again });
    if (output.record.claimedComplete && output.after.remaining.length > 0) {
      bus.emit({ type: 'warning', message: `premature completion promise in iteration ${output.record.iteration}: ${count(output.after.remaining.length, 'task')} remain; going on` });
    }
    // A pass's own failure (a hook that failed, a converge pass that broke) says more than the agent's.
    if (output.failure) this.failure ??= output.failure;
    if (output.run.exhausted) {
      const classification = output.run.classification;
      this.failure ??= `agent still failing after ${output.run.attempts} attempts: ${'reason' in classification ? classification.reason : 'unknown'}`;
    }
    if (output.record.review?.exhausted) this.failure ??= `the reviewer ${output.record.review.agent} gave ${output.record.review.reasons}`;
    // The no-progress breaker: a dead loop stops here instead of spending the rest of the budget.
    const brake = decideBreaker(ctx.records, ctx.breaker, source.words);
    if (brake.kind === 'stop') this.failure ??= `${brake.reason} (${source.describe()})`;
    return output;
  }
}
