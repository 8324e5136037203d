// Reads the closing `## Ralph Report` block the PRD prompt asks for: labelled fields (`Status:`,
// `**Learnings:**`, `## Changes`) with their bullet items, and the status and check values inside them.
// The same field reader serves labels that appear in free prose. Pure functions only.

export type ReportedStatus = 'completed' | 'failed' | 'partial';

export interface ReportedCheck {
  name: string;
  passed: boolean;
  detail?: string;
}

export type Field = 'status' | 'summary' | 'changes' | 'quality' | 'learnings' | 'commits';

const FIELD_NAMES: Record<string, Field> = {
  status: 'status',
  'task status': 'status',
  summary: 'summary',
  'change summary': 'summary',
  changes: 'changes',
  'files changed': 'changes',
  'changed files': 'changes',
  quality: 'quality',
  'quality checks': 'quality',
  'quality gates': 'quality',
  checks: 'quality',
  learnings: 'learnings',
  learning: 'learnings',
  'lessons learned': 'learnings',
  lessons: 'learnings',
  gotchas: 'learnings',
  'notes for the next iteration': 'learnings',
  'notes for next iteration': 'learnings',
  commits: 'commits',
  commit: 'commits',
  'commit message': 'commits',
  'commit messages': 'commits',
};

const REPORT_HEADING = /^\s*(?:#{1,6}\s*)?(?:\*\*|__)?ralph report(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*$/i;
const BULLET = /^\s*(?:[-*+]|\d+[.)])\s+(.+?)\s*$/;
const NONE = /^(?:none|n\/a|-|nothing|no commits?)\.?$/i;
const MAX_ITEMS = 20;
const MAX_ITEM_CHARS = 400;

interface Label {
  field: Field;
  value: string;
}

/** A line like `Status: completed`, `**Learnings:**`, `## Learnings` or `- Summary: …`. */
function readLabel(line: string): Label | undefined {
  const heading = /^\s*#{1,6}\s+/.test(line);
  const cleaned = line
    .replace(/^\s*#{1,6}\s+/, '')
    .replace(/^\s*(?:[-*+])\s+/, '')
    .replace(/\*\*|__/g, '')
    .trim();
  const withColon = /^([A-Za-z][A-Za-z ]{0,40}?)\s*:\s*(.*)$/.exec(cleaned);
  const bare = heading ? /^([A-Za-z][A-Za-z ]{0,40}?)\s*$/.exec(cleaned) : null;
  const match = withColon ?? bare;
  if (!match) return undefined;
  const field = FIELD_NAMES[match[1]!.toLowerCase()];
  return field ? { field, value: (match[2] ?? '').trim() } : undefined;
}

/** Flattens whitespace and caps the length of one reported item. */
export function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_ITEM_CHARS ? `${flat.slice(0, MAX_ITEM_CHARS - 1)}…` : flat;
}

/** Clipped items without blanks, `none`-like values and case-insensitive repeats, at most MAX_ITEMS. */
export function unique(items: Iterable<string>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const item of items) {
    const text = clip(item.replace(/^`(.*)`$/, '$1'));
    if (!text || NONE.test(text) || seen.has(text.toLowerCase())) continue;
    seen.add(text.toLowerCase());
    out.push(text);
    if (out.length >= MAX_ITEMS) break;
  }
  return out;
}

export interface FieldText {
  value: string;
  items: string[];
}

/** Where the report starts: the last heading outside code fences, else the last one inside; -1 when there is none. */
export function findReportStart(lines: readonly string[], fenced: ReadonlySet<number>): number {
  let start = -1;
  lines.forEach((line, index) => {
    if (!fenced.has(index) && REPORT_HEADING.test(line)) start = index;
  });
  // A report the agent wrapped in a code fence is still its report.
  if (start === -1) {
    lines.forEach((line, index) => {
      if (REPORT_HEADING.test(line)) start = index;
    });
  }
  return start;
}

/** Every occurrence of each field in `lines`, in order: the inline value and the bullet items below it. */
export function readFields(lines: readonly string[], skip: ReadonlySet<number>, offset = 0): Map<Field, FieldText[]> {
  const fields = new Map<Field, FieldText[]>();
  for (let index = 0; index < lines.length; index += 1) {
    if (skip.has(index + offset)) continue;
    const label = readLabel(lines[index]!);
    if (!label) continue;
    const items: string[] = [];
    let next = index + 1;
    for (; next < lines.length; next += 1) {
      const line = lines[next]!;
      if (skip.has(next + offset) || line.trim() === '') continue;
      if (readLabel(line)) break;
      const bullet = BULLET.exec(line);
      if (!bullet) break;
      items.push(bullet[1]!);
    }
    fields.set(label.field, [...(fields.get(label.field) ?? []), { value: label.value, items }]);
    index = next - 1;
  }
  return fields;
}

