// What the work tree looks like at one moment, cheaply: HEAD and, for every path git reports as changed,
// its size and modification time. Two such states tell whether someone (the agent, the reviewer) changed
// anything in between, even in files that were already modified before.
import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { Git, WorkTreeState } from '../repo/git.ts';
import { matchesAny, RALPH_OWN } from '../repo/paths.ts';

export interface WorkState {
  head?: string;
  /** Changed path → `size:mtime`, or `gone` for a deleted one. */
  files: Map<string, string>;
}


/** Reads the work tree's state with one `git status` (or from one already read). */
export async function readWorkState(git: Git, known?: WorkTreeState): Promise<WorkState> {
  const status = known ?? (await git.state());
  const files = new Map<string, string>();
  for (const file of status.changed) {
    try {
      const stat = lstatSync(path.join(git.cwd, file));
      files.set(file, `${stat.size}:${stat.mtimeMs}`);
    } catch {
      files.set(file, 'gone');
    }
  }
  return { head: status.head, files };
}

/**
 * The work tree as an iteration left it, without another `git status`: as read after the agent when ralph
 * did not commit (since then only the source's bookkeeping changed, which comparisons leave out); at
 * ralph's new commit, as read after the agent less the paths that commit took (`committed`; what it left
 * out, the user's own work say, is as it was), unless a commit hook may have changed files (undefined:
 * read it again). `agentHead` is HEAD after the agent, `landedHead` after landing.
 */
export async function stateAfterLanding(git: Git, afterAgent: WorkState, agentHead: string | undefined, landedHead: string | undefined, committed?: readonly string[]): Promise<WorkState | undefined> {
  if (landedHead === undefined || landedHead === agentHead) return afterAgent;
  if (!committed || (await git.commitHooks())) return undefined;
  return { head: landedHead, files: new Map([...afterAgent.files].filter(([file]) => !matchesAny(file, committed))) };
}

/** What changed between two states: whether HEAD moved and which paths differ, leaving out `ignore`. Pure. */
export function compareWorkStates(before: WorkState, after: WorkState, ignore: readonly string[] = []): { headMoved: boolean; files: string[] } {
  const skip = [...RALPH_OWN, ...ignore];
  const paths = new Set([...before.files.keys(), ...after.files.keys()]);
  const files = [...paths].filter((file) => !matchesAny(file, skip) && before.files.get(file) !== after.files.get(file)).sort();
  return { headMoved: before.head !== after.head, files };
}
