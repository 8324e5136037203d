// What the loop hands back when it ends, and how long a host with nothing to start waits before it looks
// again at what the other hosts hold.
import type { Config } from '../config/index.ts';
import type { IterationRecord, RunStatus, RunSummary } from '../events.ts';
import { DEFAULT_LEASE_MS } from '../landing/preflight.ts';
import type { Dock, RemoteTarget } from '../landing/types.ts';
import type { Snapshot, Task, WorkerSupport } from '../sources/types.ts';
import type { Convergence } from './converge.ts';

/** What the loop hands back to the session: the run's summary but for what only the session knows. */
export type LoopResult = Omit<RunSummary, 'startedAt' | 'endedAt' | 'durationMs' | 'sessionId' | 'source' | 'agent'>;

export interface LoopEnd {
  status: RunStatus;
  exitCode: number;
  message: string;
  snapshot: Snapshot | undefined;
  records: IterationRecord[];
  costUsd: number;
  convergence?: Convergence;
  remote?: RemoteTarget;
  doneAtStart?: number;
}

export function endLoop(end: LoopEnd): LoopResult {
  const tasksCompleted = end.records.reduce((sum, item) => sum + item.tasksDone.length, 0);
  const doneNow = end.snapshot?.done.length;
  return {
    status: end.status,
    exitCode: end.exitCode,
    message: end.message,
    iterations: end.records.length,
    tasksCompleted,
    tasksRemaining: end.snapshot?.remaining.length ?? 0,
    tasksSkipped: end.snapshot?.skipped?.length ?? 0,
    skippedTaskIds: end.snapshot?.skipped?.map((task) => task.id) ?? [],
    costUsd: end.costUsd,
    records: end.records,
    ...(end.convergence ? { converge: end.convergence.summary() } : {}),
    ...(end.remote
      ? {
          remote: {
            name: end.remote.name,
            branch: end.remote.branch,
            host: end.remote.host,
            landedHere: tasksCompleted,
            landedElsewhere: doneNow !== undefined && end.doneAtStart !== undefined ? Math.max(0, doneNow - end.doneAtStart - tasksCompleted) : 0,
          },
        }
      : {}),
  };
}

/**
 * How long a host with nothing to start waits before it looks again at what the others hold: 250 ms after
 * its last start, doubling each look, up to an eighth of this run's typical iteration (the median of those
 * that ended; 1 s before any did), kept between 250 ms and 5 s and within a third of the lease. A look is
 * one fetch of the branch and the claims (a pack only when one moved): the host sees the others' last
 * landings within a small share of a task's time, and with tasks of minutes it asks the server every 5 s.
 */
export function pollMs(config: Config, looks: number, ended: ReadonlyArray<{ durationMs: number }> = []): number {
  const lease = Math.floor(((config.extra.get('lease') as number | undefined) ?? DEFAULT_LEASE_MS) / 3);
  const typical = median(ended.map((record) => record.durationMs).filter((ms) => Number.isFinite(ms) && ms >= 0));
  const pace = typical === undefined ? 1_000 : Math.min(5_000, Math.max(250, Math.floor(typical / 8)));
  const cap = Math.max(250, Math.min(pace, lease));
  return Math.min(cap, 250 * 2 ** Math.min(looks, 10));
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** How many of the first startable tasks a host with `workers` workers spreads over: none with one worker. */
export function spreadWindow(workers: number): number {
  return workers > 1 ? 2 * workers : 1;
}

/**
 * Several hosts: each host reads the first `window` startable tasks from another place (by its id), so that
 * hosts starting together seldom reach for the same task (a lost claim costs a push and a fetch), and the
 * source's order (PRD priority) still holds beyond that window; one host: as listed.
 */
export function spread<T>(tasks: readonly T[], hostId: string | undefined, window: number): readonly T[] {
  const size = Math.min(tasks.length, window);
  if (hostId === undefined || size < 2) return tasks;
  let hash = 0;
  for (const char of hostId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  const shift = hash % size;
  return [...tasks.slice(shift, size), ...tasks.slice(0, shift), ...tasks.slice(size)];
}

/**
 * The tasks a run would start first (the dry run says them), up to `parallel`, none that a live claim holds:
 * what the loop picks for its idle workers (the source's order, or what may start side by side; several
 * hosts: side by side even with one worker, read from this host's place), minus the other hosts' tasks.
 */
export function firstTasks(snapshot: Snapshot, workers: Pick<WorkerSupport, 'startable'>, parallel: number, held: ReadonlySet<string>, hostId?: string): Task[] {
  let candidates = parallel > 1 || hostId !== undefined ? workers.startable(snapshot, []) : snapshot.ready;
  // Nothing startable side by side (a dependency written out of order): the source's next task goes alone.
  if (candidates.length === 0) candidates = snapshot.ready.slice(0, 1);
  return spread(candidates, hostId, spreadWindow(parallel)).filter((task) => !held.has(task.id)).slice(0, parallel);
}

/** What a host sees before it picks: the source, and of the other hosts the shared head and what they hold. */
export interface HostsLook {
  snapshot: Snapshot;
  /** The shared head the main worktree is at now (several hosts). */
  at?: string;
  /** Tasks live claims of other runs hold. */
  elsewhere: Set<string>;
  /** Whether other hosts hold what is left, so that nothing to start here means wait, not stuck. */
  othersHold(runningHere: number): boolean;
}

/**
 * The source's snapshot; several hosts: read under the merge lock with the main worktree at the remote's
 * head (a landing under way may tick a task and then take the tick back, when another host landed first),
 * with the other runs' claims. A look under a second old, such as the landing that just ended, is current
 * enough: a claim is checked against the head anyway. Beads claims in its shared database: a bead in
 * progress while nothing runs here is another host's.
 */
export async function lookAtHosts(dock: Dock | undefined, read: () => Promise<Snapshot>): Promise<HostsLook> {
  if (!dock?.remote) return { snapshot: await read(), elsewhere: new Set(), othersHold: () => false };
  const [at, snapshot] = await dock.lock.run(async () => [await dock.target(1_000), await read()] as const);
  const elsewhere = new Set((await dock.elsewhere()).keys());
  const database = dock.remote.claims === 'database';
  return { at, snapshot, elsewhere, othersHold: (runningHere) => elsewhere.size > 0 || (database && runningHere === 0 && snapshot.remaining.some((task) => task.status === 'in_progress')) };
}
