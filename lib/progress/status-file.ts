import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EventSink, RunEvent } from '../events.ts';
import { writeFileAtomic } from '../repo/fs-atomic.ts';
import { PRIVATE_FILE } from '../repo/private-files.ts';
import { RunTracker, type RunStatusFile } from './state.ts';

export const STATUS_FILE = path.join('.ralph', 'status.json');

export function statusPath(root: string): string {
  return path.join(root, STATUS_FILE);
}

/** Reads `.ralph/status.json`; undefined when missing or unreadable (it is replaced atomically, never torn). */
export function readStatusFile(root: string): RunStatusFile | undefined {
  try {
    const data = JSON.parse(readFileSync(statusPath(root), 'utf8')) as unknown;
    if (typeof data !== 'object' || data === null || typeof (data as RunStatusFile).state !== 'string') return undefined;
    return data as RunStatusFile;
  } catch {
    return undefined;
  }
}

export interface StatusFileOptions {
  host?: string;
  /** Least time between two writes caused by agent output alone; state changes are written at once. */
  throttleMs?: number;
}

/** Keeps `.ralph/status.json` current: rewritten atomically at every state change, throttled for agent chatter. */
export class StatusFileSink implements EventSink {
  readonly essential = true;
  private readonly tracker: RunTracker;
  private readonly file: string;
  private readonly throttleMs: number;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private pending: NodeJS.Timeout | undefined;
  private dirty = false;

  constructor(root: string, options: StatusFileOptions = {}) {
    this.file = statusPath(root);
    this.tracker = new RunTracker(options.host ?? os.hostname());
    this.throttleMs = options.throttleMs ?? 1000;
  }

  /** The state as last folded (what the file holds, or will after a throttled write). */
  get status(): RunStatusFile | undefined {
    return this.tracker.status;
  }

  emit(event: RunEvent, at: number): void {
    const change = this.tracker.apply(event, at);
    if (change === 'none') return;
    if (change === 'state' || at - this.lastWriteAt >= this.throttleMs) {
      this.write(at);
      return;
    }
    this.dirty = true;
    // A trailing write keeps lastEventAt honest when the agent then goes quiet.
    if (!this.pending) {
      this.pending = setTimeout(() => {
        this.pending = undefined;
        if (this.dirty) this.write(this.lastWriteAt + this.throttleMs);
      }, Math.max(0, this.throttleMs - (at - this.lastWriteAt)));
      this.pending.unref();
    }
  }

  close(): void {
    if (this.dirty) this.write(this.lastWriteAt);
    if (this.pending) clearTimeout(this.pending);
    this.pending = undefined;
  }

  private write(at: number): void {
    const status = this.tracker.status;
    if (!status) return;
    if (this.pending) clearTimeout(this.pending);
    this.pending = undefined;
    this.dirty = false;
    this.lastWriteAt = at;
    const text = `${JSON.stringify(status, null, 2)}\n`;
    try {
      writeFileAtomic(this.file, text, { durable: false, mode: PRIVATE_FILE });
    } catch (error) {
      // No room for a temp file beside it (a full disk): the file is rewritten in place, which reuses its
      // own space; failing that, a run that has ended removes it rather than be shown running forever.
      try {
        writeFileSync(this.file, text, { mode: PRIVATE_FILE });
      } catch {
        if (status.state === 'finished') rmSync(this.file, { force: true });
      }
      throw error;
    }
  }
}
