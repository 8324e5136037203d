// How workers are fed: N slots, each idle or running one iteration in its workspace (the repository itself
// for one worker on one host; else a worktree per slot, landing through the Dock). Starting an iteration
// numbers it, claims its task on the remote first when there is one, and runs it; a pass of the loop's own
// (a converge pass, a project's hook) runs in the repository with nothing beside it.
import { ClaimLostError, errorMessage, RalphError } from '../errors.ts';
import { runIteration } from '../iteration/index.ts';
import { runConvergePass } from '../iteration/converge.ts';
import { runHookPass } from '../iteration/hook-pass.ts';
import { inPlaceWorkspace, type Workspace } from '../iteration/workspace.ts';
import type { Dock, RemoteTarget } from '../landing/types.ts';
import type { IterationInfo, Snapshot, Task } from '../sources/types.ts';
import type { Ledger, Pass } from './ledger.ts';
import type { Ended, LoopContext } from './loop-context.ts';
import { spread, spreadWindow } from './loop-end.ts';
import type { Reruns } from './reruns.ts';
import type { WorkerWorkspace } from './worker.ts';
import { Worktrees } from './worktrees.ts';
import { abandonIteration } from './left-work.ts';

type Several = { dock: Dock; worktreeWorkspace: typeof import('./worker.ts').worktreeWorkspace; closeWorkers: typeof import('./worker.ts').closeWorkers; resolve: import('../landing/resolve.ts').Resolver };

export class Pool {
  readonly idle: number[];
  readonly running = new Map<number, { task: Task; ended: Promise<Ended> }>();
  /** HEAD as the next iteration starts: read once, then carried from each iteration's end (one worker) or published by each merge (several). */
  head: string | undefined;
  /** Several hosts: the shared head of the last look, which the snapshot a task is picked from was read at. */
  at: string | undefined;
  private readonly workers = new Map<number, WorkerWorkspace>();
  private readonly inPlace: Workspace | undefined;
  private readonly worktrees: Worktrees | undefined;

  private constructor(
    private readonly ctx: LoopContext,
    private readonly signal: AbortSignal,
    private readonly ledger: Ledger,
    readonly size: number,
    readonly remote: RemoteTarget | undefined,
    head: string | undefined,
    private readonly several: Several | undefined,
  ) {
    this.idle = Array.from({ length: size }, (_, index) => index + 1);
    this.head = head;
    this.inPlace = several ? undefined : inPlaceWorkspace({ root: ctx.root, git: ctx.git, source: ctx.source, commit: ctx.commit, amendState: ctx.amendState, agentCommits: ctx.agentCommits });
    this.worktrees = several ? new Worktrees(ctx.root, ctx.guard) : undefined;
  }

  /** The pool of `--parallel` slots; several workers (or hosts) load their modules only then. */
  static async open(ctx: LoopContext, signal: AbortSignal, ledger: Ledger): Promise<Pool> {
    const size = Math.max(1, ctx.config.parallel);
    const remote = ctx.dock?.remote;
    const head = await ctx.git.head();
    // Several hosts: even one worker works in a worktree, and lands by replaying on the remote's head.
    if (size === 1 && !remote) return new Pool(ctx, signal, ledger, size, remote, head, undefined);
    const [{ localDock }, { worktreeWorkspace, closeWorkers }, { agentResolver }] = await Promise.all([import('../landing/local.ts'), import('./worker.ts'), import('./resolver.ts')]);
    const resolve = agentResolver({ root: ctx.root, config: ctx.config, deps: ctx.deps, agent: ctx.agent, profile: ctx.profile, bus: ctx.bus, signal, usageWait: ctx.usageWait, wrap: ctx.wrap, redactor: ctx.redactor, roster: ctx.roster }, ctx.logDir);
    return new Pool(ctx, signal, ledger, size, remote, head, { dock: ctx.dock ?? localDock(ctx.git, head), worktreeWorkspace, closeWorkers, resolve });
  }

  /** One worker in the repository itself, one host: no worktrees, no landing. */
  get single(): boolean {
    return this.several === undefined;
  }

  get dock(): Dock | undefined {
    return this.several?.dock;
  }

  private async workerFor(slot: number): Promise<WorkerWorkspace> {
    const { ctx, several } = this;
    let worker = this.workers.get(slot);
    if (!worker) {
      const base = await ctx.git.head();
      if (!base) throw new RalphError('the repository has no commit to start the workers from: commit first');
      const tree = await this.worktrees!.create(slot, base);
      worker = several!.worktreeWorkspace({ tree, worktrees: this.worktrees!, main: ctx.git, source: ctx.source, dock: several!.dock, sessionId: ctx.sessionId, guard: ctx.guard, gates: ctx.gates, resolve: several!.resolve });
      this.workers.set(slot, worker);
    }
    return worker;
  }

