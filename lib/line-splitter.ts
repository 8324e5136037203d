import { StringDecoder } from 'node:string_decoder';

/** Longest line handed on whole; the rest of a longer line is counted and dropped so memory stays bounded. */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;

/** Splits a byte stream into lines without ever holding more than one (bounded) line. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private overflowed = false;
  truncatedLines = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.append(chunk.subarray(start, newline));
      this.flushLine();
      start = newline + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
  }

  /** Emits whatever is left as a last line (output that did not end in a newline). */
  end(): void {
    if (this.size > 0 || this.overflowed) this.flushLine();
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
    // Copy: the chunk's memory is reused by the stream after this call.
    this.parts.push(Buffer.from(kept));
    this.size += kept.length;
  }

  private flushLine(): void {
    const buffer = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    if (this.overflowed) this.truncatedLines += 1;
    this.parts = [];
    this.size = 0;
    this.overflowed = false;
    let line = new StringDecoder('utf8').end(buffer);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    this.onLine(line);
  }
}
