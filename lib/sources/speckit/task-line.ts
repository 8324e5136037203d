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

/** Words too common to tell two tasks apart. */
const COMMON = new Set(['a', 'an', 'the', 'to', 'in', 'of', 'for', 'and', 'or', 'with', 'on', 'at', 'by', 'from', 'as', 'is', 'be', 'it', 'its', 'into', 'via', 'per', 'all', 'new', 'add', 'create', 'implement', 'update', 'write', 'make', 'set', 'use', 'define', 'ensure', 'verify']);

/** The telling words of a description, lower case: `US1` read as `user story 1`, code names split (`App.vue` → app, vue). */
function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const word of descriptionKey(text).split(/[^\p{L}\p{N}_]+/u)) {
    if (!word) continue;
    const story = /^us(\d+)$/.exec(word);
    if (story) words.push('user', 'story', story[1]!);
    else words.push(word);
  }
  return words.filter((word) => !COMMON.has(word));
}

/** A word of a short title found among the original's words: the same, or the start of one (`auth` of `authentication`). */
function foundIn(word: string, words: readonly string[]): boolean {
  return words.some((other) => other === word || (word.length >= 3 && other.startsWith(word)));
}

/**
 * Whether `short` abbreviates `original`: a summary's `T001 - i18n common.json keys` for `T001 Add i18n
 * authentication keys to src/languages/common.json …`. Shorter, and every telling word of it is a word of
 * the original (or the start of one). Another task with the same id says something the original does not.
 */
export function abbreviates(short: string, original: string): boolean {
  if (sameDescription(short, original)) return true;
  const few = wordsOf(short);
  const many = wordsOf(original);
  return few.length > 0 && few.length < many.length && few.every((word) => foundIn(word, many));
}

/**
 * Whether a line under a summary heading names the same work as a task with its id: it abbreviates it, or
 * shares a telling word with it (`T014 - Quickstart validation` for `T014 Verify … quickstart.md …`). A
 * summary row is written to repeat a task; one that shares nothing with it (`T001 Tag the release` for
 * `T001 Create the app`) is not taken for it.
 */
export function summarizes(row: string, original: string): boolean {
  if (abbreviates(row, original)) return true;
  const theirs = wordsOf(original);
  return wordsOf(row).some((word) => word.length >= 3 && foundIn(word, theirs));
}
