// prd.json in either shape: snarktank (`userStories[]` with `passes`) or rulebook (`tasks[]` with `status`).
// Validation is pure and reports the first problem as a JSON path plus what was expected; the raw
// objects are kept so a write-back preserves every field ralph does not know.
import { readFileSync } from 'node:fs';
import { RalphError } from '../../errors.ts';
import { writeFileAtomic } from '../../repo/fs-atomic.ts';

export type PrdShape = 'snarktank' | 'rulebook';
export const PRD_STATUSES = ['pending', 'in_iteration', 'completed', 'blocked'] as const;
export type PrdStatus = (typeof PRD_STATUSES)[number];

/** One task or user story, normalised; `raw` is the object in the document, edited in place on writes. */
export interface PrdItem {
  index: number;
  id: string;
  title: string;
  description?: string;
  priority?: number;
  status: PrdStatus;
  acceptanceCriteria: string[];
  estimatedComplexity?: string;
  iterationNumber?: number;
  startedAt?: string;
  /** Failed iterations on this item so far. */
  attempts: number;
  lastError?: string;
  raw: Record<string, unknown>;
}

export interface PrdDocument {
  file: string;
  shape: PrdShape;
  data: Record<string, unknown>;
  items: PrdItem[];
  /** The original indentation, kept on write-back so diffs stay small. */
  indent: string;
}

export type PrdValidation =
  | { ok: true; shape: PrdShape; items: PrdItem[] }
  | { ok: false; path: string; expected: string; found: string };

