// `.ralph/journal.json`: what a run must leave for the next one to tell, after a kill -9 or a power cut,
// which uncommitted paths were the user's before ralph started (with a hash of their content then) and
// which iterations were under way, with the last durable step each reached. Written (atomically, fsync'd)
// before the agent starts and at each step; removed when a session ends with nothing under way.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../repo/fs-atomic.ts';
import { PRIVATE_FILE } from '../repo/private-files.ts';
import { CRASH_POINTS, listenToPoints, type CrashPoint, type Listener, type PointDetail } from './crash-points.ts';

export const JOURNAL_FILE = path.join('.ralph', 'journal.json');

/** One iteration under way, as the journal last saw it. */
export interface InFlight {
  session: string;
  iteration: number;
  taskId: string;
  title: string;
  /** The worker (1-based) in its worktree; absent when the agent works in the repository. */
  worker?: number;
  /** HEAD as the iteration began. */
  head?: string;
  /** The last durable step completed. */
  step: CrashPoint;
  /** The iteration's verdict, once the state was written. */
  outcome?: string;
  commit?: string;
}

export interface JournalData {
  version: 1;
  session: string;
  pid: number;
  startedAt: string;
  /** The user's uncommitted paths as the first of these runs began, with a hash of their content then (null: deleted). */
  userPaths: Record<string, string | null>;
  inflight: InFlight[];
  /**
   * The run ended through its door (Ctrl+C, a failure) with iterations under way: when, and its uncommitted
   * work then, with a hash of each path's content. A path changed since, or new, is the user's.
   */
  /** `exitCode`: what a forced exit ended with (130 after Ctrl+C twice). */
  ended?: { at: string; work: Record<string, string | null>; forced?: boolean; exitCode?: number };
}

/**
 * Whether the run that left `ended` was forced to exit by its user (a second Ctrl+C: an exit code written):
 * what it left is then news, not a crash. A last-resort exit (a bug ralph did not catch) writes the same end
 * without a code: that run died.
 */
export const forcedByUser = (ended: JournalData['ended']): boolean => ended?.forced === true && ended.exitCode !== undefined;

/** The content hash the journal keeps for a path (null when there is no file). */
export function hashPath(root: string, file: string): string | null {
  try {
    return createHash('sha256').update(readFileSync(path.join(root, file))).digest('hex');
  } catch {
    return null;
  }
}

/** The journal a run left, or undefined (none, or unreadable: then there is no evidence). */
export function readJournal(root: string): JournalData | undefined {
  const file = path.join(root, JOURNAL_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as JournalData;
    return data && data.version === 1 && Array.isArray(data.inflight) && typeof data.userPaths === 'object' ? data : undefined;
  } catch {
    return undefined;
  }
}

const order = (point: CrashPoint): number => CRASH_POINTS.indexOf(point);

/** Whether `step` is at or past `point` in an iteration's order. */
export function stepAtLeast(step: CrashPoint, point: CrashPoint): boolean {
  return order(step) >= order(point);
}

/** This session's journal: one writer (the session's process), every change written at once. */
export class Journal {
  private data: JournalData;
  constructor(
    private readonly root: string,
    init: Omit<JournalData, 'version'>,
  ) {
    this.data = { version: 1, ...init };
    this.write();
  }

  get inflight(): readonly InFlight[] {
    return this.data.inflight;
  }

  get userPaths(): Readonly<Record<string, string | null>> {
    return this.data.userPaths;
  }

  /** An iteration began: its task is marked in the source. */
  begin(entry: Omit<InFlight, 'session' | 'step'>): void {
    this.data.inflight = [...this.data.inflight.filter((item) => item.iteration !== entry.iteration), { session: this.data.session, step: 'task_claimed', ...entry }];
    this.write();
  }

  /** A durable step of an iteration under way completed. */
  step(point: CrashPoint, detail: PointDetail): void {
    const entry = this.data.inflight.find((item) => item.iteration === detail.iteration);
    if (!entry) return;
    entry.step = point;
    if (detail.outcome !== undefined) entry.outcome = detail.outcome;
    if (detail.commit !== undefined) entry.commit = detail.commit;
    this.write();
  }

  private unlisten: (() => void) | undefined;

  /** From now on the crash points' announcements are written down here. */
  listen(): void {
    this.unlisten = listenToPoints(this.listener());
  }

  stopListening(): void {
    this.unlisten?.();
    this.unlisten = undefined;
  }

  /** What the crash points announce, written down. */
  listener(): Listener {
    return {
      reached: (point, detail) => {
        if (point === 'task_claimed' && detail.task && detail.iteration !== undefined) {
          this.begin({ iteration: detail.iteration, taskId: detail.task.id, title: detail.task.title, ...(detail.worker === undefined ? {} : { worker: detail.worker }), ...(detail.head ? { head: detail.head } : {}) });
        } else if (detail.iteration !== undefined) {
          this.step(point, detail);
        }
      },
      ended: (iteration) => this.end(iteration),
    };
  }

  /** The iteration is settled (recorded, and committed when it passed): nothing of it is under way. */
  end(iteration: number): void {
    const before = this.data.inflight.length;
    this.data.inflight = this.data.inflight.filter((item) => item.iteration !== iteration);
    if (this.data.inflight.length !== before) this.write();
  }

  /** The session ended: with nothing under way the journal goes; else it stays, with the work left (`work()`). */
  async close(work: () => Promise<string[]>): Promise<void> {
    if (this.data.inflight.length === 0) return void rmSync(path.join(this.root, JOURNAL_FILE), { force: true });
    const left: Record<string, string | null> = {};
    for (const file of await work().catch(() => [])) left[file] = hashPath(this.root, file);
    this.data.ended = { at: new Date().toISOString(), work: left };
    try {
      this.write();
    } catch {
      // (a full disk: the run already failed saying so) the journal stays as last written, with no end
      // recorded, so the next start counts every other path as the run's work, as after a crash
    }
  }

  /**
   * A forced exit (a second Ctrl+C: lib/process/cleanup.ts), its agents just killed: the end written at
   * once, synchronously, as close() writes it, with the work uncommitted now (`changed`, from a synchronous
   * git status), so the next start tells the run's work from what the user changes afterwards. Kept even
   * with nothing under way: an iteration just put back may have left work the clean end had yet to name.
   */
  closeNow(changed: () => string[], exitCode?: number): void {
    this.stopListening();
    const left: Record<string, string | null> = {};
    for (const file of changed()) left[file] = hashPath(this.root, file);
    this.data.ended = { at: new Date().toISOString(), work: left, forced: true, ...(exitCode === undefined ? {} : { exitCode }) };
    this.write();
  }

  private write(): void {
    writeFileAtomic(path.join(this.root, JOURNAL_FILE), `${JSON.stringify(this.data, null, 2)}\n`, { mode: PRIVATE_FILE });
  }
}
