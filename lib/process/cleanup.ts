/** Synchronous last-resort cleanups (kill agent groups, drop the lock) for a forced exit. */
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
