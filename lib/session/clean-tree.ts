// The end of a run in the user's repository: the task state no iteration's commit took goes into one last
// commit, then whatever of the run is still uncommitted is said, so nobody finds it later by surprise.
import { describeLeftOut, listPaths, type CommitGuard, type CommitMode, type LeftOut } from '../repo/commit-set.ts';
import { isRalphFile, matchesAny } from '../repo/paths.ts';
import type { Git } from '../repo/git.ts';
import { errorMessage } from '../errors.ts';

export interface CloseTreeOptions {
  git: Git;
  guard: CommitGuard;
  mode: CommitMode;
  sessionId: string;
  stateFiles: readonly string[];
  /** The task source's own files (bookkeepingFiles(): beads' .beads/ besides the state files), said apart at the end. */
  bookkeeping: readonly string[];
  /** --remote: every record was published as it was made; no last commit here. */
  remote: boolean;
  warn(message: string): void;
}

/** The run's paths left uncommitted when it ends: work that could have been committed, and what never is. */
export interface Uncommitted {
  /** Changed by the run, committable, not committed (the work of a task that did not pass; everything with --no-commit). */
  work: string[];
  /** The task source's own files changed after ralph's last commit (bd writing .beads/ as the run ends). */
  sourceFiles?: string[];
  /** Left out of ralph's commits on purpose (a secret, an environment file, a private key), with why. */
  leftOut: LeftOut[];
}

/**
 * The last commit of the task state (ralph or the agent commits), then one `git status`: what of the run
 * stays uncommitted (never the paths the user had changed before the run), said in one warning.
 */
export async function closeTree(o: CloseTreeOptions): Promise<string[]> {
  if (o.mode !== 'off' && !o.remote) {
    try {
      await o.guard.commit(o.git, `ralph: task state at the end of session ${o.sessionId}`, { 'Ralph-Session': o.sessionId }, { only: o.stateFiles });
    } catch (error) {
      o.warn(`could not commit the task state at the end of the run: ${errorMessage(error)}`);
    }
  }
  if (o.remote) return [];
  let changed: string[];
  try {
    changed = (await o.git.state()).changed;
  } catch {
    return [];
  }
  const ours = changed.filter((file) => !isRalphFile(file) && !o.guard.userPaths.has(file));
  if (ours.length === 0) return [];
  const set = o.guard.decide(o.git.cwd, ours);
  const note = uncommittedNote(sortLeft(set.paths, set.leftOut, o.bookkeeping, o.mode), o.mode);
  if (note) o.warn(note);
  return ours.sort();
}

/** What stays uncommitted, sorted: the task source's own files apart (but with --no-commit, where all of it is the run's work). Pure. */
export function sortLeft(paths: readonly string[], leftOut: LeftOut[], bookkeeping: readonly string[], mode: CommitMode): Uncommitted {
  const own = mode === 'off' ? [] : paths.filter((file) => matchesAny(file, bookkeeping));
  return { work: paths.filter((file) => !own.includes(file)), sourceFiles: own, leftOut };
}

/** What a run says at its end about the paths of its own it leaves uncommitted; undefined when none. Pure. */
export function uncommittedNote(left: Uncommitted, mode: CommitMode): string | undefined {
  const parts: string[] = [];
  if (left.work.length > 0) {
    const list = `${left.work.length === 1 ? '1 path' : `${left.work.length} paths`}: ${listPaths([...left.work].sort(), 8)}`;
    parts.push(mode === 'off' ? `--no-commit: what this run changed stays uncommitted (${list}); commit it yourself` : `the work of tasks that did not pass stays uncommitted (${list}); ralph commits a task's work once it passes`);
  }
  const own = left.sourceFiles ?? [];
  if (own.length > 0) parts.push(`the task source's own files changed after ralph's last commit (${listPaths([...own].sort(), 8)}): commit them with your next change`);
  if (left.leftOut.length > 0) parts.push(`never committed by ralph: ${left.leftOut.map(describeLeftOut).join('; ')}`);
  return parts.length > 0 ? `left uncommitted: ${parts.join('; ')}` : undefined;
}
