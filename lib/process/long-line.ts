// A line too long to read whole (a 10 MB stream-json event): read once as it streams, keeping its shape
// and every short value, each long string cut to its head and tail (long-text.ts), so that the line handed
// on is small and still tells the agent adapters what they read (the event type, whether it is the final
// result, its answer, usage and cost). Memory stays bounded whatever the line's length: it is never decoded,
// concatenated or JSON.parse'd whole. A line that is not a JSON object, or stops being valid JSON, is handed
// on as its own head and tail with a marker between.
import { LongText, type LongTextLimits } from './long-text.ts';
import { giveBuffer, growBuffer } from './spare-buffers.ts';

/** Kept of the first long string of a line (the answer of a result event, the text of a message). */
const FIRST_TEXT: LongTextLimits = { head: 16 * 1024, tail: 512 * 1024 };
/** Kept at least of every other long string, once the line's share is spent. */
const LAST_TEXT: LongTextLimits = { head: 1024, tail: 2048 };
const KEY: LongTextLimits = { head: 256, tail: 256 };
/** Bytes of string values a line keeps in all (past it, strings get LAST_TEXT). */
const TEXT_BUDGET = 1024 * 1024;
/** Past this many bytes of output, further members and elements are left out (their containers still close). */
const OUT_BUDGET = 2 * 1024 * 1024;
const MAX_DEPTH = 64;
const MAX_SCALAR = 32;

const QUOTE = 0x22;
const EMPTY = Buffer.alloc(0);
const BACKSLASH = 0x5c;

type State = 'start' | 'key' | 'colon' | 'value' | 'after' | 'string' | 'scalar' | 'done' | 'error' | 'text';

interface Frame {
  kind: 'object' | 'array';
  /** Members written so far (for the commas). */
  members: number;
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function isScalarByte(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || byte === 0x2b || byte === 0x2d || byte === 0x2e;
}

/** One long line: push() its bytes as they arrive (no newline), then end() gives the line to hand on. */
export class LongLine {
  private state: State = 'start';
  private readonly stack: Frame[] = [];
  /** The line to hand on, as UTF-8 bytes: decoded once at the end, so a long string is never a string of its own first. */
  private out: Buffer = EMPTY;
  private outBytes = 0;
  /** Stack depth of a member being left out (over budget); -1 when writing. */
  private skipLevel = -1;
  private textBudget = TEXT_BUDGET;
  private text: LongText | undefined;
  private isKey = false;
  /** Backslashes ending the current string's bytes so far (whether its next `"` is escaped). */
  private backslashes = 0;
  private scalar = '';
  /** The whole line as raw text, for a line that turns out not to be a JSON object. */
  private readonly raw = new LongText(FIRST_TEXT, false);

  push(chunk: Buffer): void {
    this.raw.push(chunk);
    let at = 0;
    while (at < chunk.length) {
      if (this.state === 'text' || this.state === 'error') return;
      if (this.state === 'string') at = this.inString(chunk, at);
      else if (this.state === 'scalar') at = this.inScalar(chunk, at);
      else {
        const byte = chunk[at]!;
        at += 1;
        if (!isSpace(byte)) this.structural(byte);
      }
    }
  }

  /** The line to hand on: the JSON object with its long strings cut, or the raw text's head and tail. */
  end(): string {
    if (this.state === 'done') {
      this.raw.release();
      const line = this.out.toString('utf8', 0, this.outBytes);
      giveBuffer(this.out);
      this.out = EMPTY;
      return line;
    }
    // Not a JSON object after all: the raw text's kept form, decoded from the same buffer.
    this.outBytes = 0;
    this.raw.endInto((piece) => this.writeBytes(piece));
    const text = this.out.toString('utf8', 0, this.outBytes);
    giveBuffer(this.out);
    this.out = EMPTY;
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  }

  private write(text: string): void {
    if (this.skipLevel !== -1) return;
    this.room(Buffer.byteLength(text));
    this.outBytes += this.out.write(text, this.outBytes);
  }

  private writeBytes(piece: Buffer): void {
    this.room(piece.length);
    this.outBytes += piece.copy(this.out, this.outBytes);
  }

  private room(bytes: number): void {
    this.out = growBuffer(this.out, this.outBytes, this.outBytes + bytes);
  }

  /** A member (object key or array element) starts: a comma before it, or left out when over budget. */
  private openMember(): void {
    if (this.skipLevel !== -1) return;
    if (this.outBytes > OUT_BUDGET) {
      this.skipLevel = this.stack.length;
      return;
    }
    const frame = this.stack.at(-1)!;
    if (frame.members > 0) this.write(',');
    frame.members += 1;
  }

