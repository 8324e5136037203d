// The agent's iteration logs: opened so a failed write is never an uncaught error, and capped so a chatty
// agent cannot fill the disk overnight (--log-max-bytes): the head is written as it comes; past it, only
// the last bytes are held (a ring in a file of its own) and the lines ralph acted on (its result, errors,
// usage limits) are kept; at the end come a note of what was left out, those lines, then the tail.
import { randomBytes } from 'node:crypto';
import { closeSync, createWriteStream, openSync, readSync, unlinkSync, writeSync, type WriteStream } from 'node:fs';
import path from 'node:path';
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

/** Bytes of the tail read at a time, to search it and to copy it into the log. */
const BLOCK = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * The last `size` bytes pushed into it, held in a file beside the log, not in memory: four workers' tails
 * of 4 MB were 17 MB of ralph's resident memory while they flooded (and three copies each at the end). The
 * file is a ring of positional writes, removed as soon as it is opened, so nothing of it is left behind
 * however ralph ends. The writes are synchronous: a chunk is valid only during the call, two writes must
 * not land on the ring out of order, and they rewrite the same few pages, which stay in the page cache.
 */
class TailFile {
  private fd: number | undefined;
  private at = 0;
  private failed = false;
  /** Bytes pushed in all. */
  total = 0;

  constructor(
    private readonly size: number,
    /** The log it is the tail of: its folder holds the ring, and an error names it. */
    private readonly log: string,
    private readonly onError: (error: NodeJS.ErrnoException) => void,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const size = this.size;
    if (size === 0 || this.failed) return;
    try {
      const fd = (this.fd ??= this.open());
      const part = chunk.length > size ? chunk.subarray(chunk.length - size) : chunk;
      const first = Math.min(part.length, size - this.at);
      writeAll(fd, part.subarray(0, first), this.at);
      writeAll(fd, part.subarray(first), 0);
      this.at = (this.at + part.length) % size;
    } catch (error) {
      this.fail(error as NodeJS.ErrnoException);
    }
  }

  /** Bytes it holds. */
  held(): number {
    return Math.min(this.total, this.size);
  }

  /** What it holds, oldest byte first, read into `block` (so each block is valid until the next). */
  *blocks(block: Buffer): Generator<Buffer> {
    const fd = this.fd;
    if (fd === undefined || this.failed) return;
    const ranges = this.total <= this.size ? [[0, this.total]] : [[this.at, this.size - this.at], [0, this.at]];
    for (const [start, length] of ranges as Array<[number, number]>) {
      for (let done = 0; done < length; ) {
        const bytes = readSync(fd, block, 0, Math.min(block.length, length - done), start + done);
        if (bytes === 0) throw Object.assign(new Error(`the tail of ${this.log} ended early`), { code: 'EIO' });
        done += bytes;
        yield block.subarray(0, bytes);
      }
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // nothing of it is needed any more
    }
  }

  fail(error: NodeJS.ErrnoException): void {
    if (this.failed) return;
    this.failed = true;
    this.close();
    // The ring's own name is gone with it: the log is what could not be written.
    error.path = this.log;
    this.onError(error);
  }

  private open(): number {
    const file = path.join(path.dirname(this.log), `.${path.basename(this.log)}.${randomBytes(6).toString('hex')}.tail`);
    const fd = openSync(file, 'wx+', 0o600);
    try {
      unlinkSync(file);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return fd;
  }
}

/** Writes all of `buffer` at `position` of the file (a regular file may take less than asked at once). */
function writeAll(fd: number, buffer: Buffer, position: number): void {
  for (let done = 0; done < buffer.length; ) done += writeSync(fd, buffer, done, buffer.length - done, position + done);
}

/**
 * Which of `needles` occur in the bytes of `blocks` read one after another (across blocks too). A block
 * may be reused for the next: it is copied behind the end of the one before, into one buffer.
 */
export function foundIn(blocks: Iterable<Buffer>, needles: readonly Buffer[]): boolean[] {
  const found = needles.map(() => false);
  if (needles.length === 0) return found;
  const overlap = Math.max(0, ...needles.map((needle) => needle.length - 1));
  let window = EMPTY;
  let carried = 0;
  for (const block of blocks) {
    const size = carried + block.length;
    if (window.length < size) {
      const bigger = Buffer.allocUnsafe(size);
      window.copy(bigger, 0, 0, carried);
      window = bigger;
    }
    block.copy(window, carried);
    const view = window.subarray(0, size);
    needles.forEach((needle, index) => {
      if (!found[index] && view.includes(needle)) found[index] = true;
    });
    if (found.every(Boolean)) break;
    carried = Math.min(overlap, size);
    window.copyWithin(0, size - carried, size);
  }
  return found;
}

/** Writes `chunk` and waits until it is written (or the stream is gone), so its buffer can be reused. */
function written(stream: WriteStream, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('close', done);
      resolve();
    };
    stream.on('close', done);
    stream.write(chunk, done);
  });
}

/**
 * A PooledLog with a cap: write() the raw chunks, keep() the lines ralph acted on, end() before closing (or
 * close() when the log failed). `onError` hears of a tail that cannot be written, naming `file`.
 */
export class CappedLog {
  private readonly pooled: PooledLog;
  private readonly ring: TailFile;
  private readonly head: number;
  private written = 0;
  private kept: string[] = [];
  private keptBytes = 0;
  private keptDropped = 0;

  constructor(
    private readonly stream: WriteStream,
    file: string,
    onRoom: () => void,
    maxBytes: number,
    onError: (error: NodeJS.ErrnoException) => void,
  ) {
    this.pooled = new PooledLog(stream, onRoom);
    const { head, tail } = splitCap(maxBytes);
    this.head = head;
    this.ring = new TailFile(tail, file, onError);
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
  async end(): Promise<void> {
    // One block read at a time and written before the next: the tail never comes back into memory whole.
    const block = Buffer.allocUnsafe(Math.min(BLOCK, this.ring.held()));
    try {
      const held = this.ring.held();
      const left = this.ring.total - held;
      if (left > 0) {
        // A kept line still in the tail is not written twice.
        const inTail = foundIn(this.ring.blocks(block), this.kept.map((line) => Buffer.from(line)));
        const kept = this.kept.filter((_, index) => !inTail[index]);
        const notes = [
          `\n[ralph: ${left} bytes of output left out here (--log-max-bytes); ${kept.length} line(s) ralph acted on follow${this.keptDropped > 0 ? ` (${this.keptDropped} more not kept)` : ''}, then the last ${held} bytes]\n`,
          ...kept.map((line) => `${line}\n`),
          `[ralph: the last ${held} bytes]\n`,
        ];
        this.stream.write(notes.join(''));
      }
      for (const part of this.ring.blocks(block)) {
        if (this.stream.destroyed) break;
        await written(this.stream, part);
      }
    } catch (error) {
      this.ring.fail(error as NodeJS.ErrnoException);
    } finally {
      this.ring.close();
    }
  }

  /** Lets the tail go without writing it (the log failed). */
  close(): void {
    this.ring.close();
  }
}
