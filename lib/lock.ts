import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type * as Lockfile from 'proper-lockfile';
import { RalphError } from './errors.ts';
import { writeFileAtomic } from './fs-atomic.ts';
import { processAlive } from './process/process-tree.ts';

export const LOCK_FILE = '.ralph.lock';
/** proper-lockfile's own lock directory, beside the human-readable `.ralph.lock`. */
const LOCK_DIR_SUFFIX = '.d';
/** A lock whose heartbeat is older than this and whose holder is unknown is considered abandoned. */
const UNKNOWN_HOLDER_STALE_MS = 60_000;

export interface LockInfo {
  pid: number;
  startedAt: string;
  branch: string;
}

/** Parses the three lines of `.ralph.lock`: PID, ISO start time, branch. */
export function parseLockInfo(text: string): LockInfo | undefined {
  const [pid, startedAt, branch] = text.replace(/\r/g, '').split('\n');
  if (!pid || !/^\d+$/.test(pid.trim())) return undefined;
  return { pid: Number(pid.trim()), startedAt: (startedAt ?? '').trim(), branch: (branch ?? '').trim() };
}

export function formatLockInfo(info: LockInfo): string {
  return `${info.pid}\n${info.startedAt}\n${info.branch}\n`;
}

export function readLockInfo(root: string): LockInfo | undefined {
  try {
    return parseLockInfo(readFileSync(path.join(root, LOCK_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Whether the process named in the lock is still a live run (a reused PID of another program is not). */
function holderAlive(info: LockInfo): boolean {
  if (info.pid === process.pid) return true;
  if (!processAlive(info.pid)) return false;
  try {
    const cmdline = readFileSync(`/proc/${info.pid}/cmdline`, 'utf8');
    return /ralph|tsx|node|bash|sh/.test(cmdline);
  } catch {
    return true;
  }
}

export interface LockState {
  held: boolean;
  info?: LockInfo;
  /** A lock is on disk but its holder is gone. */
  stale: boolean;
  heartbeatAgeMs?: number;
}

/** Looks at the lock without touching it (for --dry-run and `ralph status`). */
export function inspectLock(root: string, now = Date.now()): LockState {
  const file = path.join(root, LOCK_FILE);
  const dir = file + LOCK_DIR_SUFFIX;
  const info = readLockInfo(root);
  let heartbeatAgeMs: number | undefined;
  try {
    heartbeatAgeMs = now - statSync(dir).mtimeMs;
  } catch {
    heartbeatAgeMs = undefined;
  }
  if (!info && heartbeatAgeMs === undefined && !existsSync(file)) return { held: false, stale: false };
  if (info) {
    const alive = holderAlive(info);
    return { held: alive, info, stale: !alive, heartbeatAgeMs };
  }
  const fresh = heartbeatAgeMs !== undefined && heartbeatAgeMs < UNKNOWN_HOLDER_STALE_MS;
  return { held: fresh, stale: !fresh, heartbeatAgeMs };
}

export interface HeldLock {
  info: LockInfo;
  release(): Promise<void>;
  /** Synchronous release for the last-resort exit path. */
  releaseSync(): void;
}

export interface AcquireOptions {
  root: string;
  branch: string;
  now: Date;
  warn: (message: string) => void;
  /** Called when another process took over or removed the lock while we ran. */
  onCompromised: (error: Error) => void;
}

/**
 * Takes `.ralph.lock`: proper-lockfile's atomic lock directory (kept fresh while running, with
 * compromise detection) plus the three-line file people and ralph.sh read. A lock whose holder
 * process is gone is reclaimed with a warning; a live holder makes this throw, naming it.
 */
export async function acquireLock(options: AcquireOptions): Promise<HeldLock> {
  const file = path.join(options.root, LOCK_FILE);
  const dir = file + LOCK_DIR_SUFFIX;
  const state = inspectLock(options.root, options.now.getTime());
  if (state.held) throw heldError(file, state.info ?? (await holderInfo(options.root)));
  if (state.stale) {
    const who = state.info ? `PID ${state.info.pid}, started ${state.info.startedAt}, branch ${state.info.branch}` : 'unknown holder';
    options.warn(`reclaiming a stale lock ${file} (${who}): that process no longer runs`);
    rmSync(dir, { recursive: true, force: true });
    rmSync(file, { force: true });
  }

  let releaseDir: () => Promise<void>;
  try {
    // Loaded when a lock is taken, not at start-up (--dry-run, status and report never take one).
    const lockfile = createRequire(import.meta.url)('proper-lockfile') as typeof Lockfile;
    releaseDir = await lockfile.lock(file, {
      lockfilePath: dir,
      realpath: false,
      retries: 0,
      // Staleness is judged by the holder's PID above, never by age alone: a suspended run keeps its lock.
      stale: 24 * 3_600_000,
      update: 5_000,
      onCompromised: options.onCompromised,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw heldError(file, await holderInfo(options.root));
    throw new RalphError(`cannot take the lock ${file}: ${(error as Error).message}`);
  }

  const info: LockInfo = { pid: process.pid, startedAt: options.now.toISOString(), branch: options.branch };
  writeFileAtomic(file, formatLockInfo(info));
  let released = false;
  const ownsFile = (): boolean => readLockInfo(options.root)?.pid === process.pid;
  return {
    info,
    async release() {
      if (released) return;
      released = true;
      if (ownsFile()) rmSync(file, { force: true });
      await releaseDir().catch(() => rmSync(dir, { recursive: true, force: true }));
    },
    releaseSync() {
      if (released) return;
      released = true;
      if (ownsFile()) rmSync(file, { force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How long a run that lost the race for the lock waits for the winner to write who it is. */
const HOLDER_INFO_WAIT_MS = 2000;

/** The holder's info; a holder that has just taken the lock writes it a moment later, so wait for it briefly. */
async function holderInfo(root: string): Promise<LockInfo | undefined> {
  const deadline = Date.now() + HOLDER_INFO_WAIT_MS;
  for (let info = readLockInfo(root); ; info = readLockInfo(root)) {
    if (info || Date.now() >= deadline) return info;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function heldError(file: string, info: LockInfo | undefined): RalphError {
  const who = info ? `PID ${info.pid}, started ${info.startedAt}, branch ${info.branch || '(none)'}` : 'a run that is starting up';
  return new RalphError(`another ralph holds ${file} (${who})`, {
    hint: `wait for it to finish, or stop it (kill ${info?.pid ?? '<pid>'}); 'ralph status' shows what it is doing`,
  });
}
