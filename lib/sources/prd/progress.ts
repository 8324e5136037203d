// progress.txt beside prd.json: a snarktank-style log. `# Ralph Progress Log`, a `## Codebase Patterns`
// section at the top that agents curate, then one `## <date> - <task> - iteration N: …` entry per
// iteration, each ending in `---`. Ralph only ever appends entries; the agent may edit the patterns.
import { count } from '../../progress/tasks-left.ts';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import dayjs from 'dayjs';
import { appendText, writeFileAtomic } from '../../repo/fs-atomic.ts';

export const PATTERNS_HEADING = '## Codebase Patterns';
/** Budget for the recent part of progress.txt in a prompt. */
export const PROGRESS_CONTEXT_BYTES = 8 * 1024;
/** Budget for the `## Codebase Patterns` section in a prompt. */
export const PROGRESS_PATTERNS_BYTES = 4 * 1024;
/** The most ralph itself puts into one prompt from progress.txt, whatever the file's size. */
export const PROGRESS_PROMPT_BYTES = PROGRESS_CONTEXT_BYTES + PROGRESS_PATTERNS_BYTES;
/** The first line of an iteration entry, as formatProgressEntry writes it (for compaction). */
export const PRD_ENTRY_HEADING = /^## \d{4}-\d\d-\d\d \d\d:\d\d - .* - iteration \d+:/;

/** progress.txt lives beside prd.json (the snarktank layout). */
export function progressPath(prdFile: string): string {
  return path.join(path.dirname(prdFile), 'progress.txt');
}

/** A fresh log: header, an empty patterns section and the marker for the first iteration. */
export function progressHeader(options: { now: number; prd: string; taskCount: number }): string {
  return [
    '# Ralph Progress Log',
    `Started: ${dayjs(options.now).format('YYYY-MM-DD HH:mm')}`,
    `PRD: ${options.prd} (${count(options.taskCount, 'task')})`,
    '',
    PATTERNS_HEADING,
    '- (reusable patterns for this codebase; every iteration reads this section)',
    '',
    '---',
    '',
    'Iteration 1 starts below.',
    '',
  ].join('\n');
}

/** Creates progress.txt with a header when it does not exist yet. */
export function ensureProgressFile(file: string, header: () => string): void {
  if (!existsSync(file)) writeFileAtomic(file, header());
}

