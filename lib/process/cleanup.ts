/** Synchronous last-resort cleanups (kill agent groups, drop the lock) for a forced exit. */

/** Longest a forced exit waits for a release of claims (on the remote, in bd): the user asked to stop now. */
export const RELEASE_NOW_MS = 3_000;
const cleanups = new Set<(exitCode?: number) => void>();

/** `exitCode`: the code a forced exit ends with (130 after Ctrl+C twice); absent for a last-resort exit. */
export function onForcedExit(cleanup: (exitCode?: number) => void): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

export function runForcedExitCleanups(exitCode?: number): void {
  for (const cleanup of cleanups) {
    try {
      cleanup(exitCode);
    } catch {
      // keep going: the next cleanup may still matter
    }
  }
  cleanups.clear();
}
