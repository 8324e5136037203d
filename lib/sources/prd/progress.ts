// progress.txt beside prd.json: a snarktank-style log. `# Ralph Progress Log`, a `## Codebase Patterns`
// section at the top that agents curate, then one `## <date> - <task> - iteration N: …` entry per
// iteration, each ending in `---`. Ralph only ever appends entries; the agent may edit the patterns.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import dayjs from 'dayjs';
import { appendText, writeFileAtomic } from '../../fs-atomic.ts';

export const PATTERNS_HEADING = '## Codebase Patterns';
export const PROGRESS_CONTEXT_BYTES = 8 * 1024;

/** progress.txt lives beside prd.json (the snarktank layout). */
export function progressPath(prdFile: string): string {
  return path.join(path.dirname(prdFile), 'progress.txt');
}

/** A fresh log: header, an empty patterns section and the marker for the first iteration. */
export function progressHeader(options: { now: number; prd: string; taskCount: number }): string {
  return [
    '# Ralph Progress Log',
    `Started: ${dayjs(options.now).format('YYYY-MM-DD HH:mm')}`,
    `PRD: ${options.prd} (${options.taskCount} tasks)`,
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

/**
 * What the prompt shows of the log: the body of the patterns section whole, and the rest of the file bounded to its
 * last `maxBytes`, cut at a line start.
 */
export function progressContext(text: string, maxBytes = PROGRESS_CONTEXT_BYTES): { patterns: string; recent: string } {
  const lines = text.replace(/\r/g, '').split('\n');
  const [start, end] = patternsRange(lines);
  const patterns = start === -1 ? '' : lines.slice(start + 1, end).join('\n').trim();
  const rest = (start === -1 ? lines : [...lines.slice(0, start), ...lines.slice(end)]).join('\n').trim();
  const buffer = Buffer.from(rest, 'utf8');
  if (buffer.length <= maxBytes) return { patterns, recent: rest };
  let tail = buffer.subarray(buffer.length - maxBytes).toString('utf8');
  const newline = tail.indexOf('\n');
  tail = newline === -1 ? tail : tail.slice(newline + 1);
  return { patterns, recent: `[… earlier entries omitted; the whole log is in progress.txt]\n${tail.trim()}` };
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
  summary?: string;
  changes?: string[];
  commit?: string;
  learnings?: string[];
}

function list(label: string, items: readonly string[] | undefined): string[] {
  if (!items || items.length === 0) return [];
  return [`${label}:`, ...items.map((item) => `- ${item.replace(/\s*\n\s*/g, ' ')}`)];
}

/** One iteration's entry, in the snarktank style `## <date> - <id> …` ending with `---`. */
export function formatProgressEntry(entry: ProgressEntry): string {
  const lines = [
    `## ${dayjs(entry.now).format('YYYY-MM-DD HH:mm')} - ${entry.taskId} - iteration ${entry.iteration}: ${entry.status}`,
    `Task: ${entry.taskId} ${entry.taskTitle}`,
    ...(entry.reason ? [`Reason: ${entry.reason}`] : []),
    ...(entry.gates ? [`Gates: ${entry.gates}`] : []),
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