  /** Starts `task` on the first idle slot (the caller made sure one is idle and that it may start). */
  start(task: Task, before: Snapshot, own?: Omit<Pass, 'task'>): void {
    const { ctx, ledger, remote, signal } = this;
    const { source } = ctx;
    const slot = this.idle.shift()!;
    const seenAt = this.at; // the shared head `before` was read at (several hosts)
    const info: IterationInfo = { iteration: 0, maxIterations: ledger.firstIteration - 1 + ctx.maxIterations, sessionId: ctx.sessionId, head: this.head, ...(this.single ? {} : { worker: slot }) };
    ledger.started += 1;
    ledger.alone = own?.pass !== undefined || own?.hook !== undefined;
    // Numbered once it goes ahead: a claim another host won spends neither a number nor the budget (Ledger.record).
    const number = (): void => {
      info.iteration = ledger.firstIteration + ledger.numbered++;
      info.run = { count: ledger.numbered, max: ctx.maxIterations };
    };
    // A pass of the loop's own works in the repository itself, nothing beside it.
    const here = (): Workspace => this.inPlace ?? inPlaceWorkspace({ root: ctx.root, git: ctx.git, source });
    const ended = (async (): Promise<Ended> => {
      try {
        if (own?.hook) {
          number();
          const output = await runHookPass({ ...ctx, signal, workspace: here() }, own.hook, { ...info, worker: undefined }, ctx.commitPass);
          ledger.hooks.ended(own.hook, output.record.outcome === 'pass' ? 'pass' : 'fail', output.record.iteration);
          return { slot, task, output };
        }
        if (own?.pass !== undefined) {
          number();
          const output = await runConvergePass({ ...ctx, signal, workspace: here() }, { pass: own.pass, maxPasses: ctx.convergence!.maxPasses, commitState: ctx.commitState }, { ...info, worker: undefined });
          ctx.convergence!.ended(own.pass, output.verdict);
          return { slot, task, output };
        }
        let workspace: Workspace;
        if (this.inPlace) {
          number();
          workspace = this.inPlace;
        } else {
          // Another host may hold it: the remote decides (ClaimLostError: picking another task).
          if (remote) await this.dock!.claim(task.id, seenAt, async () => (await source.snapshot()).remaining.some((open) => open.id === task.id));
          number();
          const worker = await this.workerFor(slot);
          info.head = await worker.prepare(task.id);
          workspace = worker;
        }
        return { slot, task, output: await runIteration({ ...ctx, signal, workspace, claimedOnRemote: remote?.claims === 'refs' }, task, info, before) };
      } catch (error) {
        if (remote) await this.dock!.release(task.id).catch(() => undefined);
        // No verdict for this iteration (a signal, a stop, a failure, the output closed): its task goes back
        // now, so a run that ends here leaves nothing in flight for the next start to recover. A lost claim
        // was never this run's; a pass of the loop's own claims no task.
        if (!own && info.iteration > 0 && !(error instanceof ClaimLostError)) await abandonIteration({ ...ctx, inPlace: this.single }, task, info, error);
        return { slot, task, error };
      }
    })();
    this.running.set(slot, { task, ended });
  }

  /** The next task for an idle worker: a rerun first, else what the source says may start beside the running ones. */
  pick(before: Snapshot, elsewhere: ReadonlySet<string>, reruns: Reruns): Task | undefined {
    const { running } = this;
    const busy = new Set([...[...running.values()].map((entry) => entry.task.id), ...elsewhere]);
    const open = new Set(before.remaining.map((task) => task.id));
    const rerun = reruns.next(open, busy, running.size);
    if (rerun !== undefined) return rerun ?? undefined;
    let candidates = this.single ? before.ready : this.ctx.source.workers.startable(before, [...running.values()].map((entry) => entry.task));
    // Nothing startable by the parallel rules while nothing runs (a dependency written out of order): the
    // source's own next task goes, alone.
    if (candidates.length === 0 && running.size === 0) candidates = before.ready.slice(0, 1);
    return spread(candidates, this.remote?.hostId, spreadWindow(this.size)).find((task) => !busy.has(task.id));
  }

  /** The slot of an ended iteration is idle again. */
  release(slot: number): void {
    this.running.delete(slot);
    this.idle.push(slot);
    this.idle.sort((a, b) => a - b);
  }

  /** The end of the loop: each worker's unmerged work kept, the worktrees gone; with a remote, its claims released. */
  async close(warn: (message: string) => void): Promise<void> {
    const { several } = this;
    if (several && this.worktrees) await several.closeWorkers([...this.workers.values()], this.worktrees, warn);
    // Claims released, and the clone at the remote's head.
    if (this.remote) for (const message of await several!.dock.close().catch((error: unknown) => [`could not close the remote claims: ${errorMessage(error)}`])) warn(message);
  }
}
