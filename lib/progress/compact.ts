// Keeps a progress.txt small enough to stay useful: past a size, the oldest iteration entries move verbatim
// to progress.archive.txt beside it. The header, the `## Codebase Patterns` section and the latest entries
// stay, with one pointer line to the archive. Nothing is ever deleted. Works on bytes, not text, so what moves
// is byte for byte what was there (whatever its encoding) and a 50 MB log costs one buffer, not a million strings.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../repo/fs-atomic.ts';

/** Size past which progress.txt is compacted (option `progress-max-bytes`). */
export const DEFAULT_PROGRESS_MAX_BYTES = 256 * 1024;
/** How many of the latest entries stay in progress.txt (fewer when they would not fit in half the limit). */
export const DEFAULT_KEEP_ENTRIES = 20;
export const ARCHIVE_FILE = 'progress.archive.txt';
/** The one line that points at the archive: `> Older iterations: progress.archive.txt (N entries)`. */
export const POINTER_LINE = /^> Older iterations: .*\(\d+ entr(?:y|ies)\)\s*$/;

export interface CompactOptions {
  maxBytes: number;
  keepEntries: number;
  /** Matches the first line of an iteration entry, a `## ` heading (tested without its line ending). */
  entryHeading: RegExp;
}

export interface CompactResult {
  compacted: boolean;
  /** Entries moved by this call. */
  archived: number;
  /** Entries left in the file; undefined when the file was within the limit and so not even read. */
  kept: number | undefined;
  archiveFile: string;
  bytesBefore: number;
  bytesAfter: number;
}

/** A piece of the file from one `## ` heading up to the next, as byte offsets. */
interface Block {
  kind: 'entry' | 'patterns' | 'other';
  start: number;
  end: number;
}

const PATTERNS = /^##\s+codebase patterns\s*$/i;
const LEVEL2 = /^##\s/;
const HASH = 0x23;
const LF = 0x0a;

const lineEnd = (data: Buffer, start: number): number => {
  const newline = data.indexOf(LF, start);
  return newline === -1 ? data.length : newline + 1;
};
/** One line's text without its line ending. */
const lineText = (data: Buffer, start: number, end: number): string => data.toString('utf8', start, end).replace(/\r?\n$/, '');

/** Where the preamble (everything before the first entry) ends, and the blocks after it, each from a `## ` heading. */
function parseBlocks(data: Buffer, entryHeading: RegExp): { preambleEnd: number; blocks: Block[] } {
  const blocks: Block[] = [];
  let preambleEnd = data.length;
  for (let start = 0; start < data.length; start = lineEnd(data, start)) {
    if (data[start] !== HASH) continue;
    const line = lineText(data, start, lineEnd(data, start));
    const isEntry = entryHeading.test(line);
    if (!isEntry && (blocks.length === 0 || !LEVEL2.test(line))) continue;
    if (blocks.length === 0) preambleEnd = start;
    const last = blocks.at(-1);
    if (last) last.end = start;
    blocks.push({ kind: isEntry ? 'entry' : PATTERNS.test(line.trim()) ? 'patterns' : 'other', start, end: data.length });
  }
  return { preambleEnd, blocks };
}

function countEntries(data: Buffer, entryHeading: RegExp): number {
  let count = 0;
  for (let start = 0; start < data.length; start = lineEnd(data, start)) {
    if (data[start] === HASH && entryHeading.test(lineText(data, start, lineEnd(data, start)))) count += 1;
  }
  return count;
}

/** The entry count an earlier compaction's pointer line gives, so a big archive need not be read again. */
function pointerCount(preamble: Buffer): number | undefined {
  for (let start = 0; start < preamble.length; start = lineEnd(preamble, start)) {
    const line = lineText(preamble, start, lineEnd(preamble, start));
    if (POINTER_LINE.test(line)) return Number(/\((\d+) entr/.exec(line)![1]);
  }
  return undefined;
}

/** Whether the last byte of a file is a newline (true for a missing or empty file). */
function endsWithNewline(file: string): boolean {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return true;
  }
  if (size === 0) return true;
  const fd = openSync(file, 'r');
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === LF;
  } finally {
    closeSync(fd);
  }
}

