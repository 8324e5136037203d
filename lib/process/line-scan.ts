// The lines of a long text followed as its bytes pass, without keeping them: where they break, which are
// code fences, whether a line that is only the completion token stands outside code, and the bytes of the
// last line outside code that has any content. That is what a reader of an agent's answer looks at
// (claimsCompletion and fencedLines), so long-text.ts can leave the rest out and keep the answer's meaning.
// JSON string content (`escaped`: `\n` and `\u000a` break lines) or plain bytes.
import { COMPLETION_TOKEN } from '../completion.ts';

const BACKSLASH = 0x5c;
const LF = 0x0a;
const CR = 0x0d;
const TOKEN = [...COMPLETION_TOKEN].map((char) => char.charCodeAt(0));
const ESCAPED: Record<number, number> = { 0x6e: LF, 0x74: 0x09, 0x72: CR, 0x66: 0x0c, 0x62: 0x08, 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f };
/** Bytes kept of a line's end (where the completion token and the sentence before it stand). */
const LINE_KEPT = 4096;

/** JavaScript's trim() white space, for the characters this scan decodes (ASCII and `\u` escapes). */
function isSpace(unit: number): boolean {
  return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d) || (unit > 0x7f && String.fromCharCode(unit).trim() === '');
}

/** What is known of the current line: only white space so far, part of the token, the token, a fence, or other content. */
type LineState = 'space' | 'token' | 'after' | 'fence' | 'dead';

/** Raw bytes of one line (the scan's own copy of its end), less the line break's escape at the end. */
export interface LineBytes {
  parts: Buffer[];
  strip: number;
  /** Its start was dropped (a line longer than LINE_KEPT). */
  cut: boolean;
}

export class LineScan {
  /** 0: no escape; 1: after a backslash; 2–5: reading the 4 hex digits of `\u`. */
  private escape = 0;
  private escapeLength = 0;
  private hex = 0;
  private state: LineState = 'space';
  private matched = 0;
  private fenceChar = 0;
  private marked = false;
  private offset = 0;
  /** The current line started inside a fence, or is a fence line: it can never count as content. */
  private lineFenced = false;
  /** The current line's kept end: its last LINE_KEPT bytes at most, copied into `store`. */
  private store: Buffer | undefined;
  /** The other store, free or holding lastContent's bytes: the two swap when a content line ends. */
  private spare: Buffer | undefined;
  private kept = 0;
  private lineCut = false;
  inFence = false;
  /** Fence state where the kept head ends (at its last line break, or at the end of its unfinished first line). */
  headFence = false;
  /** Bytes of the head up to and including its last line break; -1 when the head has none. */
  headBreakEnd = -1;
  /** Line breaks after the mark. */
  breaksAfterMark = 0;
  /** A line ended after the mark that was the completion token alone, outside a fence. */
  token = false;
  /** The last line ended after the mark with content outside a fence. */
  lastContent: LineBytes | undefined;

  constructor(private readonly escaped: boolean) {}

  /** Everything scanned from now on lies past the kept head. */
  mark(): void {
    this.marked = true;
  }

  /** Bytes still to come of an escape that the scanned bytes ended inside of (`next`: the byte that follows). */
  escapeLeft(next: number | undefined): number {
    if (this.escape === 1) return next === 0x75 ? 5 : 1;
    return this.escape === 0 ? 0 : 6 - this.escape;
  }

  /** Scans `bytes`; with `untilBreak`, stops after the first line break: the offset past it, or -1. */
  scan(bytes: Buffer, untilBreak = false): number {
    let lineStart = 0;
    let at = 0;
    while (at < bytes.length) {
      if (this.escape === 0 && this.state === 'dead') {
        // Nothing on this line can change any more: jump to the next escape, where a line break may be.
        const next = this.escaped ? bytes.indexOf(BACKSLASH, at) : -1;
        if (next === -1) {
          this.offset += bytes.length - at;
          break;
        }
        this.offset += next - at;
        at = next;
      }
      const byte = bytes[at]!;
      at += 1;
      this.offset += 1;
      let unit: number;
      if (this.escape === 1) {
        this.escape = byte === 0x75 ? 2 : 0;
        this.escapeLength = byte === 0x75 ? 6 : 2;
        this.hex = 0;
        if (this.escape === 2) continue;
        unit = ESCAPED[byte] ?? byte;
      } else if (this.escape >= 2) {
        const digit = Number.parseInt(String.fromCharCode(byte), 16);
        this.hex = Number.isNaN(digit) || this.hex < 0 ? -1 : this.hex * 16 + digit;
        this.escape += 1;
        if (this.escape < 6) continue;
        this.escape = 0;
        unit = this.hex < 0 ? 0xfffd : this.hex;
      } else if (byte === BACKSLASH && this.escaped) {
        this.escape = 1;
        continue;
      } else {
        unit = byte < 0x80 ? byte : 0xfffd;
      }
      if (unit === LF) {
        this.lineBreak(bytes.subarray(lineStart, at));
        lineStart = at;
        if (untilBreak) return at;
      } else if (unit !== CR) this.char(unit);
    }
    this.keep(bytes.subarray(lineStart));
    return -1;
  }

