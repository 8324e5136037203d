// A worker's workspace: its own worktree, reset to the feature branch before each task. A passing task is
// offered to the landing queue (lib/landing/queue.ts), which lands it with the others ready at the same
// time: its commits replayed onto the feature branch (this host's, or the remote's), gated with the batch,
// then recorded in the main worktree's state files, committed with the work; anything else is kept on a branch.
import { describeLeftOut, keepLeftOutFiles, type CommitGuard, type LeftOut } from '../repo/commit-set.ts';
import { isRalphFile, matchesAny } from '../repo/paths.ts';
import { errorMessage, RalphError, RemoteUnreachableError } from '../errors.ts';
import { gitReason, type Git } from '../repo/git.ts';
import type { Landed, Landing, Workspace } from '../iteration/workspace.ts';
import type { IterationInfo, IterationResult, Task, TaskSource } from '../sources/types.ts';
import { commitText, pickOnto, replayOnto, type Replay } from '../landing/replay.ts';
import { taskState, trailers } from '../landing/state.ts';
import type { Dock } from '../landing/types.ts';
import type { GateResult } from '../gates.ts';
import { conflictReason, gatesConflict, mergedGatesReason } from '../landing/reasons.ts';
import { resolveOnto, resolveSummary, type Resolved, type Resolver } from '../landing/resolve.ts';
import { landingQueue, type Candidate } from '../landing/queue.ts';
import type { Worktree, Worktrees } from './worktrees.ts';
import { reached } from '../recovery/crash-points.ts';

export interface WorkerOptions {
  tree: Worktree;
  worktrees: Worktrees;
  /** git of the main worktree (the feature branch). */
  main: Git;
  source: TaskSource;
  /** Where the work lands: this host's feature branch, or the remote's (several hosts). */
  dock: Dock;
  sessionId: string;
  /** What ralph's commits may hold (no secrets, no private keys); the worktree itself holds no user changes. */
  guard?: CommitGuard;
  /** ralph's gates, when configured: run again on a batch's stack before the branch moves (lib/landing/queue.ts). */
  gates?: (iteration: number, cwd: string) => Promise<GateResult[]>;
  /** Lets the agent resolve a conflict on the new head (once per landing) before the task is redone. */
  resolve?: Resolver;
}

export interface WorkerWorkspace extends Workspace {
  readonly worker: number;
  /** Resets the worktree for `taskId` to the feature branch's head (and the current state files); returns that head. */
  prepare(taskId: string): Promise<string | undefined>;
  /** Keeps whatever the worktree holds that is not merged; the branch name, if anything was kept. */
  keepLeftovers(label: string | number): Promise<string | undefined>;
}

/** A rebase made before the merge lock: onto `target`, from the worktree's `original` head. */
interface Early {
  target: string;
  original: string;
  replay: Replay;
}

