// How workers are fed: N slots, each idle or running one iteration in its workspace (the repository itself
// for one worker on one host; else a worktree per slot, landing through the Dock). Several workers on several
// hosts: a slot whose task waits in the landing queue is idle again, its next task started in the slot's second
// worktree while the first one's work lands (two at most: a slot whose both worktrees are busy waits for one). Starting an iteration numbers
// it, claims its task on the remote first when there is one, and runs it; a pass of the loop's own (a
// converge pass, a project's hook) runs in the repository with nothing beside it.
import { ClaimLostError, errorMessage, RalphError } from '../errors.ts';
import { runIteration } from '../iteration/index.ts';
import { runConvergePass } from '../iteration/converge.ts';
import { runHookPass } from '../iteration/hook-pass.ts';
import { inPlaceWorkspace, type Workspace } from '../iteration/workspace.ts';
import type { Dock, RemoteTarget } from '../landing/types.ts';
import type { IterationInfo, Snapshot, Task } from '../sources/types.ts';
import type { Ledger, Pass } from './ledger.ts';
import type { Ended, LoopContext } from './loop-context.ts';
import { nextTask, spreadWindow } from './loop-end.ts';
import type { Reruns } from './reruns.ts';
import type { WorkerWorkspace } from './worker.ts';
import { closeWorkers, Worktrees } from './worktrees.ts';
import { abandonIteration } from './left-work.ts';

/** An iteration under way: its task, its end, its slot, and whether the slot was freed while it lands. */
interface Running {
  task: Task;
  ended: Promise<Ended>;
  slot: number;
  freed?: boolean;
}

type Several = { dock: Dock; worktreeWorkspace: typeof import('./worker.ts').worktreeWorkspace; resolve: import('../landing/resolve.ts').Resolver };