/** Thrown for a prd.json that cannot be read or does not match either shape; the file is left as it is. */
export class PrdFormatError extends RalphError {
  readonly file: string;
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`, { hint: 'fix the file (ralph never rewrites a malformed prd.json), or run ralph init to generate one' });
    this.name = 'PrdFormatError';
    this.file = file;
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

class Invalid {
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly found: string,
  ) {}
}

function fail(at: string, expected: string, value: unknown): never {
  throw new Invalid(at, expected, describeValue(value));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(record: Record<string, unknown>, key: string, at: string): string | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') fail(`${at}.${key}`, 'a string', value);
  return value;
}

function optionalNumber(record: Record<string, unknown>, key: string, at: string, what: 'a number' | 'a whole number of at least 0' | 'a whole number of at least 1'): number | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(`${at}.${key}`, what, value);
  if (what !== 'a number' && (!Number.isInteger(value) || value < (what.endsWith('1') ? 1 : 0))) fail(`${at}.${key}`, what, value);
  return value;
}

function readId(record: Record<string, unknown>, at: string): string {
  const value = record.id;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.trim() === '') fail(`${at}.id`, 'a non-empty string', value);
  return value;
}

function readTitle(record: Record<string, unknown>, at: string): string {
  const value = record.title;
  if (typeof value !== 'string' || value.trim() === '') fail(`${at}.title`, 'a non-empty string', value);
  return value;
}

function readCriteria(record: Record<string, unknown>, at: string): string[] {
  const value = record.acceptanceCriteria;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(`${at}.acceptanceCriteria`, 'an array of strings', value);
  return value.map((item, index) => {
    if (typeof item !== 'string') fail(`${at}.acceptanceCriteria[${index}]`, 'a string', item);
    return item;
  });
}

function readStatus(record: Record<string, unknown>, at: string, fallback: PrdStatus): PrdStatus {
  const value = record.status;
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !(PRD_STATUSES as readonly string[]).includes(value)) {
    fail(`${at}.status`, `one of ${PRD_STATUSES.join(', ')}`, value);
  }
  return value as PrdStatus;
}

function readItem(raw: unknown, index: number, shape: PrdShape): PrdItem {
  const at = `$.${shape === 'snarktank' ? 'userStories' : 'tasks'}[${index}]`;
  if (!isObject(raw)) fail(at, 'an object', raw);
  const id = readId(raw, at);
  const title = readTitle(raw, at);
  let status: PrdStatus;
  if (shape === 'snarktank') {
    const passes = raw.passes;
    if (passes !== undefined && typeof passes !== 'boolean') fail(`${at}.passes`, 'true or false', passes);
    // `passes` is what snarktank tools read, so it wins; `status` only adds ralph's in-between states.
    const recorded = readStatus(raw, at, 'pending');
    status = passes === true ? 'completed' : recorded === 'completed' ? 'pending' : recorded;
  } else {
    status = readStatus(raw, at, 'pending');
  }
  const complexity = raw.estimatedComplexity;
  if (complexity !== undefined && complexity !== null && typeof complexity !== 'string' && typeof complexity !== 'number') {
    fail(`${at}.estimatedComplexity`, 'a string or a number', complexity);
  }
  return {
    index,
    id,
    title,
    description: optionalString(raw, 'description', at),
    priority: optionalNumber(raw, 'priority', at, 'a number'),
    status,
    acceptanceCriteria: readCriteria(raw, at),
    estimatedComplexity: complexity === undefined || complexity === null ? undefined : String(complexity),
    iterationNumber: optionalNumber(raw, 'iterationNumber', at, 'a whole number of at least 1'),
    startedAt: optionalString(raw, 'startedAt', at),
    attempts: optionalNumber(raw, 'attempts', at, 'a whole number of at least 0') ?? 0,
    lastError: optionalString(raw, 'lastError', at),
    raw,
  };
}

/** Checks parsed JSON against both shapes; the first problem comes back as a JSON path and an expectation. */
export function validatePrd(data: unknown): PrdValidation {
  try {
    if (!isObject(data)) fail('$', 'an object with a "userStories" or "tasks" array', data);
    const hasStories = data.userStories !== undefined;
    const hasTasks = data.tasks !== undefined;
    if (hasStories && hasTasks) fail('$', 'either "userStories" (snarktank) or "tasks" (rulebook), not both', data);
    if (!hasStories && !hasTasks) fail('$', 'an object with a "userStories" or "tasks" array', data);
    const shape: PrdShape = hasStories ? 'snarktank' : 'rulebook';
    const key = hasStories ? 'userStories' : 'tasks';
    const list = data[key];
    if (!Array.isArray(list)) fail(`$.${key}`, 'an array', list);
    const items = list.map((raw, index) => readItem(raw, index, shape));
    const seen = new Map<string, number>();
    for (const item of items) {
      const first = seen.get(item.id);
      if (first !== undefined) fail(`$.${key}[${item.index}].id`, `a unique id ("${item.id}" is also used by $.${key}[${first}])`, item.raw.id);
      seen.set(item.id, item.index);
    }
    return { ok: true, shape, items };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, path: error.path, expected: error.expected, found: error.found };
    throw error;
  }
}

/** `position 45` in a JSON.parse message → `line 3, column 7`. */
function syntaxLocation(text: string, message: string): string {
  const match = /position (\d+)/.exec(message);
  if (!match) return '';
  const offset = Number(match[1]);
  const before = text.slice(0, offset).split('\n');
  return ` at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

function detectIndent(text: string): string {
  const match = /^\{\s*\n([ \t]+)\S/.exec(text);
  return match?.[1] ?? '  ';
}

/** Parses and validates prd.json text; throws PrdFormatError naming the file and the first problem. */
export function parsePrd(text: string, file: string): PrdDocument {
  if (text.trim() === '') throw new PrdFormatError(file, 'the file is empty: expected a JSON object with a "userStories" or "tasks" array');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    throw new PrdFormatError(file, `not valid JSON${syntaxLocation(text, message)}: ${message}`);
  }
  const result = validatePrd(data);
  if (!result.ok) throw new PrdFormatError(file, `${result.path}: expected ${result.expected}, found ${result.found}`);
  return { file, shape: result.shape, data: data as Record<string, unknown>, items: result.items, indent: detectIndent(text) };
}

/** Reads and validates a prd.json file. */
export function readPrd(file: string): PrdDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PrdFormatError(file, code === 'ENOENT' ? 'file not found' : `cannot read: ${(error as Error).message}`);
  }
  return parsePrd(text, file);
}

/** The document as text: the original indentation, every unknown field kept, a final newline. */
export function serializePrd(doc: PrdDocument): string {
  return `${JSON.stringify(doc.data, null, doc.indent)}\n`;
}

/** Writes the document back atomically. */
export function writePrd(doc: PrdDocument): void {
  writeFileAtomic(doc.file, serializePrd(doc));
}

/** Fields ralph sets on an item; `undefined` removes the field. */
export interface ItemUpdate {
  status?: PrdStatus;
  iterationNumber?: number;
  startedAt?: string | undefined;
  completedAt?: string | undefined;
  attempts?: number;
  lastError?: string | undefined;
}

/** Applies an update to an item's raw object (snarktank: `passes` follows the status). */
export function updateItem(doc: PrdDocument, item: PrdItem, update: ItemUpdate): void {
  const raw = item.raw;
  for (const [key, value] of Object.entries(update)) {
    if (value === undefined) delete raw[key];
    else raw[key] = value;
  }
  if (doc.shape === 'snarktank' && update.status !== undefined) raw.passes = update.status === 'completed';
}

/** Items in the order they are worked on: lowest priority number first, then file order. */
export function byPriority(items: readonly PrdItem[]): PrdItem[] {
  return [...items].sort((a, b) => (a.priority ?? Number.POSITIVE_INFINITY) - (b.priority ?? Number.POSITIVE_INFINITY) || a.index - b.index);
}