  private valueEnded(): void {
    if (this.skipLevel === this.stack.length) this.skipLevel = -1;
    this.state = this.stack.length === 0 ? 'done' : 'after';
  }

  private open(kind: Frame['kind']): void {
    if (this.stack.length >= MAX_DEPTH) {
      this.state = 'error';
      return;
    }
    this.write(kind === 'object' ? '{' : '[');
    this.stack.push({ kind, members: 0 });
    this.state = kind === 'object' ? 'key' : 'value';
  }

  private close(kind: Frame['kind']): void {
    if (this.stack.at(-1)?.kind !== kind) {
      this.state = 'error';
      return;
    }
    this.stack.pop();
    this.write(kind === 'object' ? '}' : ']');
    this.valueEnded();
  }

  private structural(byte: number): void {
    const frame = this.stack.at(-1);
    switch (this.state) {
      case 'start':
        if (byte === 0x7b) this.open('object');
        else this.state = 'text';
        return;
      case 'key':
        if (byte === QUOTE) {
          this.openMember();
          this.startString(true);
        } else if (byte === 0x7d) this.close('object');
        else this.state = 'error';
        return;
      case 'colon':
        this.state = byte === 0x3a ? 'value' : 'error';
        return;
      case 'after':
        if (byte === 0x2c) this.state = frame!.kind === 'object' ? 'key' : 'value';
        else if (byte === 0x7d) this.close('object');
        else if (byte === 0x5d) this.close('array');
        else this.state = 'error';
        return;
      case 'value':
        if (byte === 0x5d && frame?.kind === 'array' && frame.members === 0) {
          this.close('array');
          return;
        }
        if (frame?.kind === 'array') this.openMember();
        if (byte === QUOTE) this.startString(false);
        else if (byte === 0x7b) this.open('object');
        else if (byte === 0x5b) this.open('array');
        else if (isScalarByte(byte)) {
          this.state = 'scalar';
          this.scalar = String.fromCharCode(byte);
        } else this.state = 'error';
        return;
      default:
        // 'done': anything but white space after the object is not JSON.
        this.state = 'error';
    }
  }

  private startString(isKey: boolean): void {
    this.state = 'string';
    this.isKey = isKey;
    this.backslashes = 0;
    if (this.skipLevel !== -1) {
      this.text = undefined;
      return;
    }
    if (isKey) {
      this.text = new LongText(KEY, true);
      return;
    }
    const head = Math.min(FIRST_TEXT.head, Math.max(LAST_TEXT.head, this.textBudget >> 4));
    const tail = Math.min(FIRST_TEXT.tail, Math.max(LAST_TEXT.tail, this.textBudget - head));
    this.text = new LongText({ head, tail }, true);
  }

  /** Reads string bytes up to the closing quote (one not escaped); returns where reading stopped. */
  private inString(chunk: Buffer, at: number): number {
    for (let from = at; ; ) {
      const quote = chunk.indexOf(QUOTE, from);
      if (quote === -1) {
        this.text?.push(chunk.subarray(at));
        this.countBackslashes(chunk, at, chunk.length);
        return chunk.length;
      }
      let run = 0;
      while (quote - run - 1 >= at && chunk[quote - run - 1] === BACKSLASH) run += 1;
      if (quote - run === at) run += this.backslashes;
      if (run % 2 === 1) {
        from = quote + 1;
        continue;
      }
      this.text?.push(chunk.subarray(at, quote));
      this.endString();
      return quote + 1;
    }
  }

  private countBackslashes(chunk: Buffer, start: number, end: number): void {
    let run = 0;
    while (end - run - 1 >= start && chunk[end - run - 1] === BACKSLASH) run += 1;
    this.backslashes = end - run === start ? this.backslashes + run : run;
  }

  private endString(): void {
    const text = this.text;
    this.text = undefined;
    if (this.isKey) {
      if (text) {
        this.write('"');
        text.endInto((piece) => this.writeBytes(piece));
        this.write('":');
      }
      this.state = 'colon';
      return;
    }
    if (text) {
      this.write('"');
      this.textBudget = Math.max(0, this.textBudget - text.endInto((piece) => this.writeBytes(piece)));
      this.write('"');
    }
    this.valueEnded();
  }

  private inScalar(chunk: Buffer, at: number): number {
    let end = at;
    while (end < chunk.length && isScalarByte(chunk[end]!)) end += 1;
    if (this.scalar.length <= MAX_SCALAR) this.scalar += chunk.toString('latin1', at, Math.min(end, at + MAX_SCALAR + 1));
    if (end === chunk.length) return end;
    // A number longer than any real one would not survive being cut: it becomes null.
    this.write(this.scalar.length > MAX_SCALAR ? 'null' : this.scalar);
    this.scalar = '';
    this.valueEnded();
    return end;
  }
}