export function readProgress(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Where the `## Codebase Patterns` section is: its first line and the line after it (-1 when absent). */
function patternsRange(lines: readonly string[]): [number, number] {
  const start = lines.findIndex((line) => line.trim().toLowerCase() === PATTERNS_HEADING.toLowerCase());
  if (start === -1) return [-1, -1];
  let end = start + 1;
  while (end < lines.length && !/^(#{1,2}\s|---\s*$)/.test(lines[end]!)) end += 1;
  return [start, end];
}

/** The `## Codebase Patterns` section (heading included), up to the next heading or `---`. */
export function extractPatterns(text: string): string {
  const lines = text.replace(/\r/g, '').split('\n');
  const [start, end] = patternsRange(lines);
  return start === -1 ? '' : lines.slice(start, end).join('\n').trim();
}

const PATTERNS_LINE = /^[ \t]*## codebase patterns[ \t]*\r?$/im;
const SECTION_END = /^(?:#{1,2}[ \t]|---[ \t]*\r?$)/gm;
const RECENT_OMITTED = '[… earlier entries omitted; the whole log is in progress.txt, older entries in progress.archive.txt]\n';
const PATTERNS_OMITTED = '\n[… the rest of the patterns section is in progress.txt]';

/** The last `maxBytes` of `text`, cut at a line start (the cut-off marker counted in). */
function boundedTail(text: string, maxBytes: number): string {
  // Every UTF-16 code unit is at least one UTF-8 byte, so the last maxBytes units hold the last maxBytes bytes.
  const buffer = Buffer.from(text.slice(-maxBytes), 'utf8');
  if (text.length <= maxBytes && buffer.length <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(RECENT_OMITTED);
  let tail = buffer.subarray(buffer.length - room).toString('utf8');
  const newline = tail.indexOf('\n');
  tail = newline === -1 ? tail.replace(/^\uFFFD+/, '') : tail.slice(newline + 1);
  return `${RECENT_OMITTED}${tail.trim()}`;
}

/** The first `maxBytes` of `text`, cut at a line end (the cut-off marker counted in). */
function boundedHead(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text.slice(0, maxBytes), 'utf8');
  if (text.length <= maxBytes && buffer.length <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(PATTERNS_OMITTED);
  let head = buffer.subarray(0, room).toString('utf8');
  const newline = head.lastIndexOf('\n');
  head = newline === -1 ? head.replace(/\uFFFD+$/, '') : head.slice(0, newline);
  return `${head.trimEnd()}${PATTERNS_OMITTED}`;
}

/**
 * What the prompt shows of the log, within a fixed budget whatever the file's size: the body of the patterns
 * section (its first `patternsBytes`, cut at a line end) and the rest of the file bounded to its last
 * `maxBytes`, cut at a line start. Never splits the whole file into lines, so a 50 MB log costs one pass.
 */
export function progressContext(text: string, maxBytes = PROGRESS_CONTEXT_BYTES, patternsBytes = PROGRESS_PATTERNS_BYTES): { patterns: string; recent: string } {
  const heading = PATTERNS_LINE.exec(text);
  let patterns = '';
  let rest = text;
  if (heading) {
    const start = heading.index;
    const bodyStart = Math.min(text.length, start + heading[0].length + 1);
    SECTION_END.lastIndex = bodyStart;
    const end = SECTION_END.exec(text)?.index ?? text.length;
    patterns = boundedHead(text.slice(bodyStart, end).replace(/\r/g, '').trim(), patternsBytes);
    rest = text.slice(0, start) + text.slice(end);
  }
  const recent = boundedTail(rest.trim(), maxBytes);
  return { patterns, recent: recent.replace(/\r/g, '').trim() };
}

/** The highest iteration number any entry of the log names (0 when none). */
export function lastLoggedIteration(text: string): number {
  let last = 0;
  for (const match of text.matchAll(/^##\s.*\biteration (\d+)\b/gim)) last = Math.max(last, Number(match[1]));
  return last;
}

export interface ProgressEntry {
  now: number;
  iteration: number;
  taskId: string;
  taskTitle: string;
  /** completed, failed (blocked), partial, interrupted… */
  status: string;
  reason?: string;
  gates?: string;
  /** The independent review in one line. */
  review?: string;
  /** What the agent asked a person. */
  question?: string;
  summary?: string;
  changes?: string[];
  commit?: string;
  learnings?: string[];
}

const flat = (text: string): string => text.replace(/\s*\n\s*/g, ' ');

function list(label: string, items: readonly string[] | undefined): string[] {
  if (!items || items.length === 0) return [];
  return [`${label}:`, ...items.map((item) => `- ${flat(item)}`)];
}

/** One iteration's entry, in the snarktank style `## <date> - <id> …` ending with `---`. */
export function formatProgressEntry(entry: ProgressEntry): string {
  const lines = [
    `## ${dayjs(entry.now).format('YYYY-MM-DD HH:mm')} - ${entry.taskId} - iteration ${entry.iteration}: ${entry.status}`,
    // One line each: a newline in a title or reason must not start a line that reads as a heading.
    `Task: ${entry.taskId} ${flat(entry.taskTitle)}`,
    ...(entry.question ? [`Question: ${flat(entry.question)}`] : []),
    ...(entry.reason ? [`Reason: ${flat(entry.reason)}`] : []),
    ...(entry.gates ? [`Gates: ${entry.gates}`] : []),
    ...(entry.review ? [`Review: ${flat(entry.review)}`] : []),
    ...(entry.summary ? [`Summary: ${entry.summary}`] : []),
    ...list('Changes', entry.changes),
    ...(entry.commit ? [`Commit: ${entry.commit}`] : []),
    ...list('Learnings', entry.learnings),
    '---',
  ];
  return `\n${lines.join('\n')}\n`;
}

/** Appends an entry, creating the log with its header first when missing. */
export function appendProgressEntry(file: string, entry: ProgressEntry, header: () => string): void {
  ensureProgressFile(file, header);
  appendText(file, formatProgressEntry(entry));
}
