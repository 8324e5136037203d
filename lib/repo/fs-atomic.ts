import { mkdirSync, renameSync, writeFileSync, appendFileSync, openSync, fsyncSync, closeSync, rmSync } from 'node:fs';
import path from 'node:path';

let counter = 0;

/**
 * Writes a whole file atomically: a temp file beside it, fsync, then rename over the target. `durable:
 * false` skips the fsync for files rewritten often whose loss in a power cut is harmless (status.json).
 * `mode` (e.g. 0o600 for ralph's private files) applies to the file; missing folders are then made 0700.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: { durable?: boolean; mode?: number } = {}): void {
  mkdirSync(path.dirname(file), { recursive: true, ...(options.mode !== undefined ? { mode: 0o700 } : {}) });
  counter += 1;
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${counter}.tmp`);
  try {
    writeFileSync(temp, data, options.mode !== undefined ? { mode: options.mode } : undefined);
    if (options.durable !== false) {
      const fd = openSync(temp, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    // A failed write() names no path: the file meant is this one.
    if (error && typeof error === 'object' && !('path' in error && (error as NodeJS.ErrnoException).path)) (error as NodeJS.ErrnoException).path = file;
    throw error;
  }
}

/** Appends text to a file, creating it and its folder when missing. */
export function appendText(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  appendFileSync(file, text);
}
