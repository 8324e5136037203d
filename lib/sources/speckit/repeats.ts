// The rule for task ids written on more than one line. Pure.
//
// Real files repeat an id for two reasons: a real second task (two different T003 lines in two phases)
// and a copy (a summary that repeats earlier tasks). Neither may end a run early or keep it going forever:
// - Every task line inside the phases is a task. The first line with an id is that task; the n-th line
//   with the same id is task `ID#n` (`T003#2`). A repeat whose description matches an earlier line is a
//   copy; the prompt says so, and asks for every line of the task to be ticked.
// - A task line under an explanatory heading (Format, Notes, Summary, Dependencies, …) is a task only when
//   it repeats a task of the phases (same id and description): then it is `ID#n` like any repeat. Any other
//   task line there is not worked on; while it is open the feature is not complete (it is a stray).
// Every line therefore has its own checkbox that must be ticked, and each one is either a task the loop
// can hand to the agent or a stray that stops the run with its file and line.
import { newGroup, type TaskGroup } from './groups.ts';
import type { SpeckitTask, StrayLine } from './parse.ts';
import { sameDescription } from './task-line.ts';

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
}

export interface Assembled {
  tasks: SpeckitTask[];
  strays: StrayLine[];
  warnings: string[];
  /** The tasks by id, when no id is written twice (each task's id is then its written id). */
  byId?: ReadonlyMap<string, SpeckitTask>;
}

/** Settles ids (`T003`, `T003#2`, …), files copies under their prose heading and sets strays aside. */
export function assembleTasks(candidates: readonly Candidate[], groups: TaskGroup[], make: (candidate: Candidate, id: string, group: TaskGroup) => SpeckitTask): Assembled {
  // The phase lines first: their descriptions decide which prose lines are copies. Tasks are kept by the
  // candidate's index, so they come out in file order without a sort.
  // A list per written id only where an id repeats: most files repeat none, and 20,000 one-task lists
  // were a tenth of the parse of a big file.
  const taskAt: Array<SpeckitTask | undefined> = new Array(candidates.length);
  const phaseByWritten = new Map<string, SpeckitTask | SpeckitTask[]>();
  const phaseTasks = (id: string): SpeckitTask[] => {
    const found = phaseByWritten.get(id);
    return found === undefined ? [] : Array.isArray(found) ? found : [found];
  };
  /** Written ids on two or more task lines. */
  const repeated = new Set<string>();
  let anyProse = false;
  candidates.forEach((candidate, index) => {
    if (candidate.prose !== undefined) {
      anyProse = true;
      return;
    }
    const task = make(candidate, candidate.id, groups[candidate.group!]!);
    taskAt[index] = task;
    const same = phaseByWritten.get(candidate.id);
    if (same === undefined) phaseByWritten.set(candidate.id, task);
    else if (Array.isArray(same)) same.push(task);
    else {
      phaseByWritten.set(candidate.id, [same, task]);
      repeated.add(candidate.id);
    }
  });

  const strays: StrayLine[] = [];
  const copyOf = new Map<SpeckitTask, SpeckitTask>();
  const proseGroups = new Map<string, TaskGroup>();
  if (anyProse) {
    candidates.forEach((candidate, index) => {
      if (candidate.prose === undefined) return;
      const sameId = phaseTasks(candidate.id);
      const group = proseGroups.get(candidate.prose) ?? newGroup(groups.length, candidate.prose, candidate.line);
      const task = make(candidate, candidate.id, group);
      const original = sameId.find((other) => sameDescription(other.title, task.title));
      if (!original) {
        if (!candidate.done) {
          const why = sameId.length === 0 ? `no task of the phases has the id ${candidate.id}` : `its description differs from ${candidate.id} on line ${sameId[0]!.line}`;
          strays.push({ line: candidate.line, text: candidate.text, state: 'open', why: `it sits under "${candidate.prose}", which explains rather than lists work, and ${why}` });
        }
        return;
      }
      if (!proseGroups.has(candidate.prose)) {
        groups.push(group);
        proseGroups.set(candidate.prose, group);
      }
      taskAt[index] = task;
      copyOf.set(task, original);
      repeated.add(candidate.id);
    });
  }

  // Names in file order: the first phase line keeps the written id, every other line is ID#2, ID#3, …
  const tasks = taskAt.filter((task): task is SpeckitTask => task !== undefined);
  const byWritten = new Map<string, SpeckitTask[]>();
  for (const task of repeated.size > 0 ? tasks : []) {
    if (!repeated.has(task.writtenId)) continue;
    const same = byWritten.get(task.writtenId);
    if (same) same.push(task);
    else byWritten.set(task.writtenId, [task]);
  }
  for (const [written, all] of byWritten) {
    if (all.length < 2) continue;
    const first = phaseTasks(written)[0]!;
    let n = 1;
    for (const task of all) {
      if (task === first) continue;
      n += 1;
      task.id = `${written}#${n}`;
    }
    for (const task of all) {
      if (task === first) continue;
      const original = copyOf.get(task);
      const copy = original !== undefined || all.some((other) => other !== task && other.line < task.line && sameDescription(other.title, task.title));
      task.repeats = { id: (original ?? first).id, line: (original ?? first).line, copy };
    }
  }
  if (repeated.size === 0) return { tasks, strays, warnings: [], byId: phaseByWritten as Map<string, SpeckitTask> };
  return { tasks, strays, warnings: repeatWarnings(byWritten) };
}

/** One line per id written more than once, saying how ralph reads each line. */
function repeatWarnings(byWritten: ReadonlyMap<string, SpeckitTask[]>): string[] {
  const warnings: string[] = [];
  for (const [written, all] of byWritten) {
    if (all.length < 2) continue;
    const repeats = all.filter((task) => task.repeats);
    const parts: string[] = [];
    const others = repeats.filter((task) => !task.repeats!.copy);
    const copies = repeats.filter((task) => task.repeats!.copy);
    if (others.length > 0) parts.push(others.length === 1 ? `line ${others[0]!.line} is another task (${others[0]!.id})` : `lines ${lineList(others)} are other tasks (${idList(others)})`);
    if (copies.length > 0) parts.push(copies.length === 1 ? `line ${copies[0]!.line} repeats a task (${copies[0]!.id})` : `lines ${lineList(copies)} repeat a task (${idList(copies)})`);
    warnings.push(`${written} is written on ${all.length} lines (${lineList(all)}): ${parts.join(', ')}; each line is a task of its own and must be ticked (see "Repeated task ids" in the README)`);
  }
  return warnings;
}

function lineList(tasks: readonly SpeckitTask[]): string {
  return tasks.map((task) => task.line).join(', ');
}

function idList(tasks: readonly SpeckitTask[]): string {
  return tasks.length <= 3 ? tasks.map((task) => task.id).join(', ') : `${tasks[0]!.id} to ${tasks.at(-1)!.id}`;
}
