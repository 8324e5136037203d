// A text too long to keep (one string of a 10 MB JSON line, or a 10 MB plain line): its head and tail are
// kept and a marker stands for the bytes between, which are scanned as they pass but never held. The cut
// falls on line breaks where there are any, and the scan (line-scan.ts) keeps what line-based readers of an
// answer would see in the part left out: a completion token alone on a line outside code, the last line
// with content, and the code fences that change what the kept tail means (see claimsCompletion). Works on
// raw bytes: JSON string content when `escaped`, plain bytes otherwise; the result is of the same kind.
import { COMPLETION_TOKEN } from '../completion.ts';
import { LineScan, lineText } from './line-scan.ts';
import { giveBuffer, takeBuffer } from './spare-buffers.ts';

export interface LongTextLimits {
  /** Bytes kept from the start. */
  head: number;
  /** Bytes kept from the end. */
  tail: number;
}

const BACKSLASH = 0x5c;
const EMPTY = Buffer.alloc(0);
/** The byte at `offset` of `pieces` read as one. */
function byteAt(pieces: Buffer[], offset: number): number | undefined {
  for (const piece of pieces) {
    if (offset < piece.length) return piece[offset];
    offset -= piece.length;
  }
  return undefined;
}

/** `pieces` read as one, from `offset` on. */
function piecesFrom(pieces: Buffer[], offset: number): Buffer[] {
  const out: Buffer[] = [];
  for (const piece of pieces) {
    if (offset < piece.length) out.push(offset > 0 ? piece.subarray(offset) : piece);
    offset = Math.max(0, offset - piece.length);
  }
  return out;
}
const FENCE = '```';

/** `end` moved back so that the bytes before it do not end inside a UTF-8 sequence. */
function utf8End(bytes: Buffer, end: number): number {
  let lead = end - 1;
  while (lead >= 0 && end - lead <= 3 && (bytes[lead]! & 0xc0) === 0x80) lead -= 1;
  if (lead < 0 || bytes[lead]! < 0xc0) return end;
  const length = bytes[lead]! >= 0xf0 ? 4 : bytes[lead]! >= 0xe0 ? 3 : 2;
  return end - lead >= length ? end : lead;
}

/** Where an escape that starts before `end` begins, if `end` falls inside it (`\`, `\u12`); else `end`. */
function escapeEnd(bytes: Buffer, end: number): number {
  for (let at = Math.max(0, end - 5); at < end; at += 1) {
    if (bytes[at] !== BACKSLASH) continue;
    let run = 1;
    while (at - run >= 0 && bytes[at - run] === BACKSLASH) run += 1;
    if (run % 2 === 0) continue;
    const size = bytes[at + 1] === 0x75 ? 6 : 2;
    if (at + size > end) return at;
    at += size - 1;
  }
  return end;
}

/** One long text: feed its bytes in order with push(), then take the kept form with end(). */
export class LongText {
  private readonly headParts: Buffer[] = [];
  private headBytes = 0;
  private headFull = false;
  /** The kept end: a ring of `size` bytes (its oldest at `tailStart`), grown as bytes come, up to the tail limit. */
  private ring: Buffer = EMPTY;
  private size = 0;
  private tailStart = 0;
  private tailBytes = 0;
  private dropped = 0;
  private readonly lines: LineScan;
  /** Every byte pushed. */
  total = 0;

  constructor(
    private readonly limits: LongTextLimits,
    private readonly escaped: boolean,
  ) {
    this.lines = new LineScan(escaped);
  }

  push(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.total += bytes.length;
    let rest = bytes;
    if (!this.headFull) {
      const room = this.limits.head - this.headBytes;
      const kept = rest.length <= room ? rest : rest.subarray(0, room);
      // A copy: the caller may reuse its buffer.
      this.headParts.push(Buffer.from(kept));
      this.headBytes += kept.length;
      this.lines.scan(kept);
      if (kept.length === rest.length) return;
      this.headFull = true;
      this.lines.mark();
      rest = rest.subarray(room);
    }
    this.keepTail(rest);
  }

  /**
   * Copies `bytes` into the tail ring; what falls off its front is scanned, oldest first. Owned bytes, not
   * views: the caller may reuse its buffer once push() returns (the runner reads into one buffer).
   */
  private keepTail(bytes: Buffer): void {
    const limit = this.limits.tail;
    let rest = bytes;
    if (rest.length >= limit) {
      this.drop(this.tailBytes);
      const gone = rest.length - limit;
      if (gone > 0) {
        this.dropped += gone;
        this.lines.scan(rest.subarray(0, gone));
      }
      rest = rest.subarray(gone);
    } else this.drop(this.tailBytes + rest.length - limit);
    if (rest.length === 0) return;
    if (this.size < this.tailBytes + rest.length) this.grow(this.tailBytes + rest.length);
    const at = (this.tailStart + this.tailBytes) % this.size;
    const first = Math.min(rest.length, this.size - at);
    rest.copy(this.ring, at, 0, first);
    if (first < rest.length) rest.copy(this.ring, 0, first);
    this.tailBytes += rest.length;
  }

  /** Drops the `count` oldest bytes of the tail, scanning them on the way. */
  private drop(count: number): void {
    if (count <= 0) return;
    for (const piece of this.tailPieces(count)) this.lines.scan(piece);
    this.tailStart = (this.tailStart + count) % this.size;
    this.tailBytes -= count;
    this.dropped += count;
  }

