// The task's state on the feature branch: ralph records what an iteration did in the source's state files
// of the main worktree (never merged as text from a worker's copy) and commits them with the work. With
// several hosts, records are shared: each goes on the head every host sees, is published at once (the
// others count its failures too), and carries a number no other host's record holds.
import type { CommitGuard, LeftOut } from '../repo/commit-set.ts';
import type { Git } from '../repo/git.ts';
import type { IterationInfo, IterationResult, Task, TaskSource } from '../sources/types.ts';
import { commitText } from './replay.ts';
import type { Dock } from './types.ts';

/**
 * The trailers of ralph's commits of a worker's task; with several hosts, the host too (`--host-name`), so
 * `git log` says who did what across machines, and a restarted host knows its own unpushed landings.
 */
export function trailers(task: { id: string }, iteration: number, worker: number, host?: string): Record<string, string> {
  return { 'Ralph-Iteration': String(iteration), 'Ralph-Task': task.id, 'Ralph-Worker': `w${worker}`, ...(host ? { 'Ralph-Host': host } : {}) };
}

/**
 * HEAD's message with its Ralph-Iteration trailer saying `iteration`, ready for `git commit --amend
 * --cleanup=verbatim -m`; undefined when it says that already (or has no such trailer).
 */
export async function renumberedMessage(git: Git, iteration: number): Promise<string | undefined> {
  const text = await git.raw(['log', '-1', '--format=%B', 'HEAD']);
  const renumbered = text.replace(/^Ralph-Iteration: \d+$/m, `Ralph-Iteration: ${iteration}`);
  return renumbered === text ? undefined : renumbered.replace(/\n+$/, '\n');
}

export interface TaskStateOptions {
  dock: Dock;
  source: TaskSource;
  /** git of the main worktree, where the state files are written. */
  main: Git;
  stateFiles: () => string[];
  worker: number;
  guard?: CommitGuard;
  /** State paths the guard would not commit (a secret in progress.txt…), for the iteration's record. */
  leftOut: (items: LeftOut[]) => void;
}

export interface TaskState {
  /**
   * settle() in the source; several hosts: under a number no record on the shared head holds yet, which
   * the source is told in both the result and the info (Spec Kit numbers its entry by the one, PRD by the other).
   */
  settleOn(result: IterationResult, info: IterationInfo): Promise<IterationInfo>;
  /**
   * The state files as ralph changed them, committed (into ralph's own commit of the work when `amend`: its
   * Ralph-Iteration trailer then says `iteration`, the number settleOn() recorded it under).
   */
  commit(message: string, amend: boolean, iteration?: number): Promise<void>;
  /**
   * Records an iteration that landed no work. One host: in the state files, committed with the next work.
   * Several: committed and published at once, on a newer head when another host landed first. The caller
   * holds the merge lock.
   */
  recordFailure(task: Task, result: IterationResult, info: IterationInfo): Promise<void>;
}

export function taskState(o: TaskStateOptions): TaskState {
  const { dock, source, main } = o;
  const state: TaskState = {
    async settleOn(result, info) {
      let at = info;
      if (dock.remote) {
        const last = (await source.lastIteration?.()) ?? 0;
        if (last >= info.iteration) at = { ...info, iteration: last + 1 };
      }
      // Another host's landing holds this number: the record (an entry, its heading, the task's
      // lastIteration) takes the new one, wherever the source reads it from.
      await source.settle?.(at === info ? result : { ...result, iteration: at.iteration }, at);
      return at;
    },

    async commit(message, amend, iteration) {
      const changed = await main.changedUnder(o.stateFiles());
      const set = o.guard ? o.guard.decide(main.cwd, changed) : { paths: changed, leftOut: [] };
      o.leftOut(set.leftOut);
      if (set.paths.length === 0) return;
      await main.raw(['--literal-pathspecs', 'add', '-A', '--verbose', '--', ...set.paths]);
      if (!amend) return void (await main.raw(['commit', '--no-verify', '-m', message]));
      // The commit's trailer says the number its record took (a replay after a kill renumbers by it: unpushed.ts).
      const renumbered = iteration === undefined ? undefined : await renumberedMessage(main, iteration);
      if (renumbered === undefined) await main.raw(['commit', '--no-verify', '--amend', '--no-edit']);
      else await main.raw(['commit', '--no-verify', '--amend', '--cleanup=verbatim', '-m', renumbered]);
    },

    async recordFailure(task, result, info) {
      if (!dock.remote) return void (await source.settle?.(result, info));
      for (;;) {
        const target = await dock.target();
        const at = await state.settleOn(result, info);
        await state.commit(commitText(`ralph: ${task.id} iteration ${at.iteration} ${result.kind === 'fail' ? 'failed' : 'did not finish it'}`, trailers(task, at.iteration, o.worker, dock.remote?.host)), false);
        const published = await dock.publish(task.id);
        if (published.kind === 'landed') return;
        if (target) await dock.rewind(target);
        if (published.kind === 'lost') return;
      }
    },
  };
  return state;
}
