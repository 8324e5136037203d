// A worker's workspace: its own worktree, reset to the feature branch before each task. A passing
// iteration's commits are replayed onto the feature branch (this host's, or the remote's: lib/landing/)
// under the merge lock, then ralph records the task in the main worktree's state files and commits them
// with the work; anything else is kept on a branch.
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
import { resolveOnto, type Resolved, type Resolver } from '../landing/resolve.ts';
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
  /**
   * ralph's quality gates, when configured: run again on the merged result before the feature branch moves
   * to it, unless the merge is a fast-forward of exactly what the iteration's own gates passed.
   */
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
  /** state.recordFailure under the merge lock. */
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

  const merge = async (landing: Landing, own: string | undefined, agentCommitted: boolean, early: Early | undefined): Promise<Landed> => {
    // What to go back to when a round does not land: the agent's work, and (several hosts) the clone's head.
    // One host lands in one round, so it asks git neither (a replay that conflicts undoes itself).
    const original = early?.original ?? (dock.remote ? await tree.git.head() : undefined);
    const before = dock.remote ? await main.head() : undefined;
    // Once per landing, the agent may resolve a conflict on the new head; its commit then stands for the work.
    const resolving: { tried?: Resolved } = {};
    try {
      const landed = await landOn(landing, own, agentCommitted, original, early, resolving);
      const { tried } = resolving;
      if (!tried?.resolution) return landed;
      const { costUsd, inputTokens, outputTokens, durationMs } = tried.resolution;
      return { ...landed, resolve: { ok: 'head' in tried, ...('head' in tried ? { files: tried.files } : { why: tried.why }), costUsd, inputTokens, outputTokens, durationMs } };
    } catch (error) {
      if (!(error instanceof RemoteUnreachableError)) throw error;
      // The remote stayed silent past --remote-wait: this clone goes back to what it had, the work to a branch.
      if (before && (await main.head()) !== before) await main.raw(['reset', '--keep', before]);
      await backTo(original);
      const kept = await keep(landing.info.iteration);
      throw new RemoteUnreachableError(`${error.message}: the work of ${landing.task.id} (iteration ${landing.info.iteration}) is kept${kept ? ` on branch ${kept}` : ''} in this clone; run ralph again once the remote answers`);
    }
  };

  const landOn = async ({ task, info, result }: Landing, own: string | undefined, agentCommitted: boolean, original: string | undefined, early: Early | undefined, resolving: { tried?: Resolved }): Promise<Landed> => {
    let ready = early;
    const refuse = async (why: string, target: string, iteration: number): Promise<Landed> => {
      await backTo(original);
      const kept = await keepShared(iteration);
      return { kept, head: target, refused: true, reason: `not landed: ${why}; the work is kept${kept ? ` on branch ${kept}` : ''}` };
    };
    for (;;) {
      const target = await dock.target();
      if (!target || !tree.base) throw new RalphError(`worker ${tree.worker} cannot merge back: no base commit`);
      // Another host holds the task now (its lease ran out here): this work is kept, never landed beside theirs.
      const lost = dock.lost(task.id);
      if (lost) return refuse(lost, target, info.iteration);
      let replay: Replay;
      if (ready && ready.target === target) replay = ready.replay;
      else if (resolving.tried && 'head' in resolving.tried) replay = await pickOnto(tree.git, resolving.tried.head, target);
      else {
        // The branch moved since: the worktree goes back to the agent's work and is rebased again.
        await backTo(original);
        replay = await rebase(target, own, agentCommitted);
      }
      ready = undefined;
      if ('conflict' in replay && options.resolve && !resolving.tried) {
        // A short agent run on the new head costs less than the whole task again: the markers are its to settle.
        const work = (await tree.git.head())!;
        const env = { ...source.agentEnv?.(info), ...source.workers.env(tree.dir) };
        const message = commitText(`ralph: ${task.id} ${task.title}`, trailers(task, info.iteration, tree.worker, dock.remote?.host));
        const tried = await resolveOnto(tree.git, tree.dir, tree.base, work, target, stateFiles(), (markers) => options.resolve!({ task, iteration: info.iteration, cwd: tree.dir, env, markers }), message);
        resolving.tried = tried;
        if ('head' in tried) replay = { head: tried.head, commits: 1 };
      }
      let conflict: string[] | undefined = 'conflict' in replay ? replay.conflict : undefined;
      // The branch only ever holds commits that pass the gates: the merged result is gated before the branch
      // moves to it, unless it is exactly what the iteration's own gates passed (the branch had not moved).
      if (!('conflict' in replay) && replay.head !== target && options.gates && target !== tree.base) {
        const gated = await options.gates(info.iteration, tree.dir);
        if (!gated.every((gate) => gate.passed)) {
          await backTo(original);
          const kept = await keepShared(info.iteration);
          const reason = mergedGatesReason(gated, target, kept);
          if (dock.remote) await dock.rewind(target);
          await state.recordFailure(task, { ...result, kind: 'fail', reason, tasksDone: [], gates: gated }, info);
          return { conflict: gatesConflict(gated), kept, reason, head: target, mergeGates: gated };
        }
      }
      if (!('conflict' in replay) && replay.head !== target) {
        const forward = await main.attempt(['merge', '--ff-only', '--no-stat', replay.head]);
        if (!forward.ok) conflict = [`the main worktree (${gitReason(forward.output, 'git merge --ff-only failed')})`];
        else reached('merged', { iteration: info.iteration, commit: replay.head });
      }
      if (conflict) {
        // The work is kept, the iteration recorded as failed, and the session runs the task again on a fresh base.
        await backTo(original);
        const kept = await keepShared(info.iteration);
        const reason = conflictReason(conflict, kept, resolving.tried && 'why' in resolving.tried ? resolving.tried.why : undefined);
        if (dock.remote) await dock.rewind(target);
        // Under the lock already: the failure is published inline.
        await state.recordFailure(task, { ...result, kind: 'fail', reason, tasksDone: [] }, info);
        return { conflict, kept, reason, head: target };
      }
      await source.workers.markDone(result.tasksDone);
      const at = await state.settleOn(result, info);
      // The task's state goes into the same commit as its work: ralph's own commit is amended, else one is made.
      await state.commit(commitText(`ralph: ${task.id} ${task.title}`, trailers(task, at.iteration, tree.worker, dock.remote?.host)), (own !== undefined || (resolving.tried !== undefined && 'head' in resolving.tried)) && 'commits' in replay && replay.commits > 0);
      reached('state_written', { iteration: info.iteration, outcome: result.kind });
      const head = await main.head();
      const published = await dock.publish(task.id);
      if (published.kind !== 'landed') {
        await dock.rewind(target);
        if (published.kind === 'moved') continue;
        return refuse(published.why, target, info.iteration);
      }
      lock.published = head ?? target;
      const commit = head !== target ? head : undefined;
      if (commit) await source.recordCommit?.(at.iteration, commit, target);
      tree.base = head ?? target;
      return { commit, head };
    }
  };

  return {
    worker: tree.worker,
    cwd: tree.dir,
    git: tree.git,
    env: () => source.workers.env(tree.dir),
    snapshot: (purpose) => source.workers.snapshotAt(tree.dir, purpose),

    async prepare(taskId: string) {
      currentTask = taskId;
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
        const landed = await lock.run(async () => {
          const started = Date.now();
          return { ...(await merge(landing, own, agentCommitted, early)), mergeMs: Date.now() - started };
        });
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
