// Small Markdown readers shared by the task sources and the agents' answers. Pure.

/** Which lines of a Markdown text sit inside fenced code blocks (fence lines included). */
export function fencedLines(lines: readonly string[]): { fenced: Set<number>; openFence: boolean } {
  const fenced = new Set<number>();
  let inFence = false;
  lines.forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      fenced.add(index);
    } else if (inFence) fenced.add(index);
  });
  return { fenced, openFence: inFence };
}

/** A checkbox: open `[ ]`/`[]`, done `[x]`/`[X]`/`[✅]`/`[✓]`, or a mark nobody agreed on (`[-]`, `[~]`). */
export type BoxState = 'open' | 'done' | 'unknown';

/** A list item with a checkbox: `- [ ] …`, `* [x] …`, `1. [X] …`, nested, quoted or squeezed. */
export interface CheckboxLine {
  state: BoxState;
  /** What stands between the brackets: ` `, `x`, `✅`, `-`, … */
  box: string;
  /** The text after the checkbox, trimmed. */
  rest: string;
  /** Inside a `>` block quote. */
  quoted: boolean;
}

// Bullet, optional spaces (`-[X]T001` occurs), a box of at most three characters, the rest.
// The rest is taken greedily and trimmed after: a lazy `(.*?)\s*$` tries the end at every character.
const CHECKBOX = /^\s*((?:>\s*)*)(?:[-*+]|\d{1,3}[.)])\s*\[([^[\]]{0,3})\]\s*(.*)$/u;
const OPEN_BOX = /^\s*$/;
const DONE_BOX = /^\s*[xX✓✔✅☑]\uFE0F?\s*$/u;
/** A single mark that is neither open nor done (`[-]`, `[~]`, `[/]`, `[⚠️]`): ralph cannot tell what it means. */
const OTHER_BOX = /^\s*[^\p{L}\p{N}\s]\uFE0F?\s*$/u;

/** Characters `.` does not match: a rest holding one makes CHECKBOX fail, so the plain reading defers. */
const DOT_STOPS = /[\r\u2028\u2029]/;

/**
 * The usual `- [ ] …` / `- [x] …` line read without CHECKBOX, which allocates a match per line (a big
 * tasks.md has tens of thousands): the same answer, or undefined to leave the line to CHECKBOX.
 */
function plainCheckbox(line: string): CheckboxLine | undefined {
  let at = 0;
  while (line.charCodeAt(at) === 0x20) at += 1;
  const bullet = line.charCodeAt(at);
  if (bullet !== 0x2d && bullet !== 0x2a && bullet !== 0x2b) return undefined;
  at += 1;
  while (line.charCodeAt(at) === 0x20) at += 1;
  if (line.charCodeAt(at) !== 0x5b || line.charCodeAt(at + 2) !== 0x5d) return undefined;
  const mark = line.charCodeAt(at + 1);
  const state: BoxState | undefined = mark === 0x20 ? 'open' : mark === 0x78 || mark === 0x58 ? 'done' : undefined;
  if (!state) return undefined;
  const rest = line.slice(at + 3);
  if (DOT_STOPS.test(rest)) return undefined;
  return { state, box: line[at + 1]!, rest: rest.trim(), quoted: false };
}

/** The checkbox of a list item, or undefined when the line is not one (`- [P] tasks = …` is not). */
export function readCheckbox(line: string): CheckboxLine | undefined {
  const plain = plainCheckbox(line);
  if (plain) return plain;
  const match = CHECKBOX.exec(line);
  if (!match) return undefined;
  const box = match[2]!;
  const state: BoxState | undefined = OPEN_BOX.test(box) ? 'open' : DONE_BOX.test(box) ? 'done' : OTHER_BOX.test(box) ? 'unknown' : undefined;
  if (!state) return undefined;
  return { state, box, rest: match[3]!.trimEnd(), quoted: match[1]!.length > 0 };
}
