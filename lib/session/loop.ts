// The session's state machine: look at the source, decide (done, stuck, a limit, or which tasks start),
// run iterations on the workers, record each as it ends; until something ends the run. One worker works in
// the repository itself; several work in their own worktrees and merge back (see worker.ts). It is the same
// loop either way: N = 1 is a pool of one.
import { mkdirSync } from 'node:fs';
import type { Agent } from '../agents/types.ts';
import type { Config } from '../config/index.ts';
import type { Control } from '../control/index.ts';
import { decideNext } from './decide.ts';
import type { Deps } from '../deps.ts';
import { abortError, ClaimLostError, errorMessage, ExitCode, RalphError, StopRequestedError } from '../errors.ts';
import type { EventBus, IterationRecord, RunStatus } from '../events.ts';
import type { GateResult } from '../gates.ts';
import type { Git } from '../repo/git.ts';
import { runIteration, type IterationOutput } from '../iteration/index.ts';
import { convergeTask, runConvergePass } from '../iteration/converge.ts';
import { hookTask, runHookPass } from '../iteration/hook-pass.ts';
import { createHookRuns } from './hooks.ts';
import type { Convergence } from './converge.ts';
import type { AgentRoster } from '../iteration/agent-roster.ts';
import type { UsageWait } from '../iteration/usage-wait.ts';
import { inPlaceWorkspace, type Committed, type Workspace } from '../iteration/workspace.ts';
import type { CommitGuard } from '../repo/commit-set.ts';
import type { Redactor } from '../redact/index.ts';
import type { CommandWrap } from '../iteration/agent-run.ts';
import type { HookPassInfo, IterationInfo, Snapshot, Task, TaskSource } from '../sources/types.ts';
import type { WorkerWorkspace } from './worker.ts';
import { Worktrees } from './worktrees.ts';
import type { Reviewer } from '../iteration/review.ts';
import type { Dock } from '../landing/types.ts';
import { count, describeTasksLeft } from '../progress/tasks-left.ts';
import { decideBreaker, type BreakerLimits } from './breaker.ts';
import { endLoop, lookAtHosts, pollMs, spread, spreadWindow, type LoopResult } from './loop-end.ts';
import { Reruns } from './reruns.ts';
import { describeWaiting } from '../questions/index.ts';

export interface LoopContext {
  root: string;
  config: Config;
  deps: Deps;
  source: TaskSource;
  agent: Agent;
  /** Agent profile after source defaults were applied. */
  profile?: string;
  git: Git; // of the repository (the main worktree)
  bus: EventBus;
  signal: AbortSignal;
  sessionId: string;
  logDir: string;
  maxIterations: number;
  usageWait: UsageWait;
  /** Runs ralph's quality gates in `cwd` after an agent run; undefined when none are configured. */
  gates?: (iteration: number, cwd: string) => Promise<GateResult[]>;
  /** Commits a passing iteration's work (commit on, one worker); `amendState` adds the source's state to the agent's own commit instead (it commits, ralph not). */
  commit?: (task: Task, iteration: number, changed?: readonly string[]) => Promise<Committed>;
  amendState?: () => Promise<Committed>;
  /** Commits what a passing hook pass left (whatever the number of workers: a pass runs alone, in the repository). */
  commitPass?: (task: Task, iteration: number, changed?: readonly string[]) => Promise<Committed>;
  /** The agent commits its own work: `commit` takes only what a passing iteration left uncommitted (see inPlaceWorkspace). */
  agentCommits?: { userPaths: ReadonlySet<string> };
  /** What ralph's commits may hold: never the user's own changes from before the run, nor a secret. */
  guard?: CommitGuard;
  /** The records so far, kept by the caller (an interruption still reports them). */
  records: IterationRecord[];
  breaker: BreakerLimits; // the no-progress breaker's limits (./breaker.ts)
  review?: Reviewer; // the independent reviewer (--review)
  /** Replaces secrets in the agent's output and in what the source records. */
  redactor?: Redactor;
  wrap?: CommandWrap; // the agent's command wrapped for the folder it works in (--sandbox bwrap)
  /** `ralph stop` / `ralph pause` from another terminal (lib/control); absent when nobody can steer. */
  control?: Pick<Control, 'gate' | 'changed'>;
  /** --converge: passes once every task is done (./converge.ts); `commitState` commits what a pass appended. */
  convergence?: Convergence;
  roster?: AgentRoster; // the agents in order (--fallback) and their usage limits, shared by every worker
  commitState?: (message: string, iteration: number) => Promise<Committed>;
  /** --remote: where every host claims and lands (lib/landing/remote.ts); absent: this host alone. */
  dock?: Dock;
}

