// Whether a lock on disk is held, judged from evidence: the PID it names is alive, the process behind that
// PID started before the lock was taken, and the lock's heartbeat (the lock directory's mtime, refreshed
// every 5 s by the running ralph) is fresh. Pure: lib/repo/lock.ts gathers the evidence from disk and /proc.
import { formatDuration } from '../duration.ts';

/** The three lines of `.ralph.lock`: the run's PID, its ISO start time, its branch. */
export interface LockInfo {
  pid: number;
  startedAt: string;
  branch: string;
}

/**
 * A heartbeat older than this is stale. The holder refreshes it every 5 s, so a minute is 12 missed beats:
 * far more than any pause of ralph's event loop. A run the machine's suspend froze beats again within 5 s
 * of waking, so a run about to reclaim on the heartbeat alone watches it for a beat first.
 */
export const HEARTBEAT_STALE_MS = 60_000;
/** How long that watch lasts: one beat (5 s) and room for a busy machine's late timer. */
export const HEARTBEAT_WATCH_MS = 7_000;
/**
 * btime is whole seconds rounded down, so a process's start reads up to a second early, never late; a
 * holder that started more than this after its lock's time did not take it.
 */
export const START_TOLERANCE_MS = 2_000;

/** What the lock on disk and the OS say. */
export interface LockEvidence {
  /** `.ralph.lock` exists (parsed into `info` when it names a process). */
  file: boolean;
  info?: LockInfo;
  /** Age of the lock directory's mtime; undefined without a directory (nothing keeps a heartbeat). */
  heartbeatAgeMs?: number;
  /** The heartbeat was watched for HEARTBEAT_WATCH_MS and did not move. */
  still?: boolean;
  /** The OS on `info.pid`: alive, and where /proc shows them, when it started and its state letter. */
  holder?: { alive: boolean; startedAtMs?: number; state?: string };
}

export interface LockVerdict {
  held: boolean;
  /** A lock is on disk but no run holds it: the next run reclaims it. */
  stale: boolean;
  /** Why, for people, when it is not the plain case: `PID 4242 is gone`. */
  reason?: string;
  /** The OS shows the PID is the process that took the lock (it started before the lock's time). */
  verified?: boolean;
  /** Only the heartbeat speaks for or against a live run: watch it for one beat before taking the lock. */
  watch?: boolean;
}

/** Held or stale, and why. A false "stale" costs two runs in one repository, so doubt keeps the lock. */
export function judgeLock({ file, info, heartbeatAgeMs: age, still, holder }: LockEvidence): LockVerdict {
  const beating = age !== undefined && age < HEARTBEAT_STALE_MS && !still;
  const silent = `${formatDuration(Math.max(0, age ?? 0))}${still ? `, nor while watched for ${HEARTBEAT_WATCH_MS / 1000}s` : ''}`;
  if (!info) {
    if (!file && age === undefined) return { held: false, stale: false };
    // A run writes .ralph.lock just after taking the directory: a fresh directory alone is a run starting up.
    if (beating) return { held: true, stale: false, reason: 'its holder is starting up' };
    return { held: false, stale: true, reason: `the lock names no process${age === undefined ? '' : ` and has not been refreshed for ${silent}`}` };
  }
  const pid = info.pid;
  if (!holder?.alive || holder.state === 'Z' || holder.state === 'X') return { held: false, stale: true, reason: `PID ${pid} is gone` };
  const taken = Date.parse(info.startedAt);
  if (holder.startedAtMs !== undefined && Number.isFinite(taken) && holder.startedAtMs > taken + START_TOLERANCE_MS) {
    const reused = `PID ${pid} now belongs to a process started ${new Date(holder.startedAtMs).toISOString()}, after the lock was taken`;
    // Only a running ralph refreshes the heartbeat: a fresh one outweighs a start time a clock step (NTP at
    // boot, a resumed VM) may have moved. Reuse within a minute of a kill -9 is settled by watching it.
    if (beating) return { held: true, stale: false, reason: `${reused}, but its heartbeat is fresh`, watch: true };
    return { held: false, stale: true, reason: still ? `${reused}, and its heartbeat did not move in ${HEARTBEAT_WATCH_MS / 1000}s` : reused };
  }
  const verified = holder.startedAtMs !== undefined && Number.isFinite(taken);
  if (holder.state === 'T' || holder.state === 't') return { held: true, stale: false, verified, reason: `PID ${pid} is stopped (Ctrl+Z?), and a suspended run keeps its lock` };
  // Without /proc there is no state: a silent heartbeat could be a stopped run, so it proves nothing.
  if (age !== undefined && !beating && holder.state !== undefined) {
    return { held: false, stale: true, reason: `PID ${pid} has not refreshed its heartbeat for ${silent}`, ...(still ? {} : { watch: true }) };
  }
  return { held: true, stale: false, verified };
}
