// The rule for task ids written on more than one line. Pure.
//
// Real files repeat an id for two reasons: a real second task (two different T003 lines in two phases)
// and a copy (a summary that repeats earlier tasks). Neither may end a run early or keep it going forever:
// - The first line with an id inside the phases is that task. A later line with the same id and another
//   description is another task, `ID#2`, `ID#3`, … in file order (`T003#2`), with a box of its own.
// - A later line with the same id and the same description is a copy: not a task, never given an
//   iteration, not counted. It follows its task: open while the task is ticked it is stale and ignored,
//   ticked while the task is open it completes nothing. So a stale summary cannot keep a run going, and
//   a ticked summary cannot end one while the task's own line is open.
// - "The same description" includes one cut short or abbreviated: `T001 - i18n common.json keys` repeats
//   `T001 Add i18n authentication keys to src/languages/common.json …` (every telling word of it is the
//   original's). A real second task says something the original does not.
// - A task line under an explanatory heading (Format, Notes, Summary, Dependencies, …) counts only as a
//   copy of a task of the phases (same id, same or abbreviated description; under a summary heading, one
//   sharing a telling word with it is enough: `T014 - Quickstart validation`). Any other task line there
//   is not worked on; while it is open the feature is not complete (it is a stray).
import type { TaskGroup } from './groups.ts';
import type { CopyLine, SpeckitTask, StrayLine } from './model.ts';
import { abbreviates, sameDescription, summarizes } from './task-line.ts';

/** A task line as the scan found it, before ids are settled. */
export interface Candidate {
  /** The id as written. */
  id: string;
  done: boolean;
  /** The text after the id. */
  after: string;
  line: number;
  /** The whole line, trimmed. */
  text: string;
  /** Its phase group; undefined for a line under an explanatory (prose) heading. */
  group?: number;
  section?: string;
  /** The explanatory heading above the line. */
  prose?: string;
  /** That heading is a summary's (`## Task Checklist Summary`): its rows are written to repeat tasks. */
  summary?: boolean;
}

export interface Assembled {
  tasks: SpeckitTask[];
  copies: CopyLine[];
  strays: StrayLine[];
  warnings: string[];
  /** The tasks by id, when no id names two tasks (each task's id is then its written id). */
  byId?: ReadonlyMap<string, SpeckitTask>;
}

/** A copy while ids are settled: the task object it follows, whose id may still change to `ID#n`. */
interface Copy {
  line: number;
  text: string;
  done: boolean;
  task: SpeckitTask;
}

