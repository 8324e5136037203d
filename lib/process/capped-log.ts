// The agent's iteration logs: opened so a failed write is never an uncaught error, and capped so a chatty
// agent cannot fill the disk overnight (--log-max-bytes): the head is written as it comes; past it, only
// the last bytes are held (a ring) and the lines ralph acted on (its result, errors, usage limits) are
// kept; at the end come a note of what was left out, those lines, then the tail.
import { createWriteStream, type WriteStream } from 'node:fs';
import { PooledLog } from './output.ts';

/** Opens an agent log for appending (0600); a write that fails (ENOSPC) goes to `onError`, naming the file. */
export function openLog(file: string | undefined, onError: (error: NodeJS.ErrnoException) => void): WriteStream | undefined {
  if (!file) return undefined;
  const stream = createWriteStream(file, { flags: 'a', mode: 0o600 });
  // Without a listener a failed write (ENOSPC) is an uncaught 'error' event that kills ralph.
  stream.on('error', (error: NodeJS.ErrnoException) => {
    error.path ??= file;
    onError(error);
  });
  return stream;
}

/** Ends a log and waits until it is closed; a log that failed is already closed. */
export function closeLog(stream: WriteStream | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!stream || stream.destroyed) return resolve();
    stream.once('close', () => resolve());
    stream.end();
  });
}

/** Most of a log's cap that its tail may take: the tail is held in memory until the agent ends. */
const MAX_TAIL = 4 * 1024 * 1024;
/** Most bytes of kept lines (a result line carries the agent's whole final answer). */
const MAX_KEPT = 1024 * 1024;

/** Splits a cap between the head (written at once) and the tail (held until the end). */
export function splitCap(maxBytes: number): { head: number; tail: number } {
  const tail = Math.min(MAX_TAIL, Math.floor(maxBytes / 2));
  return { head: maxBytes - tail, tail };
}

/** The last `size` bytes pushed into it. */
class TailRing {
  private readonly buffer: Buffer;
  private at = 0;
  /** Bytes pushed in all. */
  total = 0;

  constructor(size: number) {
    this.buffer = Buffer.alloc(size);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const size = this.buffer.length;
    if (size === 0) return;
    const part = chunk.length > size ? chunk.subarray(chunk.length - size) : chunk;
    const first = Math.min(part.length, size - this.at);
    part.copy(this.buffer, this.at, 0, first);
    part.copy(this.buffer, 0, first);
    this.at = (this.at + part.length) % size;
  }

  /** What it holds, oldest byte first. */
  contents(): Buffer {
    const size = this.buffer.length;
    if (this.total < size) return this.buffer.subarray(0, this.total);
    return Buffer.concat([this.buffer.subarray(this.at), this.buffer.subarray(0, this.at)]);
  }
}

/** A PooledLog with a cap: write() the raw chunks, keep() the lines ralph acted on, end() before closing. */
export class CappedLog {
  private readonly pooled: PooledLog;
  private readonly ring: TailRing;
  private readonly head: number;
  private written = 0;
  private kept: string[] = [];
  private keptBytes = 0;
  private keptDropped = 0;

  constructor(
    private readonly stream: WriteStream,
    onRoom: () => void,
    maxBytes: number,
  ) {
    this.pooled = new PooledLog(stream, onRoom);
    const { head, tail } = splitCap(maxBytes);
    this.head = head;
    this.ring = new TailRing(tail);
  }

  /** Writes a chunk (valid only during the call); false while the log is behind (pause reading). */
  write(chunk: Buffer): boolean {
    if (this.written >= this.head) {
      this.ring.push(chunk);
      return true;
    }
    const room = this.head - this.written;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.written += part.length;
    const ok = this.pooled.write(part);
    if (part.length < chunk.length) this.ring.push(chunk.subarray(room));
    return ok;
  }

  /** A line ralph acted on: kept whatever the cap, once the head is full. */
  keep(line: string): void {
    if (this.ring.total === 0) return;
    const bytes = Buffer.byteLength(line) + 1;
    if (this.keptBytes + bytes > MAX_KEPT) {
      this.keptDropped += 1;
      return;
    }
    this.kept.push(line);
    this.keptBytes += bytes;
  }

  /** Writes what the head left: the whole rest when it fits, else a note, the kept lines and the tail. */
  end(): void {
    const tail = this.ring.contents();
    const left = this.ring.total - tail.length;
    if (left === 0) {
      if (tail.length > 0) this.stream.write(Buffer.from(tail));
      return;
    }
    const text = tail.toString('latin1');
    const kept = this.kept.filter((line) => !text.includes(Buffer.from(line).toString('latin1')));
    const notes = [
      `\n[ralph: ${left} bytes of output left out here (--log-max-bytes); ${kept.length} line(s) ralph acted on follow${this.keptDropped > 0 ? ` (${this.keptDropped} more not kept)` : ''}, then the last ${tail.length} bytes]\n`,
      ...kept.map((line) => `${line}\n`),
      `[ralph: the last ${tail.length} bytes]\n`,
    ];
    this.stream.write(Buffer.concat([Buffer.from(notes.join('')), tail]));
  }
}