export class Pool {
  readonly idle: number[];
  /** The iterations under way, each under a key of its own (its slot may run the next one while it lands). */
  readonly running = new Map<number, Running>();
  private nextKey = 0;
  /** HEAD as the next iteration starts: read once, then carried from each iteration's end (one worker) or published by each merge (several). */
  head: string | undefined;
  /** Several hosts: the shared head of the last look, which the snapshot a task is picked from was read at. */
  at: string | undefined;
  /** Whether that look was read in an idle worktree beside a landing (lookAside). */
  aside = false;
  /** Each slot's worktrees (two at most), and the key of the iteration each one runs. */
  private readonly lanes = new Map<number, WorkerWorkspace[]>();
  private readonly busy = new Map<WorkerWorkspace, number>();
  /** Wakes the loop when a slot is idle again before its iteration ended (its task is in the landing queue). */
  private wake: (() => void) | undefined;
  private woken = false;
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
    const [{ localDock }, { worktreeWorkspace }, { agentResolver }] = await Promise.all([import('../landing/local.ts'), import('./worker.ts'), import('./resolver.ts')]);
    const resolve = agentResolver({ root: ctx.root, config: ctx.config, deps: ctx.deps, agent: ctx.agent, profile: ctx.profile, bus: ctx.bus, signal, usageWait: ctx.usageWait, wrap: ctx.wrap, redactor: ctx.redactor, roster: ctx.roster }, ctx.logDir);
    return new Pool(ctx, signal, ledger, size, remote, head, { dock: ctx.dock ?? localDock(ctx.git, head), worktreeWorkspace, resolve });
  }

  /** One worker in the repository itself, one host: no worktrees, no landing. */
  get single(): boolean {
    return this.several === undefined;
  }

  get dock(): Dock | undefined {
    return this.several?.dock;
  }

  /** A free worktree of `slot` for the iteration `key`. */
  private async workerFor(slot: number, key: number): Promise<WorkerWorkspace> {
    const worker = await this.freeLane(slot);
    this.busy.set(worker, key);
    return worker;
  }

  /** A worktree of `slot` no iteration holds: the first whose iteration ended, else a new one (w<slot + size>). */
  private async freeLane(slot: number): Promise<WorkerWorkspace> {
    const { ctx, several } = this;
    const lanes = this.lanes.get(slot) ?? [];
    this.lanes.set(slot, lanes);
    let worker = lanes.find((lane) => !this.busy.has(lane));
    if (!worker) {
      const base = await ctx.git.head();
      if (!base) throw new RalphError('the repository has no commit to start the workers from: commit first');
      const tree = await this.worktrees!.create(slot + this.size * lanes.length, base);
      // Several workers on several hosts, where a landing is a fetch and a push: the slot goes on while its work
      // lands, beside the others' work in flight as it is. One worker, or one host (which lands in a moment):
      // the worker's next task starts from its last one's work.
      const queued = this.remote && this.size > 1 ? (): void => this.queued(created) : undefined;
      const created = several!.worktreeWorkspace({ tree, worker: slot, ...(queued ? { queued } : {}), worktrees: this.worktrees!, main: ctx.git, source: ctx.source, dock: several!.dock, sessionId: ctx.sessionId, guard: ctx.guard, gates: ctx.gates, resolve: several!.resolve });
      lanes.push((worker = created));
    }
    return worker;
  }

  /**
   * Several hosts (claims as refs), while a landing of this host's holds the main worktree: the next look
   * reads the shared head in an idle slot's free worktree instead of waiting for the landing to end.
   */
  async lookAside(): Promise<{ at: string; snapshot: Snapshot } | undefined> {
    const dock = this.dock;
    if (!dock?.peek || dock.remote?.claims !== 'refs' || !dock.lock.busy || this.idle.length === 0) return undefined;
    const lane = await this.freeLane(this.idle[0]!);
    const at = await dock.peek();
    const snapshot = await lane.lookAt(at);
    return snapshot && { at, snapshot };
  }

  /** `lane`'s task waits in the landing queue: its slot is idle again when it has another worktree to work in. */
  private queued(lane: WorkerWorkspace): void {
    const entry = this.running.get(this.busy.get(lane) ?? -1);
    if (!entry || entry.freed) return;
    const lanes = this.lanes.get(entry.slot) ?? [];
    if (lanes.length >= 2 && lanes.every((other) => this.busy.has(other))) return;
    entry.freed = true;
    this.idle.push(entry.slot);
    this.idle.sort((a, b) => a - b);
    if (this.wake) this.wake();
    else this.woken = true; // the loop is not waiting now: its next wait ends at once
  }

  /** Resolves when a slot is idle again while its iteration lands (the loop waits on it beside the iterations). */
  freed(): Promise<undefined> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => (this.wake = () => ((this.wake = undefined), resolve(undefined))));
  }

  /** Starts `task` on the first idle slot (the caller made sure one is idle and that it may start). */
  start(task: Task, before: Snapshot, own?: Omit<Pass, 'task'>): void {
    const { ctx, ledger, remote, signal } = this;
    const { source } = ctx;
    const slot = this.idle.shift()!;
    const key = this.nextKey++;
    const seenAt = this.at; // the shared head `before` was read at (several hosts)
    const aside = this.aside; // …in an idle worktree, beside a landing: the claim is checked there, and the task starts from it
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
          const worker = await this.workerFor(slot, key);
          const open = (snapshot: Snapshot): boolean => snapshot.remaining.some((item) => item.id === task.id);
          const seen = (snapshot: Snapshot | undefined): boolean | undefined => snapshot && open(snapshot);
          // Another host may hold it: the remote decides (ClaimLostError: picking another task).
          const checked = remote ? await this.dock!.claim(task.id, seenAt, async () => open(await source.snapshot()), aside ? async (head) => seen(await worker.lookAt(head)) : undefined) : undefined;
          number();
          info.head = await worker.prepare(task.id, aside ? checked : undefined);
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
      } finally {
        for (const [lane, owner] of this.busy) if (owner === key) this.busy.delete(lane);
      }
    })();
    this.running.set(key, { task, ended: ended.then((end) => ({ ...end, key })), slot });
  }

  /** The next task for an idle worker: a rerun first, else what the source says may start beside the running ones. */
  pick(before: Snapshot, elsewhere: ReadonlySet<string>, reruns: Reruns): Task | undefined {
    const { running } = this;
    const busy = new Set([...[...running.values()].map((entry) => entry.task.id), ...elsewhere]);
    const open = new Set(before.remaining.map((task) => task.id));
    const rerun = reruns.next(open, busy, running.size);
    if (rerun !== undefined) return rerun ?? undefined;
    const tasks = [...running.values()].map((entry) => entry.task);
    return nextTask(this.single ? before.ready : this.ctx.source.workers.startable(before, tasks), before, busy, tasks.length, this.remote?.hostId, spreadWindow(this.size));
  }

  /** The slot of an ended iteration is idle again (unless it was already, while the iteration landed). */
  release(ended: Ended): void {
    const entry = this.running.get(ended.key!);
    this.running.delete(ended.key!);
    if (entry?.freed) return;
    this.idle.push(ended.slot);
    this.idle.sort((a, b) => a - b);
  }

  /** The end of the loop: each worker's unmerged work kept, the worktrees gone; with a remote, its claims released. */
  async close(warn: (message: string) => void): Promise<void> {
    const { several } = this;
    if (several && this.worktrees) await closeWorkers([...this.lanes.values()].flat(), this.worktrees, warn);
    // Claims released, and the clone at the remote's head.
    if (this.remote) for (const message of await several!.dock.close().catch((error: unknown) => [`could not close the remote claims: ${errorMessage(error)}`])) warn(message);
  }
}
