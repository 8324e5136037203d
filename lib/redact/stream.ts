// Redaction of a byte stream (an agent's raw output on its way to the iteration log): a secret split
// across two reads is still caught, and every other byte passes through unchanged. Only the bytes that
// could be the start of a secret are held back, never more than the longest secret.
import { applyMatches, findSecrets, STREAM_START, type Context, type ScanPlan } from './scan.ts';
import { isTokenByte, MAX_SHAPE_LENGTH } from './shapes.ts';

const EMPTY = Buffer.alloc(0);

export class StreamRedactor {
  private pending: Buffer = EMPTY;
  private context: Context = STREAM_START;
  /** Where the held bytes and the next chunk are joined, and where the held bytes are kept: reused, never reallocated per chunk. */
  private joined: Buffer = EMPTY;
  private store: Buffer = EMPTY;

  constructor(private readonly plan: ScanPlan) {}

  /** Bytes held back so far (for tests and the bound: at most about twice the longest secret). */
  get held(): number {
    return this.pending.length;
  }

  /**
   * Takes the next chunk; returns what can be written now: a view of `chunk` or of a buffer this redactor
   * reuses, so it is valid only until the next push() (copy what is kept longer). `chunk` itself is not kept.
   */
  push(chunk: Buffer): Buffer {
    if (chunk.length === 0) return EMPTY;
    const data = this.pending.length === 0 ? chunk : this.join(chunk);
    const matches = findSecrets(data, this.plan, this.context);
    let cut = this.holdFrom(data);
    // A secret found across the cut is held whole; the next chunk decides nothing about it.
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of matches) {
        if (match.start < cut && match.end > cut) {
          cut = match.start;
          moved = true;
        }
      }
    }
    const out = applyMatches(data, 0, cut, matches);
    this.remember(data, cut);
    this.pending = this.hold(data.subarray(cut));
    return out;
  }

  /** The held bytes followed by `chunk`, in the reused join buffer. */
  private join(chunk: Buffer): Buffer {
    const size = this.pending.length + chunk.length;
    if (this.joined.length < size) this.joined = Buffer.allocUnsafe(Math.max(size, 2 * this.joined.length));
    this.pending.copy(this.joined);
    chunk.copy(this.joined, this.pending.length);
    return this.joined.subarray(0, size);
  }

  /** A copy of `bytes` (the end of the data, which may be the caller's buffer) in the reused hold buffer. */
  private hold(bytes: Buffer): Buffer {
    if (bytes.length === 0) return EMPTY;
    if (this.store.length < bytes.length) this.store = Buffer.allocUnsafe(Math.max(bytes.length, 2 * this.store.length, 64));
    bytes.copy(this.store);
    return this.store.subarray(0, bytes.length);
  }

  /** The end of the stream: whatever was held, redacted. */
  end(): Buffer {
    if (this.pending.length === 0) return EMPTY;
    const data = this.pending;
    this.pending = EMPTY;
    const out = applyMatches(data, 0, data.length, findSecrets(data, this.plan, this.context));
    this.remember(data, data.length);
    return out;
  }

  /** Where the bytes that might begin a secret start: a prefix of a secret value, or a short trailing token. */
  private holdFrom(data: Buffer): number {
    const length = data.length;
    let hold = length;
    for (const { bytes } of this.plan.literals) {
      const reach = Math.min(bytes.length - 1, length);
      for (let at = data.indexOf(bytes[0]!, length - reach); at !== -1 && at < hold; at = data.indexOf(bytes[0]!, at + 1)) {
        if (data.compare(bytes, 0, length - at, at, length) === 0) {
          hold = at;
          break;
        }
      }
    }
    // A token shape starts where a run of token bytes starts. A run that reaches the end and began less
    // than the longest shape ago may still grow into one; a longer run's shape (if any) is already whole.
    let runStart = length;
    while (runStart > 0 && length - runStart <= MAX_SHAPE_LENGTH && isTokenByte(data[runStart - 1]!)) runStart -= 1;
    const short = runStart < length && length - runStart <= MAX_SHAPE_LENGTH;
    const beganBefore = runStart === 0 && this.context.prev1 >= 0 && isTokenByte(this.context.prev1);
    if (short && !beganBefore) hold = Math.min(hold, runStart);
    return hold;
  }

  private remember(data: Buffer, cut: number): void {
    if (cut >= 2) this.context = { prev1: data[cut - 1]!, prev2: data[cut - 2]! };
    else if (cut === 1) this.context = { prev1: data[0]!, prev2: this.context.prev1 };
  }
}