  /**
   * Keeps the current line's last LINE_KEPT bytes while it may still be the last content line: copied into
   * a store of this scan's own, never views (the caller may reuse its buffer); earlier bytes are dropped.
   */
  private keep(piece: Buffer): void {
    if (this.lineFenced || piece.length === 0) return;
    const store = (this.store ??= Buffer.allocUnsafe(LINE_KEPT));
    if (piece.length >= LINE_KEPT) {
      if (piece.length > LINE_KEPT || this.kept > 0) this.lineCut = true;
      piece.copy(store, 0, piece.length - LINE_KEPT);
      this.kept = LINE_KEPT;
      return;
    }
    const over = this.kept + piece.length - LINE_KEPT;
    if (over > 0) {
      store.copyWithin(0, over, this.kept);
      this.kept -= over;
      this.lineCut = true;
    }
    this.kept += piece.copy(store, this.kept);
  }

  /** The current line's kept bytes become lastContent; the next line is kept in the other store. */
  private takeLine(strip: number, cut: boolean): LineBytes {
    const parts = this.store && this.kept > 0 ? [this.store.subarray(0, this.kept)] : [];
    [this.store, this.spare] = [this.spare, this.store];
    this.kept = 0;
    return { parts, strip, cut };
  }

  /**
   * The text ended (its last bytes scanned, no line break among them): its last line counts as ended, like
   * any line after the mark. Says what that line is and whether its start had to be dropped.
   */
  finishLine(): { kind: 'content' | 'blank' | 'fenced'; cut: boolean } {
    const kind = this.lineFenced ? 'fenced' : this.state === 'space' ? 'blank' : 'content';
    const cut = this.lineCut;
    if (kind === 'content') {
      if (this.state === 'after' && !this.inFence) this.token = true;
      this.lastContent = this.takeLine(0, cut);
    }
    return { kind, cut };
  }

  private lineBreak(last: Buffer): void {
    if (this.marked) {
      // A head without a line break ends inside the first line: the kept head is that line's start.
      if (this.breaksAfterMark === 0 && this.headBreakEnd === -1) this.headFence = this.inFence;
      this.breaksAfterMark += 1;
      if (this.state === 'after' && !this.inFence) this.token = true;
      if (this.state !== 'space' && !this.lineFenced) {
        this.keep(last);
        this.lastContent = this.takeLine(this.escapeLength || 1, this.lineCut);
      }
    } else {
      this.headBreakEnd = this.offset;
      this.headFence = this.inFence;
    }
    this.state = 'space';
    this.kept = 0;
    this.lineCut = false;
    this.lineFenced = this.inFence;
    this.escapeLength = 0;
  }

  /** One decoded character of the current line (claimsCompletion drops every CR first, so CRs never get here). */
  private char(unit: number): void {
    switch (this.state) {
      case 'space':
        if (isSpace(unit)) return;
        if (unit === 0x60 || unit === 0x7e) {
          this.state = 'fence';
          this.fenceChar = unit;
          this.matched = 1;
        } else if (unit === TOKEN[0]) {
          this.state = 'token';
          this.matched = 1;
        } else this.state = 'dead';
        return;
      case 'fence':
        if (unit !== this.fenceChar) this.state = 'dead';
        else if ((this.matched += 1) === 3) {
          this.inFence = !this.inFence;
          this.lineFenced = true;
          this.kept = 0;
          this.state = 'dead';
        }
        return;
      case 'token':
        if (unit !== TOKEN[this.matched]) this.state = 'dead';
        else if ((this.matched += 1) === TOKEN.length) this.state = 'after';
        return;
      case 'after':
        if (!isSpace(unit)) this.state = 'dead';
        return;
      default:
        return;
    }
  }
}

/** The line's bytes as valid content of the same kind: its break removed, a cut start moved past any split escape or character. */
export function lineText(line: LineBytes, escaped: boolean): Buffer {
  const bytes = Buffer.concat(line.parts);
  const whole = bytes.subarray(0, Math.max(0, bytes.length - line.strip));
  if (!line.cut) return whole;
  for (let start = 0; start < Math.min(8, whole.length); start += 1) {
    if ((whole[start]! & 0xc0) === 0x80) continue;
    const candidate = whole.subarray(start);
    if (!escaped) return candidate;
    try {
      JSON.parse(`"${candidate.toString('utf8')}"`);
      return candidate;
    } catch {
      // inside an escape: one byte further
    }
  }
  return Buffer.alloc(0);
}
