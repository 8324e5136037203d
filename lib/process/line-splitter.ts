import { LongLine } from './long-line.ts';
import { giveBuffer, growBuffer } from './spare-buffers.ts';

/** Longest line handed on whole; the rest of a longer line is counted and dropped so memory stays bounded. */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;
/** Lines longer than this are read as they stream by a bounded scan (long-line.ts) instead of being held. */
export const LONG_LINE_BYTES = 1024 * 1024;

const CR = 13;
const LF = 10;
const EMPTY = Buffer.alloc(0);
/** A gathering buffer up to this size stays with its splitter; a bigger one goes back to the spare buffers. */
const SMALL_LINE = 64 * 1024;

/** Splits a byte stream into lines without ever holding more than one (bounded) line. */
export class LineSplitter {
  /** The line gathered across reads: copied here (the caller may reuse its buffer), `size` bytes of it. */
  private line: Buffer = EMPTY;
  private size = 0;
  private overflowed = false;
  private long: LongLine | undefined;
  truncatedLines = 0;
  /** Lines handed on through the bounded scan (longer than longLineBytes). */
  longLines = 0;

  /**
   * `longLineBytes` (0: off) sends every longer line through LongLine: the line handed on is then its
   * bounded reading (JSON with long strings cut, or head and tail of the text), never the whole line.
   */
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
    private readonly longLineBytes = 0,
  ) {}

  /** Takes the next bytes; nothing is kept of `chunk` itself, so the caller may reuse it after the call. */
  push(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(LF, start); newline !== -1; newline = chunk.indexOf(LF, start)) {
      const length = newline - start;
      if (this.long) {
        this.long.push(chunk.subarray(start, newline));
        this.endLong();
      } else if (this.size === 0 && !this.overflowed && length <= this.maxLineBytes && !this.isLong(length)) {
        // The whole line is in this chunk: decode it where it is, no copy.
        this.emit(chunk.subarray(start, newline));
      } else if (this.isLong(this.size + length)) {
        this.startLong().push(chunk.subarray(start, newline));
        this.endLong();
      } else {
        this.append(chunk.subarray(start, newline));
        this.flushLine();
      }
      start = newline + 1;
    }
    if (start === chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.long) this.long.push(rest);
    else if (this.isLong(this.size + rest.length)) this.startLong().push(rest);
    else this.append(rest);
  }

  /** Emits whatever is left as a last line (output that did not end in a newline). */
  end(): void {
    if (this.long) this.endLong();
    else if (this.size > 0 || this.overflowed) this.flushLine();
  }

  private isLong(length: number): boolean {
    return this.longLineBytes > 0 && !this.overflowed && length > this.longLineBytes;
  }

  /** The line outgrew longLineBytes: what was gathered of it goes to a LongLine, and so will the rest. */
  private startLong(): LongLine {
    const long = new LongLine();
    long.push(this.line.subarray(0, this.size));
    this.release();
    this.long = long;
    return long;
  }

  private endLong(): void {
    const line = this.long!.end();
    this.long = undefined;
    this.longLines += 1;
    this.onLine(line);
  }

  private append(piece: Buffer): void {
    if (piece.length === 0) return;
    const room = this.maxLineBytes - this.size;
    if (room <= 0) {
      this.overflowed = true;
      return;
    }
    const kept = piece.length > room ? piece.subarray(0, room) : piece;
    if (kept.length < piece.length) this.overflowed = true;
    this.line = growBuffer(this.line, this.size, this.size + kept.length);
    this.size += kept.copy(this.line, this.size);
  }

  private flushLine(): void {
    if (this.overflowed) this.truncatedLines += 1;
    this.overflowed = false;
    this.emit(this.line.subarray(0, this.size));
    this.release();
  }

  /** The gathered line is handed on: a small buffer is kept for the next one, a big one given back. */
  private release(): void {
    this.size = 0;
    if (this.line.length <= SMALL_LINE) return;
    giveBuffer(this.line);
    this.line = EMPTY;
  }

  /** Invalid or cut-off UTF-8 becomes U+FFFD; a CRLF line loses its CR. */
  private emit(bytes: Buffer): void {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    this.onLine(bytes.toString('utf8', 0, end));
  }
}
