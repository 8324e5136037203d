/** Synchronous last-resort cleanups (kill agent groups, drop the lock) for a forced exit. */
const cleanups = new Set<() => void>();

export function onForcedExit(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

export function runForcedExitCleanups(): void {
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch {
      // keep going: the next cleanup may still matter
    }
  }
  cleanups.clear();
}
