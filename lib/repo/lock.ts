import fs, { readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type * as Lockfile from 'proper-lockfile';
import { LockHeldError, RalphError } from '../errors.ts';
import { writeFileAtomic } from './fs-atomic.ts';
import { fileSystemError } from './fs-errors.ts';
import { HEARTBEAT_WATCH_MS, judgeLock, type LockInfo, type LockVerdict } from './lock-verdict.ts';
import { processAlive, processStart } from '../process/process-tree.ts';

export const LOCK_FILE = '.ralph.lock';
/** proper-lockfile's own lock directory, beside the human-readable `.ralph.lock`. */
const LOCK_DIR_SUFFIX = '.d';

export type { LockInfo };

/** Parses the three lines of `.ralph.lock`: PID, ISO start time, branch. */
export function parseLockInfo(text: string): LockInfo | undefined {
  const [pid, startedAt, branch] = text.replace(/\r/g, '').split('\n');
  if (!pid || !/^\d+$/.test(pid.trim())) return undefined;
  return { pid: Number(pid.trim()), startedAt: (startedAt ?? '').trim(), branch: (branch ?? '').trim() };
}

export function formatLockInfo(info: LockInfo): string {
  return `${info.pid}\n${info.startedAt}\n${info.branch}\n`;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

export function readLockInfo(root: string): LockInfo | undefined {
  const text = readText(path.join(root, LOCK_FILE));
  return text === undefined ? undefined : parseLockInfo(text);
}

/** What `inspectLock` tells: the verdict, and what it rests on. */
export type LockState = LockVerdict & { info?: LockInfo; heartbeatAgeMs?: number };

/** The lock as found: the verdict, plus what reclaiming it must find unchanged. */
interface Observed {
  state: LockState;
  text?: string;
  dir?: { ino: number; mtimeMs: number };
}

/** Reads the lock and asks the OS about its holder; `watched` is the directory seen one watch earlier. */
function observe(root: string, now: number, watched?: Observed['dir']): Observed {
  const file = path.join(root, LOCK_FILE);
  const text = readText(file);
  const stat = statSync(file + LOCK_DIR_SUFFIX, { throwIfNoEntry: false });
  const dir = stat && { ino: stat.ino, mtimeMs: stat.mtimeMs };
  const info = text === undefined ? undefined : parseLockInfo(text);
  const heartbeatAgeMs = dir && now - dir.mtimeMs;
  const still = watched !== undefined && dir?.ino === watched.ino && dir.mtimeMs === watched.mtimeMs;
  const holder = info && { alive: processAlive(info.pid), ...processStart(info.pid) };
  const verdict = judgeLock({ file: text !== undefined, info, heartbeatAgeMs, still, holder });
  return { state: { ...verdict, ...(info && { info }), ...(heartbeatAgeMs !== undefined && { heartbeatAgeMs }) }, text, dir };
}

/** Looks at the lock without touching it (for --dry-run, `ralph status`, `ralph stop` and `ralph serve`). */
export function inspectLock(root: string, now = Date.now()): LockState {
  return observe(root, now).state;
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
  /** Waits while the heartbeat is watched (the run's abortable sleep; a timer by default). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Takes `.ralph.lock`: proper-lockfile's atomic lock directory (kept fresh while running, with
 * compromise detection) plus the three-line file people and ralph.sh read. A lock the evidence shows
 * stale (lib/lock-verdict.ts) is reclaimed with a warning; a live holder makes this throw, naming it.
 */
export async function acquireLock(options: AcquireOptions): Promise<HeldLock> {
  const file = path.join(options.root, LOCK_FILE);
  const dir = file + LOCK_DIR_SUFFIX;
  let seen = observe(options.root, options.now.getTime());
  if (seen.state.watch) {
    options.warn(`${file}: ${seen.state.reason}; watching the heartbeat for ${HEARTBEAT_WATCH_MS / 1000}s`);
    await (options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))))(HEARTBEAT_WATCH_MS);
    seen = observe(options.root, Date.now(), seen.dir);
  }
  if (seen.state.held && !seen.state.info) {
    // A fresh directory without .ralph.lock: a run starting up writes it within moments. One killed between
    // the two (a kill -9, a power cut) never will: its heartbeat stands still, and then the lock is stale.
    const named = await holder(options.root);
    if (named.info) throw heldError(file, named);
    options.warn(`${file}: the lock names no process yet; watching the heartbeat for ${HEARTBEAT_WATCH_MS / 1000}s`);
    await (options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))))(HEARTBEAT_WATCH_MS);
    seen = observe(options.root, Date.now(), seen.dir);
  }
  const state = seen.state;
  if (state.held) throw heldError(file, state.info ? state : await holder(options.root));
  if (state.stale) {
    const who = state.info ? ` (PID ${state.info.pid}, started ${state.info.startedAt}, branch ${state.info.branch})` : '';
    // Warned before the reclaim: the moment another run reclaiming the same lock could take it first.
    options.warn(`reclaiming a stale lock ${file}${who}: ${state.reason}`);
    reclaim(file, seen);
  }

  // The lock directory this run made, known by its inode: a run that reclaimed the lock (this one judged
  // stale while it hung) puts its own in its place, and nothing of this run's may remove that one, neither
  // a release nor proper-lockfile's own clean-up at exit.
  let made: number | undefined;
  const ownsDir = (): boolean => made !== undefined && statSync(dir, { throwIfNoEntry: false })?.ino === made;
  const lockFs = {
    ...fs,
    mkdir: (target: string, callback: (error: NodeJS.ErrnoException | null) => void) =>
      fs.mkdir(target, (error) => {
        if (!error && target === dir) made = statSync(target, { throwIfNoEntry: false })?.ino;
        callback(error);
      }),
    rmdir: (target: string, callback: (error: NodeJS.ErrnoException | null) => void) => (target === dir && !ownsDir() ? callback(null) : fs.rmdir(target, callback)),
    rmdirSync: (target: string) => (target === dir && !ownsDir() ? undefined : fs.rmdirSync(target)),
  };
  let releaseDir: () => Promise<void>;
  try {
    // Loaded when a lock is taken, not at start-up (--dry-run, status and report never take one).
    const lockfile = createRequire(import.meta.url)('proper-lockfile') as typeof Lockfile;
    releaseDir = await lockfile.lock(file, {
      lockfilePath: dir,
      fs: lockFs,
      realpath: false,
      retries: 0,
      // Staleness is judged by evidence above, never by age alone: a suspended run keeps its lock.
      stale: 24 * 3_600_000,
      update: 5_000,
      onCompromised: options.onCompromised,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw heldError(file, await holder(options.root));
    throw new RalphError(`cannot take the lock ${file}: ${(error as Error).message}`);
  }

  const info: LockInfo = { pid: process.pid, startedAt: options.now.toISOString(), branch: options.branch };
  try {
    writeFileAtomic(file, formatLockInfo(info));
  } catch (error) {
    // No room for the three lines (a full disk): the lock directory goes too, or it would hold the lock.
    await releaseDir().catch(() => rmSync(dir, { recursive: true, force: true }));
    throw fileSystemError(error, file) ?? new RalphError(`cannot write the lock ${file}: ${(error as Error).message}`, { cause: error });
  }
  let released = false;
  const ownsFile = (): boolean => readLockInfo(options.root)?.pid === process.pid;
  return {
    info,
    async release() {
      if (released) return;
      released = true;
      if (ownsFile()) rmSync(file, { force: true });
      await releaseDir().catch(() => (ownsDir() ? rmSync(dir, { recursive: true, force: true }) : undefined));
    },
    releaseSync() {
      if (released) return;
      released = true;
      if (ownsFile()) rmSync(file, { force: true });
      if (ownsDir()) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Removes the stale lock as it was judged. Another run may have reclaimed it and taken the lock since: the
 * directory is moved aside first (only one run can), and one that is not the directory judged goes back,
 * so that run keeps its lock and taking the directory fails here instead.
 */
function reclaim(file: string, seen: Observed): void {
  const dir = file + LOCK_DIR_SUFFIX;
  if (seen.dir) {
    const aside = `${dir}.${process.pid}.stale`;
    try {
      renameSync(dir, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // another run reclaimed it first
      throw new RalphError(`cannot reclaim the stale lock ${file}: ${(error as Error).message}`);
    }
    const moved = statSync(aside, { throwIfNoEntry: false });
    if (moved?.ino !== seen.dir.ino || moved.mtimeMs !== seen.dir.mtimeMs) {
      try {
        renameSync(aside, dir);
        return;
      } catch {
        // a third run took the lock meanwhile; the directory moved aside is nobody's now
      }
    }
    rmSync(aside, { recursive: true, force: true });
  }
  // Only the file judged: another run that took the lock meanwhile has written its own.
  if (seen.text !== undefined && readText(file) === seen.text) rmSync(file, { force: true });
}

/** How long a run that lost the race for the lock waits for the winner to write who it is. */
const HOLDER_INFO_WAIT_MS = 2000;

/** The holder as judged once it has written who it is: a holder that has just taken the lock writes it a moment later. */
async function holder(root: string): Promise<LockState> {
  const deadline = Date.now() + HOLDER_INFO_WAIT_MS;
  for (let state = inspectLock(root); ; state = inspectLock(root)) {
    if (state.info || Date.now() >= deadline) return state;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Refuses at once when a live run holds the lock (a run that needs a heartbeat watched first is left to
 * acquireLock): called before a run prepares anything, so a refused run says nothing else and reads or
 * writes nothing of the live run's first.
 */
export function refuseIfHeld(root: string, now = Date.now()): void {
  let state = inspectLock(root, now);
  // A run that took the directory a moment ago writes .ralph.lock right after: wait a little for it, so the
  // refusal names its holder (two runs started at once) rather than "a run that is starting up".
  for (let waited = 0; state.held && !state.watch && !state.info && waited < STARTING_UP_WAIT_MS; waited += 25) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    state = inspectLock(root, now + waited + 25);
  }
  // Still no .ralph.lock: a run killed between taking the directory and writing it leaves just that (a crash
  // loop's kill at the start). Only its heartbeat can tell, and acquireLock() watches it: not refused here.
  if (state.held && !state.watch && state.info) throw heldError(path.join(root, LOCK_FILE), state);
}

/** How long a refusal waits for a run that is starting up to write who it is. */
const STARTING_UP_WAIT_MS = 2000;

function heldError(file: string, state: LockState): RalphError {
  const info = state.info;
  const who = info ? `PID ${info.pid}, started ${info.startedAt}, branch ${info.branch || '(none)'}` : 'a run that is starting up';
  // Only a PID the OS shows started before the lock is the run: a reused one belongs to someone else.
  const stop = info && state.verified ? `stop it (kill ${info.pid})` : "stop it with 'ralph stop'";
  return new LockHeldError(`another ralph holds ${file} (${who})`, {
    hint: `${state.reason ? `${state.reason}; ` : ''}wait for it to finish, or ${stop}; 'ralph status' shows what it is doing`,
  });
}
