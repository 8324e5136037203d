// Which paths are ralph's own run state, and whether a path lies under a list of paths. Pure, and below
// everything else in lib/repo/ so that git.ts, the commit set and the work-state reader can all use it.

/** ralph's own run state: never part of a commit, never counted as a change. */
export const RALPH_OWN: readonly string[] = ['.ralph/', '.ralph.lock', '.ralph.lock.d/'];

/** ralph's own run state: never part of a commit. */
export function isRalphFile(file: string): boolean {
  return file === '.ralph.lock' || file.startsWith('.ralph/') || file.startsWith('.ralph.lock.d/');
}

/** True when `file` is one of `paths` or lies under one of them (a folder, with or without its `/`). */
export function matchesAny(file: string, paths: readonly string[]): boolean {
  return paths.some((entry) => file === entry || file.startsWith(`${entry.replace(/\/$/, '')}/`));
}