  /** The first `count` bytes of the tail, oldest first: one view of the ring, or two when they wrap. */
  private tailPieces(count = this.tailBytes): Buffer[] {
    if (count === 0) return [];
    const end = this.tailStart + count;
    if (end <= this.size) return [this.ring.subarray(this.tailStart, end)];
    return [this.ring.subarray(this.tailStart, this.size), this.ring.subarray(0, end - this.size)];
  }

  /** A bigger ring (up to the tail limit; a spare one when there is) holding the same bytes from its start. */
  private grow(needed: number): void {
    const want = Math.min(this.limits.tail, Math.max(needed, 4 * this.size, 4096));
    const ring = takeBuffer(want);
    let at = 0;
    for (const piece of this.tailPieces()) at += piece.copy(ring, at);
    giveBuffer(this.ring);
    this.ring = ring;
    this.size = Math.min(ring.length, this.limits.tail);
    this.tailStart = 0;
  }

  /** Gives the ring back for the next long text; this one keeps nothing (end() has been called, or never will be). */
  release(): void {
    giveBuffer(this.ring);
    this.ring = EMPTY;
    this.size = 0;
    this.tailStart = 0;
    this.tailBytes = 0;
  }

  /** True once bytes had to be left out. */
  get cut(): boolean {
    return this.dropped > 0;
  }

  /** The kept form: the whole text when nothing was left out, else head, marker and tail. Ends this text. */
  end(): Buffer {
    const kept = Buffer.concat(this.keptForm());
    this.release();
    return kept;
  }

  /**
   * Hands the kept form to `take` piece by piece (views of this text's buffers: copy them), then ends this
   * text. Returns its size in bytes.
   */
  endInto(take: (piece: Buffer) => void): number {
    let bytes = 0;
    for (const piece of this.keptForm()) {
      take(piece);
      bytes += piece.length;
    }
    this.release();
    return bytes;
  }

  /** The pieces of the kept form, in order (views of the head, the ring and the marker lines). */
  private keptForm(): Buffer[] {
    const head = Buffer.concat(this.headParts, this.headBytes);
    // The tail is read where it is, in the ring (one piece, or two when it wraps).
    const tail = this.tailPieces();
    const tailBytes = this.tailBytes;
    if (this.dropped === 0) return [head, ...tail];
    const lines = this.lines;
    const carried = lines.escapeLeft(byteAt(tail, 0));
    let tailStart = -1;
    for (let base = 0, index = 0; index < tail.length && tailStart === -1; base += tail[index]!.length, index += 1) {
      const at = lines.scan(tail[index]!, true);
      if (at !== -1) tailStart = base + at;
    }
    const tailLines = tailStart !== -1;
    // A tail without a line break is the end of the last line. When that line is short enough for the scan
    // to hold it whole, it is written whole; a longer one keeps the tail after a marker.
    const last = tailLines ? undefined : lines.finishLine();
    const lastCut = last !== undefined && last.kind === 'content' && last.cut;
    if (!tailLines) {
      tailStart = lastCut ? carried : tailBytes;
      while (tailStart < tailBytes && (byteAt(tail, tailStart)! & 0xc0) === 0x80) tailStart += 1;
    }
    const headLines = lines.headBreakEnd !== -1;
    const headEnd = headLines ? lines.headBreakEnd : !lastCut ? 0 : utf8End(head, this.escaped ? escapeEnd(head, head.length) : head.length);
    const left = this.total - headEnd - (tailBytes - tailStart);
    const marker = `[ralph: ${left} bytes left out here; the iteration log has them all]`;
    const breakText = Buffer.from(this.escaped ? '\\n' : '\n');
    const middle: Buffer[] = [];
    const line = (text: string | Buffer): void => {
      middle.push(typeof text === 'string' ? Buffer.from(text) : text, breakText);
    };
    if (lastCut && lines.breaksAfterMark === 0) {
      // What was left out lies inside the last line: the marker stands in it.
      middle.push(Buffer.from(`${headLines || headEnd === 0 ? '' : ' '}${marker} `));
    } else {
      // What was left out spans lines. The marker gets a line of its own inside a fence (or stays on the
      // head's unfinished line), so it never reads as the answer's last words; then come the lines that
      // keep the meaning of what was left out: a completion token alone on its line, the last line with
      // content outside code, and the fence state the tail starts in.
      let fence = headEnd === 0 && !headLines ? false : lines.headFence;
      if (headEnd > 0 && !headLines) middle.push(Buffer.from(` ${marker}`), breakText);
      else if (fence) line(marker);
      else for (const text of [FENCE, marker, FENCE]) line(text);
      const outside = (): void => {
        if (fence) line(FENCE);
        fence = false;
      };
      if (lines.token) {
        outside();
        line(COMPLETION_TOKEN);
      }
      if (lines.lastContent && !lastCut) {
        outside();
        line(lineText(lines.lastContent, this.escaped));
      }
      if (fence !== lines.inFence) line(FENCE);
      if (lastCut) middle.push(Buffer.from(`${marker} `));
    }
    return [head.subarray(0, headEnd), ...middle, ...piecesFrom(tail, tailStart)];
  }
}
