// One line of tasks.md: is it a checkbox, and does it start with a task id ralph can read? Pure.
//
// Real files write the same thing many ways: `- [ ] T001`, `* [x] **T001**`, `  - [X] T102.1` nested under
// its parent, `- [ ] T104A [P]`, `- [x] T129A[P][US2]`, `-[X]T001[P]` with the spaces squeezed out,
// `[✅]` for done and `[]` for open. Whatever ralph cannot read for sure is reported, never dropped.
import { readCheckbox, type BoxState, type CheckboxLine } from '../../markdown.ts';

export { readCheckbox, type BoxState, type CheckboxLine } from '../../markdown.ts';

/** A checkbox line that starts with something like a task id. */
export type TaskLine =
  | { kind: 'task'; state: BoxState; box: string; id: string; after: string; quoted: boolean }
  | { kind: 'malformed'; state: BoxState; box: string; written: string; why: string; quoted: boolean };

/** The id forms ralph reads: `T001`, `T0001`, a letter suffix `T002a`/`T104A`, dotted sub-ids `T047.5`, `T090.12`. */
export const TASK_ID_FORMAT = 'T followed by 3 or more digits, optionally a letter (T002a) or a dotted sub-number (T102.1)';

/** Something that starts like a task id: `T` and a digit, maybe in bold. */
const LOOKS_LIKE_ID = /^\**(T\d[\w.]*)/;
const TASK_ID = /^\**(T\d{3,}(?:\.\d+)*[A-Za-z]?)(?![A-Za-z0-9]|\.\d)\**/;

/** A checkbox line that starts with a task id (readable or not); undefined for other lines. */
export function readTaskLine(line: string, known?: CheckboxLine): TaskLine | undefined {
  const checkbox = known ?? readCheckbox(line);
  if (!checkbox) return undefined;
  const { state, box, quoted } = checkbox;
  // A readable id first: it also looks like one, and most lines have one.
  const id = TASK_ID.exec(checkbox.rest);
  if (!id) {
    const looks = LOOKS_LIKE_ID.exec(checkbox.rest);
    if (!looks) return undefined;
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