/** Settles ids (`T003`, `T003#2`, …), sets copies and strays aside. */
export function assembleTasks(candidates: readonly Candidate[], groups: readonly TaskGroup[], make: (candidate: Candidate, id: string, group: TaskGroup) => SpeckitTask): Assembled {
  // The phase lines first: their descriptions decide which prose lines are copies. Tasks come out in
  // file order as they are met.
  // A list per written id only where an id names two tasks: most files have none, and 20,000 one-task
  // lists were a tenth of the parse of a big file.
  const tasks: SpeckitTask[] = [];
  const byWritten = new Map<string, SpeckitTask | SpeckitTask[]>();
  const tasksOf = (id: string): SpeckitTask[] => {
    const found = byWritten.get(id);
    return found === undefined ? [] : Array.isArray(found) ? found : [found];
  };
  /** Written ids of two or more tasks. */
  const repeated = new Set<string>();
  const copies: Copy[] = [];
  let anyProse = false;
  for (const candidate of candidates) {
    if (candidate.prose !== undefined) {
      anyProse = true;
      continue;
    }
    const task = make(candidate, candidate.id, groups[candidate.group!]!);
    const same = byWritten.get(candidate.id);
    if (same === undefined) {
      byWritten.set(candidate.id, task);
      tasks.push(task);
      continue;
    }
    // Only tasks are originals: a copy of a copy follows the same task.
    const list = Array.isArray(same) ? same : [same];
    const original = list.find((other) => sameDescription(other.title, task.title)) ?? list.find((other) => abbreviates(task.title, other.title));
    if (original) {
      copies.push({ line: candidate.line, text: candidate.text, done: candidate.done, task: original });
      continue;
    }
    if (Array.isArray(same)) same.push(task);
    else byWritten.set(candidate.id, [same, task]);
    repeated.add(candidate.id);
    tasks.push(task);
  }

  const strays: StrayLine[] = [];
  if (anyProse) {
    for (const candidate of candidates) {
      if (candidate.prose === undefined) continue;
      const sameId = tasksOf(candidate.id);
      const title = sameId.length === 0 ? '' : make(candidate, candidate.id, groups[sameId[0]!.group]!).title;
      const original = sameId.find((other) => abbreviates(title, other.title)) ?? (candidate.summary ? sameId.find((other) => summarizes(title, other.title)) : undefined);
      if (original) {
        copies.push({ line: candidate.line, text: candidate.text, done: candidate.done, task: original });
      } else if (!candidate.done) {
        const why = sameId.length === 0 ? `no task of the phases has the id ${candidate.id}` : `its description differs from ${candidate.id} on line ${sameId[0]!.line}`;
        strays.push({ line: candidate.line, text: candidate.text, state: 'open', why: `it sits under "${candidate.prose}", which explains rather than lists work, and ${why}` });
      }
    }
    // Prose copies may come before or after the phase copies: file order for the warnings.
    copies.sort((a, b) => a.line - b.line);
  }

  // Names in file order: the first task with an id keeps it, every other task with it is ID#2, ID#3, …
  for (const written of repeated) {
    const all = tasksOf(written);
    const first = all[0]!;
    for (let index = 1; index < all.length; index += 1) {
      all[index]!.id = `${written}#${index + 1}`;
      all[index]!.repeats = { id: first.id, line: first.line };
    }
  }
  const copyLines = copies.map((copy): CopyLine => ({ line: copy.line, text: copy.text, done: copy.done, of: copy.task.id, ofLine: copy.task.line }));
  const warnings = [...repeatWarnings(repeated, tasksOf, copyLines), ...copyWarnings(copyLines, tasks)];
  if (repeated.size === 0) return { tasks, copies: copyLines, strays, warnings, byId: byWritten as Map<string, SpeckitTask> };
  return { tasks, copies: copyLines, strays, warnings };
}

/** One line per id that names two or more tasks, saying which line is which task. */
function repeatWarnings(repeated: ReadonlySet<string>, tasksOf: (id: string) => SpeckitTask[], copies: readonly CopyLine[]): string[] {
  const copiesOf = new Map<string, CopyLine[]>();
  for (const copy of repeated.size > 0 ? copies : []) {
    const written = writtenOf(copy.of);
    if (!repeated.has(written)) continue;
    const list = copiesOf.get(written);
    if (list) list.push(copy);
    else copiesOf.set(written, [copy]);
  }
  const warnings: string[] = [];
  for (const written of repeated) {
    const all = tasksOf(written);
    const others = all.slice(1);
    const parts = [others.length === 1 ? `line ${others[0]!.line} is another task (${others[0]!.id})` : `lines ${lineList(others)} are other tasks (${others[0]!.id} to ${others.at(-1)!.id})`];
    const own = copiesOf.get(written) ?? [];
    // Tasks come in file order; copies go between them.
    const lines = own.length === 0 ? all.map((task) => task.line) : [...all, ...own].map((item) => item.line).sort((a, b) => a - b);
    if (own.length > 0) parts.push(own.length === 1 ? `line ${own[0]!.line} repeats ${own[0]!.of}` : `lines ${lineList(own)} repeat ${[...new Set(own.map((copy) => copy.of))].join(', ')}`);
    const rule = own.length === 0 ? 'each line is a task of its own and must be ticked' : 'each task must be ticked; a line that repeats one is not a task of its own';
    warnings.push(`${written} is written on ${lines.length} lines (${lines.join(', ')}): ${parts.join(', ')}; ${rule} (see "Repeated task ids" in the README)`);
  }
  return warnings;
}

