// One line of tasks.md: is it a checkbox, and does it start with a task id ralph can read? Pure.
//
// Real files write the same thing many ways: `- [ ] T001`, `* [x] **T001**`, `  - [X] T102.1` nested under
// its parent, `- [ ] T104A [P]`, `- [x] T129A[P][US2]`, `-[X]T001[P]` with the spaces squeezed out,
// `[✅]` for done and `[]` for open. Whatever ralph cannot read for sure is reported, never dropped.

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

/** A checkbox line that starts with something like a task id. */
export type TaskLine =
  | { kind: 'task'; state: BoxState; box: string; id: string; after: string; quoted: boolean }
  | { kind: 'malformed'; state: BoxState; box: string; written: string; why: string; quoted: boolean };

/** The id forms ralph reads: `T001`, `T0001`, a letter suffix `T002a`/`T104A`, dotted sub-ids `T047.5`, `T090.12`. */
export const TASK_ID_FORMAT = 'T followed by 3 or more digits, optionally a letter (T002a) or a dotted sub-number (T102.1)';

// Bullet, optional spaces (`-[X]T001` occurs), a box of at most three characters, the rest.
const CHECKBOX = /^\s*((?:>\s*)*)(?:[-*+]|\d{1,3}[.)])\s*\[([^[\]]{0,3})\]\s*(.*?)\s*$/u;
const OPEN_BOX = /^\s*$/;
const DONE_BOX = /^\s*[xX✓✔✅☑]\uFE0F?\s*$/u;
/** A single mark that is neither open nor done (`[-]`, `[~]`, `[/]`, `[⚠️]`): ralph cannot tell what it means. */
const OTHER_BOX = /^\s*[^\p{L}\p{N}\s]\uFE0F?\s*$/u;
/** Something that starts like a task id: `T` and a digit, maybe in bold. */
const LOOKS_LIKE_ID = /^\**(T\d[\w.]*)/;
const TASK_ID = /^\**(T\d{3,}(?:\.\d+)*[A-Za-z]?)(?![A-Za-z0-9]|\.\d)\**/;

/** The checkbox of a list item, or undefined when the line is not one (`- [P] tasks = …` is not). */
export function readCheckbox(line: string): CheckboxLine | undefined {
  const match = CHECKBOX.exec(line);
  if (!match) return undefined;
  const box = match[2]!;
  const state: BoxState | undefined = OPEN_BOX.test(box) ? 'open' : DONE_BOX.test(box) ? 'done' : OTHER_BOX.test(box) ? 'unknown' : undefined;
  if (!state) return undefined;
  return { state, box, rest: match[3]!, quoted: match[1]!.length > 0 };
}

/** A checkbox line that starts with a task id (readable or not); undefined for other lines. */
export function readTaskLine(line: string): TaskLine | undefined {
  const checkbox = readCheckbox(line);
  if (!checkbox) return undefined;
  const looks = LOOKS_LIKE_ID.exec(checkbox.rest);
  if (!looks) return undefined;
  const { state, box, quoted } = checkbox;
  const id = TASK_ID.exec(checkbox.rest);
  if (!id) {
    const written = looks[1]!.replace(/[.]+$/, '');
    const digits = /^T(\d+)/.exec(written)![1]!.length;
    const why = digits < 3 ? `the id ${written} has ${digits} digit${digits === 1 ? '' : 's'}` : `${written} is not an id ralph can read`;
    return { kind: 'malformed', state, box, written, why, quoted };
  }
  return { kind: 'task', state, box, id: id[1]!, after: checkbox.rest.slice(id[0].length), quoted };
}

/**
 * A description reduced for comparison: markers, emphasis, code ticks, completion notes and case dropped,
 * so a summary line that repeats a task (`- [ ] T003 Create the model`) matches its original.
 */
export function descriptionKey(text: string): string {
  let rest = text.trim().replace(/^[:.\-–—]\s*/, '');
  for (let marker = /^\[[^\]]{1,20}\]\s*/.exec(rest); marker; marker = /^\[[^\]]{1,20}\]\s*/.exec(rest)) rest = rest.slice(marker[0].length);
  return rest
    .replace(/\*\*|__|`/g, '')
    .replace(/[-–—]?\s*\(?(?:✅\s*)?(?:completed?|done)\)?\s*[.!✅]*\s*$/i, '')
    .replace(/[✅✓✔]/gu, '')
    .replace(/\s+/g, ' ')
    .replace(/[\s.:;,]+$/, '')
    .trim()
    .toLowerCase();
}

/** Whether two descriptions name the same work: equal, or one cut short of the other (a summary). */
export function sameDescription(a: string, b: string): boolean {
  const x = descriptionKey(a);
  const y = descriptionKey(b);
  if (x === y) return true;
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  return short.length >= 12 && long.startsWith(short);
}
