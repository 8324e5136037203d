// Big buffers given back when a long line or text ends, for the next one: a flood of long lines then
// reuses a few instead of allocating megabytes per line, which V8 frees only at its next full collection.
// What is kept here is bounded (SPARE_BYTES); a buffer that does not fit is left to the collector.

/** Buffers smaller than this are not worth keeping. */
const SMALLEST = 64 * 1024;
const SPARE_BYTES = 8 * 1024 * 1024;
const spare: Buffer[] = [];
let spareBytes = 0;

/** A buffer of at least `size` bytes: a spare one when there is (it may be bigger), else a new one. */
export function takeBuffer(size: number): Buffer {
  if (size >= SMALLEST) {
    let best = -1;
    for (let index = 0; index < spare.length; index += 1) {
      if (spare[index]!.length >= size && (best === -1 || spare[index]!.length < spare[best]!.length)) best = index;
    }
    if (best !== -1) {
      const [buffer] = spare.splice(best, 1);
      spareBytes -= buffer!.length;
      return buffer!;
    }
  }
  return Buffer.allocUnsafe(size);
}

/** Gives `buffer` back; its owner must not use it any more. */
export function giveBuffer(buffer: Buffer): void {
  if (buffer.length < SMALLEST || spareBytes + buffer.length > SPARE_BYTES) return;
  spare.push(buffer);
  spareBytes += buffer.length;
}

/**
 * `buffer` if it holds `needed` bytes, else a bigger one (at least twice its size; a spare one when there
 * is) with its first `used` bytes copied over, the old one given back.
 */
export function growBuffer(buffer: Buffer, used: number, needed: number): Buffer {
  if (needed <= buffer.length) return buffer;
  const bigger = takeBuffer(Math.max(needed, 2 * buffer.length, 4096));
  buffer.copy(bigger, 0, 0, used);
  giveBuffer(buffer);
  return bigger;
}