export type { LoopResult };

type Ended = { slot: number; task: Task; output: IterationOutput } | { slot: number; task: Task; error: unknown };

/** The loop: snapshot, decide, start iterations on idle workers, record each as it ends; until done or a limit. */
export async function runLoop(ctx: LoopContext): Promise<LoopResult> {
  const { source, bus } = ctx;
  mkdirSync(ctx.logDir, { recursive: true });
  const firstIteration = ((await source.lastIteration?.()) ?? 0) + 1;
  const size = Math.max(1, ctx.config.parallel);
  const remote = ctx.dock?.remote;
  // Several hosts: even one worker works in a worktree, and lands by replaying on the remote's head.
  const single = size === 1 && !remote;
  // One worker's fatal error stops the others: they share this signal, chained to the run's.
  const control = new AbortController();
  const onAbort = (): void => control.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  const signal = control.signal;

  let costUsd = 0;
  let started = 0; // iterations started, for the budget
  let numbered = 0; // iterations numbered (a lost claim is started, not numbered)
  let failure: string | undefined; // set when the run must end as failed once the iterations under way have ended
  let firstError: unknown;
  let lastSnapshot: Snapshot | undefined;
  let doneAtStart: number | undefined; // tasks done when this run first looked (several hosts: who landed what)
  const hookRuns = createHookRuns(source);
  let alone = false; // a converge or hook pass runs: nothing starts beside it
  const finish = (status: RunStatus, exitCode: number, message: string, snapshot: Snapshot | undefined): LoopResult => ({
    ...endLoop({ status, exitCode, message: status === 'completed' ? `${message}${hookRuns.note()}` : message, snapshot, records: ctx.records, costUsd, convergence: ctx.convergence, remote, doneAtStart }),
    ...hookRuns.summary(),
  });

  const inPlace = single ? inPlaceWorkspace({ root: ctx.root, git: ctx.git, source, commit: ctx.commit, amendState: ctx.amendState, agentCommits: ctx.agentCommits }) : undefined;
  const worktrees = single ? undefined : new Worktrees(ctx.root, ctx.guard);
  // HEAD as the next iteration starts: read once, then carried from each iteration's end (one worker) or
  // published by each merge (several).
  let head = await ctx.git.head();
  // Several workers: where they land (this host's branch, or the remote's), the worktrees; loaded only then.
  const several = single ? undefined : await (async () => {
    const [{ localDock }, { worktreeWorkspace, closeWorkers }, { agentResolver }] = await Promise.all([import('../landing/local.ts'), import('./worker.ts'), import('./resolver.ts')]);
    const resolve = agentResolver({ root: ctx.root, config: ctx.config, deps: ctx.deps, agent: ctx.agent, profile: ctx.profile, bus, signal, usageWait: ctx.usageWait, wrap: ctx.wrap, redactor: ctx.redactor, roster: ctx.roster }, ctx.logDir);
    return { dock: ctx.dock ?? localDock(ctx.git, head), worktreeWorkspace, closeWorkers, resolve };
  })();
  const dock = several?.dock;
  const workers = new Map<number, WorkerWorkspace>();
  const workerFor = async (slot: number): Promise<WorkerWorkspace> => {
    let worker = workers.get(slot);
    if (!worker) {
      const base = await ctx.git.head();
      if (!base) throw new RalphError('the repository has no commit to start the workers from: commit first');
      const tree = await worktrees!.create(slot, base);
      worker = several!.worktreeWorkspace({ tree, worktrees: worktrees!, main: ctx.git, source, dock: dock!, sessionId: ctx.sessionId, guard: ctx.guard, gates: ctx.gates, resolve: several!.resolve });
      workers.set(slot, worker);
    }
    return worker;
  };

  const idle: number[] = Array.from({ length: size }, (_, index) => index + 1);
  const running = new Map<number, { task: Task; ended: Promise<Ended> }>();
  const reruns = new Reruns();
  let looks = 0; // looks in a row at the remote with nothing to start (several hosts): each waits longer
  let at: string | undefined; // several hosts: the shared head of the last look

  /** `pass`, `hook`: a converge pass or a project's hook, in the repository itself (nothing runs beside it), not a task. */
  const start = (task: Task, slot: number, before: Snapshot, pass?: number, hook?: HookPassInfo): void => {
    const seenAt = at; // the shared head `before` was read at (several hosts)
    const info: IterationInfo = { iteration: 0, maxIterations: firstIteration - 1 + ctx.maxIterations, sessionId: ctx.sessionId, head, ...(single ? {} : { worker: slot }) };
    started += 1;
    alone = pass !== undefined || hook !== undefined;
    // Numbered once it goes ahead: a claim another host won spends neither a number nor the budget (record()).
    const number = (): void => {
      info.iteration = firstIteration + numbered++;
      info.run = { count: numbered, max: ctx.maxIterations };
    };
    const ended = (async (): Promise<Ended> => {
      try {
        let workspace: Workspace;
        if (hook) {
          number();
          const output = await runHookPass({ ...ctx, signal, workspace: inPlace ?? inPlaceWorkspace({ root: ctx.root, git: ctx.git, source }) }, hook, { ...info, worker: undefined }, ctx.commitPass);
          hookRuns.ended(hook, output.record.outcome === 'pass' ? 'pass' : 'fail', output.record.iteration);
          return { slot, task, output };
        }
        if (pass !== undefined) {
          number();
          const output = await runConvergePass({ ...ctx, signal, workspace: inPlace ?? inPlaceWorkspace({ root: ctx.root, git: ctx.git, source }) }, { pass, maxPasses: ctx.convergence!.maxPasses, commitState: ctx.commitState }, { ...info, worker: undefined });
          ctx.convergence!.ended(pass, output.verdict);
          return { slot, task, output };
        }
        if (inPlace) {
          number();
          workspace = inPlace;
        } else {
          // Another host may hold it: the remote decides (ClaimLostError: picking another task).
          if (remote) await dock!.claim(task.id, seenAt, async () => (await source.snapshot()).remaining.some((open) => open.id === task.id));
          number();
          const worker = await workerFor(slot);
          info.head = await worker.prepare(task.id);
          workspace = worker;
        }
        return { slot, task, output: await runIteration({ ...ctx, signal, workspace, claimedOnRemote: remote?.claims === 'refs' }, task, info, before) };
      } catch (error) {
        if (remote) await dock!.release(task.id).catch(() => undefined);
        return { slot, task, error };
      }
    })();
    running.set(slot, { task, ended });
  };

  const describeLimit = (): string => (ctx.config.maxCost !== undefined && costUsd >= ctx.config.maxCost ? `cost budget of $${ctx.config.maxCost} spent ($${costUsd.toFixed(4)})` : `iteration limit of ${ctx.maxIterations} reached`);
  /** Whether another iteration may start now, whatever the task. */
  const mayStart = (): boolean => {
    if (signal.aborted || failure !== undefined || alone) return false;
    if (started >= ctx.maxIterations) return false;
    if (ctx.config.maxCost !== undefined && costUsd >= ctx.config.maxCost) return false;
    // No new agent while the session waits for a usage-limit reset, nor beside a task that must run alone.
    if (ctx.usageWait.until !== undefined) return false;
    return !reruns.blocking;
  };

  /** The next task for an idle worker: a rerun first, else what the source says may start beside the running ones. */
  const pick = (before: Snapshot, elsewhere: ReadonlySet<string>): Task | undefined => {
    const busy = new Set([...[...running.values()].map((entry) => entry.task.id), ...elsewhere]);
    const open = new Set(before.remaining.map((task) => task.id));
    const rerun = reruns.next(open, busy, running.size);
    if (rerun !== undefined) return rerun ?? undefined;
    let candidates = single ? before.ready : source.workers.startable(before, [...running.values()].map((entry) => entry.task));
    // Nothing startable by the parallel rules while nothing runs (a dependency written out of order): the
    // source's own next task goes, alone.
    if (candidates.length === 0 && running.size === 0) candidates = before.ready.slice(0, 1);
    return spread(candidates, remote?.hostId, spreadWindow(size)).find((task) => !busy.has(task.id));
  };

  const record = (ended: Ended): void => {
    running.delete(ended.slot);
    alone = false;
    idle.push(ended.slot);
    idle.sort((a, b) => a - b);
    if ('error' in ended) {
      // A stop ended this iteration's usage-limit wait: nothing to record, and the others finish their own.
      if (ended.error instanceof StopRequestedError) return;
      if (ended.error instanceof ClaimLostError) {
        // Several hosts reach for the same task all the time: that is how they share the work (no budget
        // spent, no warning).
        if (remote) started -= 1;
        bus.emit({ type: remote ? 'info' : 'warning', message: `${errorMessage(ended.error)}; picking another task` });
        return;
      }
      if (firstError === undefined) {
        firstError = ended.error;
        control.abort(ended.error);
      }
      return;
    }
    const { output } = ended;
    // The record's cost includes the review's.
    costUsd += output.record.costUsd;
    if (output.vanished) {
      // All tasks vanished (the agent emptied the file?): that is not completion.
      failure ??= `the task source lists no tasks any more after iteration ${output.record.iteration} (${source.describe()}); check what the agent did to it`;
      return;
    }
    ctx.records.push(output.record);
    if (single) head = output.head;
    bus.emit({ type: 'iteration_end', record: output.record });
    if (output.record.kept && !output.conflict) bus.emit({ type: 'info', message: `the work of iteration ${output.record.iteration} (${output.record.taskId}) was not merged: kept on branch ${output.record.kept}` });
    const again = reruns.ended(ended.task, output.conflict);
    if (again) bus.emit({ type: 'warning', message: again });
    if (output.record.claimedComplete && output.after.remaining.length > 0) {
      bus.emit({ type: 'warning', message: `premature completion promise in iteration ${output.record.iteration}: ${count(output.after.remaining.length, 'task')} remain; going on` });
    }
    // A pass's own failure (a hook that failed, a converge pass that broke) says more than the agent's.
    if (output.failure) failure ??= output.failure;
    if (output.run.exhausted) {
      const classification = output.run.classification;
      failure ??= `agent still failing after ${output.run.attempts} attempts: ${'reason' in classification ? classification.reason : 'unknown'}`;
    }
    if (output.record.review?.exhausted) failure ??= `the reviewer ${output.record.review.agent} gave ${output.record.review.reasons}`;
    // The no-progress breaker: a dead loop stops here instead of spending the rest of the budget.
    const brake = decideBreaker(ctx.records, ctx.breaker, source.words);
    if (brake.kind === 'stop') failure ??= `${brake.reason} (${source.describe()})`;
  };

  try {
    for (;;) {
      if (signal.aborted && running.size === 0) throw firstError ?? abortError(signal);
      if (running.size === 0 && failure !== undefined) return finish('failed', ExitCode.failure, failure, lastSnapshot);
      // Steering: no new iteration while paused or stopping; a stop ends the run once nothing runs.
      const steer = ctx.control?.gate(running.size, ctx.records.at(-1)?.iteration);
      if (steer?.stop && running.size === 0) return finish('interrupted', ExitCode.interrupted, steer.stop, await source.snapshot());
      if (!steer?.hold && !signal.aborted && (running.size === 0 || (idle.length > 0 && mayStart()))) {
        // Several hosts: the main worktree at the remote's head first, so the source shows what they landed.
        const look = await lookAtHosts(remote ? dock : undefined, () => source.snapshot());
        at = look.at;
        const before = look.snapshot;
        const othersHold = look.othersHold(running.size);
        doneAtStart ??= before.done.length;
        lastSnapshot = before;
        if (running.size === 0) {
          const next = decideNext(before, { iterations: started, costUsd }, { maxIterations: ctx.maxIterations, maxCost: ctx.config.maxCost });
          const step = next.kind === 'complete' ? ctx.convergence?.next(source.describe()) : undefined;
          // The project's hooks: before the first task, and once every task is done (and converged).
          const hook = hookRuns.next(next.kind, step);
          if (hook && !mayStart()) return finish('limit_reached', ExitCode.limit, `${describeLimit()} before the project's ${hook.name} hook`, before);
          if (hook) start(hookTask(hook), idle.shift()!, before, undefined, hook);
          else if (step?.kind === 'end') return finish(step.status, step.exitCode, step.message, before);
          else if (step?.kind === 'pass' && !mayStart()) return finish('limit_reached', ExitCode.limit, `${describeLimit()} before converge pass ${step.pass}: not proven converged`, before);
          if (step?.kind === 'pass') start(convergeTask(step.pass, ctx.convergence!.maxPasses), idle.shift()!, before, step.pass);
          else if (next.kind === 'complete' && !hook) {
            const skipped = before.skipped?.length ? `; ${before.skipped.length} skipped: ${before.skipped.map((task) => task.id).join(', ')}` : '';
            const what = ctx.records.length === 0 ? `nothing to do: every task of ${source.describe()} is already complete` : `all tasks of ${source.describe()} are complete`;
            return finish('completed', ExitCode.complete, `${what}${skipped}`, before);
          }
          if ((next.kind === 'stuck' || next.kind === 'waiting') && !othersHold) return finish('failed', ExitCode.failure, next.kind === 'stuck' ? source.explainStuck(before) : describeWaiting(ctx.root, source, before), before);
          if (next.kind === 'limit') return finish('limit_reached', ExitCode.limit, `${describeLimit()} with ${describeTasksLeft(before.remaining.length, before.skipped?.map((task) => task.id))}`, before);
        }
        while (idle.length > 0 && mayStart()) {
          const task = pick(before, look.elsewhere);
          if (!task) break;
          start(task, idle.shift()!, before);
          looks = 0;
        }
        // Nothing to start here while other hosts hold what is left: look again in a while.
        if (running.size === 0 && othersHold && mayStart()) {
          await ctx.deps.sleep(pollMs(ctx.config, looks++), signal).catch(() => undefined);
          continue;
        }
      }
      const waits: Array<Promise<Ended | undefined>> = [...running.values()].map((entry) => entry.ended);
      const pause = ctx.usageWait.pending;
      if (pause) waits.push(pause.then(() => undefined));
      if (steer?.hold) waits.push(ctx.control!.changed().then(() => undefined));
      if (waits.length === 0) {
        // Nothing runs and nothing could start: every open task waits on one that cannot start.
        return finish('failed', ExitCode.failure, failure ?? source.explainStuck(lastSnapshot ?? (await source.snapshot())), lastSnapshot);
      }
      const ended = await Promise.race(waits);
      if (ended) record(ended);
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    if (worktrees && several) await several.closeWorkers([...workers.values()], worktrees, (message) => bus.emit({ type: 'warning', message }));
    // Claims released, and the clone at the remote's head.
    if (remote) for (const message of await dock!.close().catch((error: unknown) => [`could not close the remote claims: ${errorMessage(error)}`])) bus.emit({ type: 'warning', message });
  }
}
