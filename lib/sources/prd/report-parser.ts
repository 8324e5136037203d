// Reads what the agent says it did. The PRD prompt asks for a closing `## Ralph Report` block; agents
// that ignore it still get a best-effort reading of their prose. Pure functions only.
import { fencedLines } from '../../markdown.ts';
import { claimsCompletion } from '../../completion.ts';

export type ReportedStatus = 'completed' | 'failed' | 'partial';

export interface ReportedCheck {
  name: string;
  passed: boolean;
  detail?: string;
}

export interface AgentReport {
  status?: ReportedStatus;
  /** Where the status came from: the report block, the completion promise, or the wording of the text. */
  statusSource?: 'report' | 'promise' | 'wording';
  /** True when a `Ralph Report` block was found. */
  hasReport: boolean;
  summary?: string;
  changes: string[];
  learnings: string[];
  quality: ReportedCheck[];
  commitMessages: string[];
  /** Why the output looks cut off or unfinished; empty when it does not. */
  contextLoss: string[];
}

type Field = 'status' | 'summary' | 'changes' | 'quality' | 'learnings' | 'commits';

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

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_ITEM_CHARS ? `${flat.slice(0, MAX_ITEM_CHARS - 1)}…` : flat;
}

function unique(items: Iterable<string>): string[] {
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

/** Lines outside fenced code blocks, with their index. */
function proseLines(text: string): { lines: string[]; fenced: Set<number>; openFence: boolean } {
  const lines = text.replace(/\r/g, '').split('\n');
  return { lines, ...fencedLines(lines) };
}

interface FieldText {
  value: string;
  items: string[];
}

/** Every occurrence of each field in `lines`, in order: the inline value and the bullet items below it. */
function readFields(lines: readonly string[], skip: ReadonlySet<number>, offset = 0): Map<Field, FieldText[]> {
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

/** Checks the agent reports in prose or tool output (tsc, eslint, vitest/jest summaries). */
function checksFromProse(lines: readonly string[]): ReportedCheck[] {
  const found = new Map<string, ReportedCheck>();
  const set = (name: string, passed: boolean, detail?: string): void => {
    found.delete(name);
    found.set(name, { name, passed, ...(detail ? { detail } : {}) });
  };
  for (const line of lines) {
    let match: RegExpExecArray | null;
    if ((match = /Found (\d+) errors?\b/.exec(line))) {
      set('typecheck', Number(match[1]) === 0, `${match[1]} errors`);
    } else if (/error TS\d+/.test(line)) {
      set('typecheck', false, line.trim());
    } else if ((match = /✖ (\d+) problems? \((\d+) errors?/.exec(line))) {
      set('lint', Number(match[2]) === 0, `${match[1]} problems`);
    } else if ((match = /^\s*Tests:?\s+(?:(\d+) failed[,|\s]+)?(?:\d+ \w+[,|\s]+)*?(\d+) passed/i.exec(line))) {
      set('test', !match[1] || Number(match[1]) === 0, line.trim());
    } else {
      for (const sentence of line.split(/(?<=[.!?;])\s+/)) {
        match = /\b(type-?check(?:ing)?|typescript|tsc|lint(?:ing|er)?|eslint|(?:unit |all )?tests?|test suite)\b[^.\n]{0,40}?\b(pass(?:es|ed|ing)?|succeed(?:s|ed)?|green|clean|fail(?:s|ed|ing)?|broken)\b/i.exec(sentence);
        if (!match) continue;
        const upToVerdict = sentence.slice(0, match.index + match[0].length - match[2]!.length);
        // `if tests pass`, `make sure lint passes` state an intent, not a result.
        if (/\b(if|until|unless|whether|should|will|need to|make sure)\b/i.test(upToVerdict)) continue;
        const negated = /\b(no|0|zero|none of the)\s+(?:[\w-]+\s+){0,2}$/i.test(upToVerdict);
        const failWord = /^(fail|broken)/i.test(match[2]!);
        set(normalizeCheckName(match[1]!), negated ? failWord : !failWord);
      }
    }
  }
  return [...found.values()];
}

/** Commit messages from `git commit -m "…"` commands, heredocs and git's `[branch abc1234] msg` lines. */
function commitsFromProse(text: string): string[] {
  const messages: string[] = [];
  for (const match of text.matchAll(/git commit\b[^\n]*?\s-[a-zA-Z]*m\s+"\$\(cat <<-?\s*'?(\w+)'?\s*\n([^\n]+)/g)) messages.push(match[2]!);
  for (const match of text.matchAll(/git commit\b[^\n]*?\s-[a-zA-Z]*m\s+(["'])((?:(?!\1)[^\n\\]|\\.)+)\1/g)) {
    if (!match[2]!.startsWith('$(')) messages.push(match[2]!);
  }
  for (const match of text.matchAll(/^\[[\w./-]+(?: \(root-commit\))? [0-9a-f]{7,40}\] (.+)$/gm)) messages.push(match[1]!);
  return messages;
}

const CHANGE_LINE = /^(created|added|modified|updated|changed|edited|removed|deleted|renamed|wrote|refactored|fixed)\b.*?[\w./-]+\.[a-z0-9]{1,6}\b/i;

const FAILED_WORDING = /\b(unable to (?:complete|finish|implement)|could ?n[o']t (?:complete|finish|implement)|can ?n[o']t (?:complete|finish|implement)|task (?:has )?failed|giving up|i am blocked|i'm blocked|blocked by)\b/gi;
const PARTIAL_WORDING = /\b(partially (?:complete|completed|implemented|done)|not (?:yet )?(?:fully )?(?:complete|completed|finished|done)|remaining work|still (?:needs?|to do)|work in progress)\b/gi;
const DONE_WORDING = /\b(task (?:is )?(?:now )?(?:complete|completed|done|finished)|(?:all )?acceptance criteria (?:are )?(?:now )?(?:met|satisfied)|successfully (?:implemented|completed)|implementation (?:is )?complete)\b/gi;

function lastIndex(pattern: RegExp, text: string): number {
  let last = -1;
  for (const match of text.matchAll(pattern)) last = match.index ?? last;
  return last;
}

/** The status the closing words of a free-form answer suggest. */
function statusFromWording(text: string): ReportedStatus | undefined {
  const ending = text.slice(-2000);
  const scores: Array<[ReportedStatus, number]> = [
    ['failed', lastIndex(FAILED_WORDING, ending)],
    ['partial', lastIndex(PARTIAL_WORDING, ending)],
    ['completed', lastIndex(DONE_WORDING, ending)],
  ];
  const best = scores.filter(([, index]) => index >= 0).sort((a, b) => b[1] - a[1])[0];
  return best?.[0];
}

/** The last prose paragraph, as a one-line summary. */
function lastParagraph(lines: readonly string[], fenced: ReadonlySet<number>): string | undefined {
  const paragraphs: string[][] = [[]];
  lines.forEach((line, index) => {
    if (fenced.has(index) || line.trim() === '') {
      if (paragraphs.at(-1)!.length > 0) paragraphs.push([]);
    } else if (!/^\s*(#{1,6}\s|<promise>)/.test(line)) paragraphs.at(-1)!.push(line.trim());
  });
  const last = paragraphs.filter((paragraph) => paragraph.length > 0).at(-1);
  return last ? clip(last.join(' ')) : undefined;
}

const CONTEXT_LIMIT = /(prompt is too long|context (?:window|length) (?:exceeded|limit)|exceed(?:s|ed)? (?:the )?(?:maximum )?context (?:window|length)|maximum context length|conversation (?:is )?too long|ran out of context)/i;

/**
 * Reads the agent's final text: its status (completed / failed / partial), learnings, the quality
 * results it reports, commit messages, a change summary, and signs of context loss.
 */
export function parseAgentReport(text: string): AgentReport {
  const { lines, fenced, openFence } = proseLines(text);
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
  const hasReport = start !== -1;
  const reportFields = hasReport
    ? readFields(
        lines.slice(start + 1),
        new Set([...fenced].filter((index) => /^\s*(```|~~~)/.test(lines[index]!))),
        start + 1,
      )
    : new Map<Field, FieldText[]>();
  const proseFields = readFields(lines, fenced);
  // Scalar fields: the last occurrence, from the report when there is one. List fields: every occurrence.
  const occurrences = (name: Field): FieldText[] => reportFields.get(name) ?? (hasReport ? [] : proseFields.get(name) ?? []);
  const field = (name: Field): FieldText | undefined => occurrences(name).at(-1);
  const listed = (found: readonly FieldText[]): string[] => found.flatMap((entry) => [entry.value, ...entry.items]);

  let status: ReportedStatus | undefined;
  let statusSource: AgentReport['statusSource'];
  const statusField = field('status');
  if (statusField) status = normalizeStatus(statusField.value || statusField.items.join(' '));
  if (status) statusSource = 'report';
  else if (claimsCompletion(text)) {
    status = 'completed';
    statusSource = 'promise';
  } else if ((status = statusFromWording(lines.filter((_, index) => !fenced.has(index)).join('\n')))) {
    statusSource = 'wording';
  }

  const summaryField = field('summary');
  const summary = summaryField && (summaryField.value || summaryField.items[0]) ? clip(summaryField.value || summaryField.items.join('; ')) : lastParagraph(lines, fenced);

  const changesFound = occurrences('changes');
  const changes = unique(
    changesFound.length > 0
      ? listed(changesFound)
      : lines.filter((_, index) => !fenced.has(index)).map((line) => line.replace(/^\s*(?:[-*+]\s+)?(?:\*\*)?/, '')).filter((line) => CHANGE_LINE.test(line)),
  );

  // Learnings: the report's list, plus `Learning: …` lines and a Learnings section anywhere in the prose.

  const inlineLearnings = lines
    .filter((line, index) => !fenced.has(index))
    .map((line) => /^\s*(?:[-*+]\s+)?(?:\*\*)?(?:learning|lesson learned|gotcha|note for (?:the )?next iteration)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.+)$/i.exec(line)?.[1])
    .filter((item): item is string => item !== undefined);
  const learnings = unique([
    ...listed(reportFields.get('learnings') ?? []),
    ...listed(proseFields.get('learnings') ?? []),
    ...inlineLearnings,
  ]);

  const qualityField = field('quality');
  let quality: ReportedCheck[] = [];
  if (qualityField) {
    const entries = [...qualityField.value.split(/[,;]\s*/), ...qualityField.items];
    const byName = new Map<string, ReportedCheck>();
    for (const entry of entries) {
      const check = entry.trim() ? readCheck(entry) : undefined;
      if (check) byName.set(check.name, check);
    }
    quality = [...byName.values()];
  }
  if (quality.length === 0) quality = checksFromProse(lines);

  const commitMessages = unique([...listed(occurrences('commits')), ...commitsFromProse(text)]);

  const contextLoss: string[] = [];
  if (text.trim() === '') contextLoss.push('no output from the agent');
  else {
    if (openFence) contextLoss.push('the output ends inside a code block');
    const limitLine = lines.find((line) => CONTEXT_LIMIT.test(line));
    if (limitLine) contextLoss.push(`context limit: ${clip(limitLine).slice(0, 160)}`);
    if (!hasReport && !status) contextLoss.push('no final report or status');
  }

  return {
    ...(status ? { status, statusSource } : {}),
    hasReport,
    ...(summary ? { summary } : {}),
    changes,
    learnings,
    quality,
    commitMessages,
    contextLoss,
  };
}
