// Reading .ralph/events.jsonl as it grows: find where the last session starts without reading the whole
// (append-only, possibly large) file, then read only the bytes added since, whole lines at a time.
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';

const NEEDLE = Buffer.from('"type":"session_start"');
const NEWLINE = 0x0a;
const CHUNK = 64 * 1024;
/** At most this much is read per poll, so catching up on a long run never holds a huge buffer. */
const MAX_READ = 8 * 1024 * 1024;

function readAt(fd: number, start: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = readSync(fd, buffer, 0, length, start);
  return buffer.subarray(0, read);
}

/**
 * The byte offset of the line holding the last `session_start` (0 when there is none). Scans backwards
 * in chunks; the quotes in the needle are escaped inside any JSON string, so agent text cannot fake it.
 */
export function lastSessionOffset(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    for (let end = size; end > 0; ) {
      const start = Math.max(0, end - CHUNK);
      // Overlap the next chunk a little, so a needle cut by the boundary is still found whole.
      const chunk = readAt(fd, start, Math.min(size, end + NEEDLE.length) - start);
      const found = chunk.lastIndexOf(NEEDLE);
      if (found !== -1) {
        const newline = chunk.lastIndexOf(NEWLINE, found);
        if (newline !== -1) return start + newline + 1;
        if (start === 0) return 0;
        // The line began in the chunk before: its start is the newline before `start`.
        for (let back = start; back > 0; back = Math.max(0, back - CHUNK)) {
          const before = readAt(fd, Math.max(0, back - CHUNK), back - Math.max(0, back - CHUNK));
          const at = before.lastIndexOf(NEWLINE);
          if (at !== -1) return Math.max(0, back - CHUNK) + at + 1;
        }
        return 0;
      }
      end = start;
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

export interface TailRead {
  lines: string[];
  /** The file was replaced or shrank: whoever reads should start over. */
  reset: boolean;
}

/** Follows one append-only file from an offset, returning only whole new lines. */
export class LineTail {
  private offset = 0;
  private inode: number | undefined;

  constructor(private readonly file: string) {}

  /** Starts reading at `offset` (a line start). */
  seek(offset: number): void {
    this.offset = offset;
    this.inode = this.stat()?.ino;
  }

  read(): TailRead {
    const stat = this.stat();
    if (!stat) {
      const reset = this.inode !== undefined;
      this.inode = undefined;
      this.offset = 0;
      return { lines: [], reset };
    }
    if ((this.inode !== undefined && stat.ino !== this.inode) || stat.size < this.offset) return { lines: [], reset: true };
    this.inode = stat.ino;
    if (stat.size === this.offset) return { lines: [], reset: false };
    const fd = openSync(this.file, 'r');
    try {
      const data = readAt(fd, this.offset, Math.min(stat.size - this.offset, MAX_READ));
      const last = data.lastIndexOf(NEWLINE);
      if (last === -1) {
        // A line longer than a whole read cannot be shown: skip it rather than wait for it forever.
        if (data.length >= MAX_READ) this.offset += data.length;
        return { lines: [], reset: false };
      }
      this.offset += last + 1;
      return { lines: data.toString('utf8', 0, last).split('\n').filter((line) => line.length > 0), reset: false };
    } finally {
      closeSync(fd);
    }
  }

  private stat(): { ino: number; size: number } | undefined {
    try {
      const stat = statSync(this.file);
      return { ino: stat.ino, size: stat.size };
    } catch {
      return undefined;
    }
  }
}
