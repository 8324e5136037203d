// The free-prose fallback for agents that skip the `## Ralph Report` block: checks and commits seen in
// tool output, change and learning lines, the closing wording, the last paragraph and signs of a context
// limit. Pure functions only.
import { fencedLines } from '../../markdown.ts';
import { clip, normalizeCheckName, type ReportedCheck, type ReportedStatus } from './report-block.ts';

/** The text's lines, which of them are inside fenced code blocks, and whether the last fence is left open. */
export function proseLines(text: string): { lines: string[]; fenced: Set<number>; openFence: boolean } {
  const lines = text.replace(/\r/g, '').split('\n');
  return { lines, ...fencedLines(lines) };
}

/** Checks the agent reports in prose or tool output (tsc, eslint, vitest/jest summaries). */
export function checksFromProse(lines: readonly string[]): ReportedCheck[] {
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
export function commitsFromProse(text: string): string[] {
  const messages: string[] = [];
  for (const match of text.matchAll(/git commit\b[^\n]*?\s-[a-zA-Z]*m\s+"\$\(cat <<-?\s*'?(\w+)'?\s*\n([^\n]+)/g)) messages.push(match[2]!);
  for (const match of text.matchAll(/git commit\b[^\n]*?\s-[a-zA-Z]*m\s+(["'])((?:(?!\1)[^\n\\]|\\.)+)\1/g)) {
    if (!match[2]!.startsWith('$(')) messages.push(match[2]!);
  }
  for (const match of text.matchAll(/^\[[\w./-]+(?: \(root-commit\))? [0-9a-f]{7,40}\] (.+)$/gm)) messages.push(match[1]!);
  return messages;
}

const CHANGE_LINE = /^(created|added|modified|updated|changed|edited|removed|deleted|renamed|wrote|refactored|fixed)\b.*?[\w./-]+\.[a-z0-9]{1,6}\b/i;

/** Lines outside code blocks that say a file was created, modified, removed…, without bullet and bold. */
export function changesFromProse(lines: readonly string[], fenced: ReadonlySet<number>): string[] {
  return lines.filter((_, index) => !fenced.has(index)).map((line) => line.replace(/^\s*(?:[-*+]\s+)?(?:\*\*)?/, '')).filter((line) => CHANGE_LINE.test(line));
}

/** `Learning: …`, `Gotcha: …` and `Note for the next iteration: …` lines outside code blocks. */
export function learningsFromProse(lines: readonly string[], fenced: ReadonlySet<number>): string[] {
  return lines
    .filter((line, index) => !fenced.has(index))
    .map((line) => /^\s*(?:[-*+]\s+)?(?:\*\*)?(?:learning|lesson learned|gotcha|note for (?:the )?next iteration)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.+)$/i.exec(line)?.[1])
    .filter((item): item is string => item !== undefined);
}

const FAILED_WORDING = /\b(unable to (?:complete|finish|implement)|could ?n[o']t (?:complete|finish|implement)|can ?n[o']t (?:complete|finish|implement)|task (?:has )?failed|giving up|i am blocked|i'm blocked|blocked by)\b/gi;
const PARTIAL_WORDING = /\b(partially (?:complete|completed|implemented|done)|not (?:yet )?(?:fully )?(?:complete|completed|finished|done)|remaining work|still (?:needs?|to do)|work in progress)\b/gi;
const DONE_WORDING = /\b(task (?:is )?(?:now )?(?:complete|completed|done|finished)|(?:all )?acceptance criteria (?:are )?(?:now )?(?:met|satisfied)|successfully (?:implemented|completed)|implementation (?:is )?complete)\b/gi;

function lastIndex(pattern: RegExp, text: string): number {
  let last = -1;
  for (const match of text.matchAll(pattern)) last = match.index ?? last;
  return last;
}

/** The status the closing words of a free-form answer suggest. */
export function statusFromWording(text: string): ReportedStatus | undefined {
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
export function lastParagraph(lines: readonly string[], fenced: ReadonlySet<number>): string | undefined {
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

/** The first line that says the agent hit its context limit, if any. */
export function contextLimitLine(lines: readonly string[]): string | undefined {
  return lines.find((line) => CONTEXT_LIMIT.test(line));
}