/** Appends the pieces and syncs, so the archive is on disk before progress.txt loses the entries. */
function appendDurably(file: string, pieces: readonly Buffer[]): void {
  const fd = openSync(file, 'a');
  try {
    for (const piece of pieces) for (let done = 0; done < piece.length; ) done += writeSync(fd, piece, done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Neighbouring blocks as one range, so the usual single run of old entries is one write. */
function coalesce(blocks: readonly Block[]): Block[] {
  const ranges: Block[] = [];
  for (const block of blocks) {
    const last = ranges.at(-1);
    if (last && last.end === block.start) last.end = block.end;
    else ranges.push({ ...block });
  }
  return ranges;
}

/** What stays: the preamble with exactly one pointer line (an old one is updated in place), then the kept blocks. */
function keptBytes(preamble: Buffer, kept: readonly Buffer[], pointer: string, eol: string): Buffer {
  const out: Buffer[] = [];
  let placed = false;
  for (let start = 0; start < preamble.length; start = lineEnd(preamble, start)) {
    const end = lineEnd(preamble, start);
    if (!POINTER_LINE.test(lineText(preamble, start, end))) out.push(preamble.subarray(start, end));
    else if (!placed) {
      out.push(Buffer.from(pointer + eol));
      placed = true;
    }
  }
  if (!placed) {
    // At the end of the preamble, right before the first kept entry, followed by a blank line.
    if (preamble.length > 0 && preamble[preamble.length - 1] !== LF) out.push(Buffer.from(eol));
    out.push(Buffer.from(pointer + eol + eol));
  }
  return Buffer.concat([...out, ...kept]);
}

/**
 * Compacts `file` when it is larger than `maxBytes`: the oldest entries (and whatever else lies between
 * them, except the patterns section) are appended verbatim to progress.archive.txt beside it, then the
 * file is rewritten atomically with the rest. The archive is written first, so a crash in between
 * duplicates entries rather than losing them. A file at or under the limit is not even read.
 */
export function compactProgress(file: string, options: CompactOptions): CompactResult {
  const archiveFile = path.join(path.dirname(file), ARCHIVE_FILE);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return { compacted: false, archived: 0, kept: undefined, archiveFile, bytesBefore: 0, bytesAfter: 0 };
  }
  // The common case, after every iteration.
  if (size <= options.maxBytes) return { compacted: false, archived: 0, kept: undefined, archiveFile, bytesBefore: size, bytesAfter: size };
  const data = readFileSync(file);
  const unchanged = (kept: number): CompactResult => ({ compacted: false, archived: 0, kept, archiveFile, bytesBefore: data.length, bytesAfter: data.length });
  // A global or sticky regex would carry lastIndex from one test() to the next.
  const heading = new RegExp(options.entryHeading.source, options.entryHeading.flags.replace(/[gy]/g, ''));
  const { preambleEnd, blocks } = parseBlocks(data, heading);
  const entryIndexes = blocks.flatMap((block, index) => (block.kind === 'entry' ? [index] : []));
  const entries = entryIndexes.length;
  if (entries === 0) return unchanged(0);

  const eol = data.subarray(0, 4096).includes('\r\n') ? '\r\n' : '\n';
  const preamble = data.subarray(0, preambleEnd);
  const bytesOf = (block: Block): Buffer => data.subarray(block.start, block.end);
  const archivedSoFar = pointerCount(preamble) ?? (existsSync(archiveFile) ? countEntries(readFileSync(archiveFile), heading) : 0);

  // Keep the latest `keepEntries`, fewer while the result is over half the limit (the pointer counted too).
  let keep = Math.min(Math.max(0, options.keepEntries), entries);
  const split = (count: number) => {
    const cut = count === 0 ? blocks.length : entryIndexes[entries - count]!;
    const older = blocks.slice(0, cut);
    const moved = older.filter((block) => block.kind !== 'patterns');
    const stays = [...older.filter((block) => block.kind === 'patterns'), ...blocks.slice(cut)].map(bytesOf);
    const movedEntries = moved.filter((block) => block.kind === 'entry').length;
    const total = archivedSoFar + movedEntries;
    const pointer = `> Older iterations: ${ARCHIVE_FILE} (${total} ${total === 1 ? 'entry' : 'entries'})`;
    return { moved, movedEntries, kept: keptBytes(preamble, stays, pointer, eol) };
  };
  let plan = split(keep);
  while (keep > 0 && plan.kept.length > options.maxBytes / 2) {
    keep -= 1;
    plan = split(keep);
  }
  if (plan.movedEntries === 0) return unchanged(entries);

  appendDurably(archiveFile, [...(endsWithNewline(archiveFile) ? [] : [Buffer.from(eol)]), ...coalesce(plan.moved).map(bytesOf)]);
  writeFileAtomic(file, plan.kept);
  return { compacted: true, archived: plan.movedEntries, kept: keep, archiveFile, bytesBefore: data.length, bytesAfter: plan.kept.length };
}

/** The limit a run uses: option `progress-max-bytes` (flag, RALPH_PROGRESS_MAX_BYTES or config file), else the default. */
export function progressMaxBytes(extra: ReadonlyMap<string, unknown>): number {
  const value = extra.get('progress-max-bytes');
  return typeof value === 'number' && value > 0 ? value : DEFAULT_PROGRESS_MAX_BYTES;
}

/** What the sources call after appending an entry: compacts with the run's limit; a failure only warns. */
export function compactAfterAppend(file: string, entryHeading: RegExp, extra: ReadonlyMap<string, unknown>, warn: (message: string) => void): CompactResult | undefined {
  try {
    return compactProgress(file, { maxBytes: progressMaxBytes(extra), keepEntries: DEFAULT_KEEP_ENTRIES, entryHeading });
  } catch (error) {
    warn(`could not move old entries of ${file} to ${ARCHIVE_FILE}: ${(error as Error).message}; the log keeps growing`);
    return undefined;
  }
}