/** The fields of the report that starts at `start`; only fence lines are skipped, so a fenced report still reads. */
export function readReportFields(lines: readonly string[], fenced: ReadonlySet<number>, start: number): Map<Field, FieldText[]> {
  return readFields(
    lines.slice(start + 1),
    new Set([...fenced].filter((index) => /^\s*(```|~~~)/.test(lines[index]!))),
    start + 1,
  );
}

/** `completed`, `Done ✅`, `partial (2 of 3 criteria)`, `failed` → a status; undefined when unclear. */
export function normalizeStatus(value: string): ReportedStatus | undefined {
  const text = value.toLowerCase();
  const hits = new Set<ReportedStatus>();
  if (/\b(completed?|done|success(?:ful)?|finished)\b/.test(text)) hits.add('completed');
  if (/\b(partial(?:ly)?|in[ -]progress|incomplete|unfinished)\b/.test(text)) hits.add('partial');
  if (/\b(fail(?:ed|ure)?|blocked)\b/.test(text)) hits.add('failed');
  // `completed | partial | failed` copied from the prompt says nothing.
  if (hits.size > 1 && /[|/]/.test(text)) return undefined;
  // Otherwise the first word decides: `completed (no errors, 2 follow-ups failed to matter)` is completed.
  const first = /[a-z][a-z-]*/.exec(text)?.[0] ?? '';
  if (/^(completed?|done|success|successful|finished)$/.test(first)) return 'completed';
  if (/^(partial|partially|incomplete|unfinished)$/.test(first)) return 'partial';
  if (/^(failed|failure|fail|blocked)$/.test(first)) return 'failed';
  return hits.size === 1 ? [...hits][0] : undefined;
}

/** `typecheck`, `type-check`, `tsc` → typecheck; `eslint` → lint; `tests`, `vitest` → test. */
export function normalizeCheckName(name: string): string {
  const text = name.toLowerCase().trim();
  if (/type-?check|typescript|\btsc\b|\btypes?\b/.test(text)) return 'typecheck';
  if (/lint/.test(text)) return 'lint';
  if (/test|vitest|jest|mocha|pytest|spec/.test(text)) return 'test';
  return text.replace(/[^a-z0-9 -]/g, '').trim() || text;
}

const PASS_WORDS = /\b(pass(?:es|ed|ing)?|ok|green|clean|success(?:ful)?|succeed(?:s|ed)?)\b|✓|✅/i;
const FAIL_WORDS = /\b(fail(?:s|ed|ing|ure|ures)?|red|broken|errors?)\b|✗|❌|✖/i;

/** One quality check, `typecheck: pass` or `tests 2 failed`; undefined when no verdict is found. */
function readCheck(text: string): ReportedCheck | undefined {
  let name: string;
  let value: string;
  const separated = /^\s*([^:=]+?)\s*[:=]\s*(.+)$/.exec(text);
  if (separated) {
    name = separated[1]!;
    value = separated[2]!;
  } else {
    // `tests 2 failed`, `lint ok`: the name ends where the first number or verdict word starts.
    const verdict = /\s(\d|pass|ok|green|clean|success|succeed|fail|red|broken|error|✓|✅|✗|❌|✖)/i.exec(text);
    if (!verdict) return undefined;
    name = text.slice(0, verdict.index);
    value = text.slice(verdict.index + 1);
  }
  const clean = /\b(0|no|zero) (errors?|failures?|failed)\b/i.test(value);
  const failed = FAIL_WORDS.test(value) && !clean;
  if (!failed && !PASS_WORDS.test(value) && !clean) return undefined;
  // A bare verdict carries no detail; `fail (1 flaky test)` keeps what follows the word.
  const detail = value
    .replace(/^\s*(pass(?:es|ed)?|ok|green|clean|success(?:ful)?|fail(?:s|ed|ure)?|red|broken|✓|✅|✗|❌|✖)\b\s*/i, '')
    .replace(/^[\s,:;(-]+|[\s,:;)-]+$/g, '');
  return { name: normalizeCheckName(name), passed: !failed, ...(detail ? { detail } : {}) };
}

/** The checks listed in a quality field (inline, comma-separated, or as bullet items); the last per name wins. */
export function readQuality(field: FieldText): ReportedCheck[] {
  const entries = [...field.value.split(/[,;]\s*/), ...field.items];
  const byName = new Map<string, ReportedCheck>();
  for (const entry of entries) {
    const check = entry.trim() ? readCheck(entry) : undefined;
    if (check) byName.set(check.name, check);
  }
  return [...byName.values()];
}