/** `T003` for `T003#2`. */
function writtenOf(id: string): string {
  const hash = id.indexOf('#');
  return hash < 0 ? id : id.slice(0, hash);
}

/**
 * One line per kind of copy that a reader could take for work: open copies of ticked tasks (stale), open
 * copies of open tasks, and ticked copies of open tasks. Ticked copies of ticked tasks say nothing new.
 */
function copyWarnings(copies: readonly CopyLine[], tasks: readonly SpeckitTask[]): string[] {
  if (copies.length === 0) return [];
  // Each repeated task's state and its place among the tasks, to name a run of tasks as `T001 to T013`.
  const of = new Map<string, { done: boolean; index: number }>();
  for (const copy of copies) of.set(copy.of, { done: false, index: 0 });
  tasks.forEach((task, index) => {
    if (of.has(task.id)) of.set(task.id, { done: task.done, index });
  });
  const stale = copies.filter((copy) => !copy.done && of.get(copy.of)!.done);
  const following = copies.filter((copy) => !copy.done && !of.get(copy.of)!.done);
  const early = copies.filter((copy) => copy.done && !of.get(copy.of)!.done);
  const ids = (list: readonly CopyLine[]): string => {
    const unique = [...new Set(list.map((copy) => copy.of))];
    if (unique.length <= 4) return unique.join(', ');
    const places = unique.map((id) => of.get(id)!.index).sort((a, b) => a - b);
    const run = places.at(-1)! - places[0]! === places.length - 1;
    return run ? `${tasks[places[0]!]!.id} to ${tasks[places.at(-1)!]!.id}` : `${unique.slice(0, 3).join(', ')} and ${unique.length - 3} more`;
  };
  const warnings: string[] = [];
  if (stale.length > 0) {
    const one = stale.length === 1;
    warnings.push(`${one ? 'line' : 'lines'} ${lineRanges(stale)} ${one ? 'repeats a task' : 'repeat tasks'} already ticked (${ids(stale)}): not counted and not worked on`);
  }
  if (following.length > 0) {
    const one = following.length === 1;
    warnings.push(`${one ? 'line' : 'lines'} ${lineRanges(following)} ${one ? 'repeats an open task' : 'repeat open tasks'} (${ids(following)}): not counted as ${one ? 'a task of its own; it is done with its task' : 'tasks of their own; each is done with its task'}`);
  }
  if (early.length > 0) {
    const one = early.length === 1;
    const which = one ? `${early[0]!.of} (line ${early[0]!.ofLine}), which is open` : `open tasks (${ids(early)})`;
    const until = one ? `${early[0]!.of} is done when line ${early[0]!.ofLine} is ticked` : 'each is done when its own line is ticked';
    warnings.push(`${one ? 'line' : 'lines'} ${lineRanges(early)} ${one ? 'is' : 'are'} ticked but ${one ? 'repeats' : 'repeat'} ${which}: a ticked copy completes nothing; ${until}`);
  }
  return warnings;
}

function lineList(items: readonly { line: number }[]): string {
  return items.map((item) => item.line).join(', ');
}

/** `120-132, 140`: runs of consecutive lines joined. */
function lineRanges(items: readonly { line: number }[]): string {
  const parts: string[] = [];
  for (let start = 0; start < items.length; ) {
    let end = start;
    while (end + 1 < items.length && items[end + 1]!.line === items[end]!.line + 1) end += 1;
    parts.push(end === start ? String(items[start]!.line) : `${items[start]!.line}-${items[end]!.line}`);
    start = end + 1;
  }
  return parts.join(', ');
}