export function worktreeWorkspace(options: WorkerOptions): WorkerWorkspace {
  const { tree, worktrees, main, source, dock } = options;
  const lock = dock.lock;
  const queue = landingQueue<Landed>(dock);
  const stateFiles = (): string[] => source.workers.stateFiles();
  let currentTask = `w${tree.worker}`;

  const guard = options.guard?.forWorktree();
  /** What the worktree held but no commit of ralph's took, once copied out of it (it is emptied after each task). */
  let leftOut: LeftOut[] = [];
  let saved: string | undefined;

  /** ralph's commit of what the agent left uncommitted, without the state files; the commit, if it made one. */
  const commitLeftovers = async (message: string, extra: Record<string, string>, iteration: number): Promise<string | undefined> => {
    const state = stateFiles();
    const dirty = (await tree.git.state()).changed.filter((file) => !isRalphFile(file) && !matchesAny(file, state));
    const set = guard ? guard.decide(tree.dir, dirty) : { paths: dirty, leftOut: [] };
    leftOut = set.leftOut;
    saved = keepLeftOutFiles(options.worktrees.root, tree.dir, leftOut, `${options.sessionId}/w${tree.worker}-i${iteration}`);
    return tree.git.commitPaths(set.paths, message, extra, { noVerify: true });
  };

  /**
   * The worker's commits on the feature branch's head `target`. Fast paths: when the agent made no commit of
   * its own, there is at most ralph's commit (which leaves the state files out): none, already on `target`,
   * or one cherry-pick. Otherwise every commit is replayed without its state-file changes.
   */
  const rebase = async (target: string, own: string | undefined, agentCommitted: boolean): Promise<Replay> => {
    // Several hosts: the agent's own commits say which host and worker landed them, like ralph's (state.ts).
    const marks: Record<string, string> = dock.remote ? { 'Ralph-Task': currentTask, 'Ralph-Worker': `w${tree.worker}`, 'Ralph-Host': dock.remote.host } : {};
    if (agentCommitted) return replayOnto(tree.git, tree.base!, target, stateFiles(), marks);
    if (!own) return { head: target, commits: 0 };
    if (target === tree.base) return { head: own, commits: 1 };
    return pickOnto(tree.git, own, target);
  };

  /** Keeps the worktree's unmerged work on a branch, then empties the worktree back to its base. */
  const keep = async (iteration: number | string): Promise<string | undefined> => {
    const kept = await worktrees.keep(tree, { session: options.sessionId, task: currentTask, iteration }, stateFiles());
    if (kept.leftOut.length > 0) {
      leftOut = kept.leftOut;
      saved = kept.saved;
    }
    // Once it is safe on its branch, the work must not be found (and kept) a second time.
    if (kept.branch && tree.base) await worktrees.reset(tree, tree.base, stateFiles());
    return kept.branch;
  };

  /** The left-out files of this task, with where they were copied to; read once. */
  const takeLeftOut = (): LeftOut[] => {
    const taken = saved ? leftOut.map((item) => ({ ...item, savedTo: saved })) : leftOut;
    leftOut = [];
    saved = undefined;
    return taken;
  };

  /**
   * The rebase done before the merge lock, onto the head the last merge published: under the lock it is
   * kept when the feature branch has not moved since (the usual case once workers finish at different
   * times), so the merges queued behind this one do not wait for it.
   */
  const rebaseEarly = async (own: string | undefined, agentCommitted: boolean): Promise<Early | undefined> => {
    const guess = lock.published;
    if (!guess || !tree.base || guess === tree.base || (!agentCommitted && !own)) return undefined;
    const original = await tree.git.head();
    if (!original) return undefined;
    return { target: guess, original, replay: await rebase(guess, own, agentCommitted) };
  };

  // How the task's state is recorded on the feature branch (and, several hosts, published): lib/landing/state.ts.
  const state = taskState({ dock, source, main, stateFiles, worker: tree.worker, ...(options.guard ? { guard: options.guard } : {}), leftOut: (items) => leftOut.push(...items) });
  const recordFailure = (task: Task, result: IterationResult, info: IterationInfo): Promise<void> => lock.run(() => state.recordFailure(task, result, info));

  /** The worktree back at the agent's own work (`original`), after a replay onto a head it did not land on. */
  const backTo = async (original: string | undefined): Promise<void> => {
    if (original && (await tree.git.head()) !== original) await tree.git.raw(['reset', '--hard', original]);
  };

  /** Keeps the work on a branch, shared with the other hosts when there are any. */
  const keepShared = async (iteration: number, unsafe?: readonly LeftOut[]): Promise<string | undefined> => {
    const kept = await keep(iteration);
    // Never a branch whose commits hold what ralph never commits (a secret, a key): that one stays here.
    return kept && dock.remote && !unsafe?.length ? ((await dock.share(kept)) ?? kept) : kept;
  };

  /**
   * A passing task as it waits to land (lib/landing/queue.ts): stacked on the tasks ahead of it in its
   * batch, gated with them, committed with its state on the feature branch, or turned down and kept.
   */
  const candidate = ({ task, info, result }: Landing, own: string | undefined, agentCommitted: boolean, early: Early | undefined): Candidate<Landed> => {
    const started = Date.now();
    // What to go back to when a round does not land: the agent's work, and (several hosts) the clone's head.
    let original = early?.original;
    let before: string | undefined;
    let ready = early;
    // Once per landing, the agent may resolve a conflict on the new head; its commit then stands for the work.
    let tried: Resolved | undefined;
    let stacked: { onto: string; replay: Replay } | undefined;
    let settled: { at: IterationInfo; target: string; head: string } | undefined;
    const message = (iteration: number): string => commitText(`ralph: ${task.id} ${task.title}`, trailers(task, iteration, tree.worker, dock.remote?.host));
    const resolved = (): string | undefined => (tried && 'head' in tried ? tried.head : undefined);
    /** The work on `onto`: the early rebase when it went there, the agent's resolution, or a new replay. */
    const replayOn = async (onto: string): Promise<Replay> => {
      const early = ready;
      ready = undefined;
      if (early && early.target === onto) return early.replay;
      if (resolved()) return pickOnto(tree.git, resolved()!, onto);
      await backTo(original);
      return rebase(onto, own, agentCommitted);
    };
    const said = (landed: Landed): Landed => ({ ...landed, mergeMs: Date.now() - started, ...resolveSummary(tried) });
    const failed = async (reason: string, landed: Landed, gates?: GateResult[]): Promise<Landed> => (await state.recordFailure(task, { ...result, kind: 'fail', reason, tasksDone: [], ...(gates ? { gates } : {}) }, info), said({ ...landed, reason }));
    return {
      task: task.id,
      gateMs: (result.gates ?? []).reduce((sum, gate) => sum + gate.durationMs, 0),
      async begin() {
        original ??= await tree.git.head();
        before = dock.remote ? await main.head() : undefined;
      },
      async stack(onto) {
        if (!tree.base) throw new RalphError(`worker ${tree.worker} cannot merge back: no base commit`);
        let replay = await replayOn(onto);
        if ('conflict' in replay && options.resolve && !tried) {
          // A short agent run on the new head costs less than the whole task again: the markers are its to settle.
          const work = (await tree.git.head())!;
          const env = { ...source.agentEnv?.(info), ...source.workers.env(tree.dir) };
          tried = await resolveOnto(tree.git, tree.dir, tree.base, work, onto, stateFiles(), (markers) => options.resolve!({ task, iteration: info.iteration, cwd: tree.dir, env, markers }), message(info.iteration));
          if ('head' in tried) replay = { head: tried.head, commits: 1 };
        }
        if ('conflict' in replay) return { conflict: replay.conflict };
        stacked = { onto, replay };
        return { head: replay.head, changes: replay.head !== onto, onItsBase: onto === tree.base };
      },
      // The branch only ever holds commits that pass the gates: the stack is gated before the branch moves.
      gate: async () => (options.gates ? options.gates(info.iteration, tree.dir) : []),
      async commit() {
        const target = (await main.head())!;
        // The task before it in the batch added its state commit since it was stacked: the same work, replayed.
        const replay = stacked!.onto === target ? stacked!.replay : await replayOn(target);
        if ('conflict' in replay) return replay;
        if (replay.head !== target) {
          const forward = await main.attempt(['merge', '--ff-only', '--no-stat', replay.head]);
          if (!forward.ok) return { conflict: [`the main worktree (${gitReason(forward.output, 'git merge --ff-only failed')})`] };
          reached('merged', { iteration: info.iteration, commit: replay.head });
        }
        await source.workers.markDone(result.tasksDone);
        const at = await state.settleOn(result, info);
        // The task's state goes into the same commit as its work: ralph's own commit is amended, else one is made.
        await state.commit(message(at.iteration), (own !== undefined || resolved() !== undefined) && replay.commits > 0, at.iteration !== info.iteration ? at.iteration : undefined);
        reached('state_written', { iteration: info.iteration, outcome: result.kind });
        settled = { at, target, head: (await main.head()) ?? target };
        return { head: settled.head };
      },
      async landed(head) {
        lock.published = head;
        const commit = settled!.head !== settled!.target ? settled!.head : undefined;
        if (commit) await source.recordCommit?.(settled!.at.iteration, commit, settled!.target);
        tree.base = head;
        return said({ commit, head });
      },
      async turned(why, head) {
        await backTo(original);
        const kept = await keepShared(info.iteration);
        // Another host holds the task now (its lease ran out here): this work is kept, never landed beside theirs.
        if ('lost' in why) return said({ kept, head, refused: true, reason: `not landed: ${why.lost}; the work is kept${kept ? ` on branch ${kept}` : ''}` });
        if ('gates' in why) return failed(mergedGatesReason(why.gates, why.on, kept), { conflict: gatesConflict(why.gates), kept, head, mergeGates: why.gates }, why.gates);
        return failed(conflictReason(why.conflict, kept, tried && 'why' in tried ? tried.why : undefined), { conflict: why.conflict, kept, head });
      },
      async abandon(error) {
        // The remote stayed silent past --remote-wait: this clone goes back to what it had, the work to a branch.
        if (before && (await main.head()) !== before) await main.raw(['reset', '--keep', before]);
        await backTo(original);
        const kept = await keep(info.iteration);
        return new RemoteUnreachableError(`${error.message}: the work of ${task.id} (iteration ${info.iteration}) is kept${kept ? ` on branch ${kept}` : ''} in this clone; run ralph again once the remote answers`);
      },
    };
  };

  return {
    worker: tree.worker,
    cwd: tree.dir,
    git: tree.git,
    env: () => source.workers.env(tree.dir),
    snapshot(purpose) {
      // Read once the agent ended: its task may soon be ready to land, and the batch before it may wait for it.
      if (purpose === 'progress') queue.expect(tree.worker);
      return source.workers.snapshotAt(tree.dir, purpose);
    },

    async prepare(taskId: string) {
      currentTask = taskId;
      queue.withdraw(tree.worker);
      const reset = async (): Promise<string | undefined> => {
        const base = lock.published ?? (await main.head());
        if (base) await worktrees.reset(tree, base, stateFiles());
        return base;
      };
      // Several hosts: not beside a landing, whose state files may still take back a tick (another host first).
      return dock.remote ? lock.run(reset) : reset();
    },

    keepLeftovers: (label) => keep(label),

    async land(landing: Landing): Promise<Landed> {
      const { task, info, result } = landing;
      if (result.kind !== 'pass' || landing.unsafe) queue.withdraw(tree.worker);
      if (result.kind === 'pass' && landing.unsafe) {
        // Replaying the agent's commits would be ralph committing what they hold: kept (in this clone), not merged.
        const kept = await keep(info.iteration);
        const reason = `not merged: the agent's own commits add ${landing.unsafe.map(describeLeftOut).join('; ')}; the work is kept${kept ? ` on branch ${kept}` : ''} and the task runs again`;
        await recordFailure(task, { ...result, kind: 'fail', reason, tasksDone: [] }, info);
        return { kept, head: tree.base, reason, refused: true, leftOut: takeLeftOut() };
      }
      if (result.kind === 'pass') {
        const agentCommitted = landing.head !== undefined && landing.head !== tree.base;
        const own = await commitLeftovers(`ralph: ${task.id} ${task.title}`, trailers(task, info.iteration, tree.worker, dock.remote?.host), info.iteration);
        if (own) reached('work_committed', { iteration: info.iteration, commit: own });
        const early = await rebaseEarly(own, agentCommitted);
        // Landed with whatever other workers have ready meanwhile, as one batch (lib/landing/queue.ts).
        const landed = await queue.offer(candidate(landing, own, agentCommitted, early), tree.worker);
        // The worktree follows the feature branch, so nothing it holds looks unmerged at the end (or to the
        // sweep after a kill -9). Its own worktree: done after the merge lock is released, so the next
        // worker's merge does not wait for it (a kill in between at worst keeps a copy on a branch).
        if (!landed.conflict && tree.base) await tree.git.raw(['reset', '--hard', tree.base]);
        return { ...landed, leftOut: takeLeftOut() };
      }
      const kept = await keepShared(info.iteration, landing.unsafe);
      await recordFailure(task, result, info);
      return { kept, head: tree.base, leftOut: takeLeftOut() };
    },
  };
}

/** At the end of a run: what each worker could not merge (an interruption) is kept on a branch; then the worktrees go. */
export async function closeWorkers(workers: readonly WorkerWorkspace[], worktrees: Worktrees, warn: (message: string) => void): Promise<void> {
  const done: Worktree[] = [];
  for (const worker of workers) {
    try {
      const kept = await worker.keepLeftovers('interrupted');
      if (kept) warn(`worker ${worker.worker} was interrupted: its unmerged work is kept on branch ${kept}`);
    } catch (error) {
      warn(`could not keep the work of worker ${worker.worker}: ${errorMessage(error)} (its worktree ${worker.cwd} is left in place)`);
      continue;
    }
    done.push({ worker: worker.worker, dir: worker.cwd, branch: `ralph-worker/w${worker.worker}`, git: worker.git });
  }
  for (const refused of await worktrees.removeAll(done)) warn(refused);
}
