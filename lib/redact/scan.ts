// Finding secrets in bytes: literal values by Buffer.indexOf, token shapes by their anchor bytes. Works on
// Buffers so the raw logs stay byte-exact and a flood of output is searched at memchr speed.
import { anchoredPrefixes, isTokenByte, type AnchoredPrefix } from './shapes.ts';

/** A secret value to find verbatim, and the name its replacement shows. */
export interface Literal {
  name: string;
  bytes: Buffer;
}

/** Everything one redactor looks for. */
export interface ScanPlan {
  literals: readonly Literal[];
  anchors: Map<number, AnchoredPrefix[]>;
}

/** One secret found: bytes [start, end) of the scanned buffer. */
export interface Match {
  start: number;
  end: number;
  name: string;
  literal: boolean;
}

/** The two bytes before a buffer (already written out), or -1 at the start of the stream. */
export interface Context {
  prev1: number;
  prev2: number;
}

export const STREAM_START: Context = { prev1: -1, prev2: -1 };

const BACKSLASH = 92;
const ESCAPE_LETTERS = new Set([110, 116, 114]); // n t r

export function makePlan(literals: readonly Literal[]): ScanPlan {
  // Longest first: of two values where one contains the other, the longer is named.
  return { literals: [...literals].sort((a, b) => b.bytes.length - a.bytes.length), anchors: anchoredPrefixes() };
}

/**
 * Whether a token may start at `start`: the byte before is not a token byte, or it is the letter of a
 * JSON/C escape (`\n`, `\t`, `\r`), as in `"line one\nsk-ant-…"` inside an agent's JSON output.
 */
export function boundaryAt(data: Buffer, start: number, context: Context): boolean {
  const prev1 = start >= 1 ? data[start - 1]! : context.prev1;
  if (prev1 < 0 || !isTokenByte(prev1)) return true;
  const prev2 = start >= 2 ? data[start - 2]! : start === 1 ? context.prev1 : context.prev2;
  return ESCAPE_LETTERS.has(prev1) && prev2 === BACKSLASH;
}

// Prefixes are a few bytes long: a JS loop beats a call into Buffer.compare at every anchor hit.
function startsWith(data: Buffer, start: number, prefix: Buffer): boolean {
  for (let index = 0; index < prefix.length; index += 1) if (data[start + index] !== prefix[index]) return false;
  return true;
}

function shapeAt(data: Buffer, hit: number, candidates: readonly AnchoredPrefix[], context: Context): Match | undefined {
  for (const { shape, prefix, offset } of candidates) {
    const start = hit - offset;
    if (start < 0 || start + prefix.length > data.length || !startsWith(data, start, prefix)) continue;
    if (!boundaryAt(data, start, context)) continue;
    const bodyStart = start + prefix.length;
    let end = bodyStart;
    let digit = false;
    while (end < data.length && end - bodyStart < shape.maxBody && shape.body(data[end]!)) {
      if (data[end]! >= 48 && data[end]! <= 57) digit = true;
      end += 1;
    }
    if (end - bodyStart < shape.minBody || (shape.needsDigit && !digit)) continue;
    return { start, end, name: shape.name, literal: false };
  }
  return undefined;
}

/** Every secret in `data`, non-overlapping and in order (an earlier start wins, then the longer match). */
export function findSecrets(data: Buffer, plan: ScanPlan, context: Context = STREAM_START): Match[] {
  const found: Match[] = [];
  for (const { name, bytes } of plan.literals) {
    for (let at = data.indexOf(bytes); at !== -1; at = data.indexOf(bytes, at + bytes.length)) {
      found.push({ start: at, end: at + bytes.length, name, literal: true });
    }
  }
  for (const [anchor, candidates] of plan.anchors) {
    for (let hit = data.indexOf(anchor); hit !== -1; hit = data.indexOf(anchor, hit + 1)) {
      const match = shapeAt(data, hit, candidates, context);
      if (match) found.push(match);
    }
  }
  if (found.length <= 1) return found;
  found.sort((a, b) => a.start - b.start || b.end - a.end || Number(b.literal) - Number(a.literal));
  const kept: Match[] = [];
  let reached = 0;
  for (const match of found) {
    if (match.start < reached) continue;
    kept.push(match);
    reached = match.end;
  }
  return kept;
}

const replacements = new Map<string, Buffer>();

/** `[redacted:NAME]` as bytes (cached: the same few names recur). */
export function replacementFor(name: string): Buffer {
  let bytes = replacements.get(name);
  if (!bytes) {
    bytes = Buffer.from(`[redacted:${name}]`);
    replacements.set(name, bytes);
  }
  return bytes;
}

/** `data[from, to)` with the matches inside it replaced; `data` itself (a view) when there are none. */
export function applyMatches(data: Buffer, from: number, to: number, matches: readonly Match[]): Buffer {
  const inside = matches.filter((match) => match.start >= from && match.end <= to);
  if (inside.length === 0) return data.subarray(from, to);
  const pieces: Buffer[] = [];
  let at = from;
  for (const match of inside) {
    pieces.push(data.subarray(at, match.start), replacementFor(match.name));
    at = match.end;
  }
  pieces.push(data.subarray(at, to));
  return Buffer.concat(pieces);
}
