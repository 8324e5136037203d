// What a tasks.md reads as: its tasks, the lines that are not tasks (strays, copies) and the warnings.
// Data only, below the parser (parse.ts) and the repeated-id rule (repeats.ts), which both speak of it.
import type { BoxState } from './task-line.ts';
import type { TaskGroup } from './groups.ts';

export interface SpeckitTask {
  /** The id ralph uses: the written id, or `T003#2` for the second task written as T003. */
  id: string;
  /** The id as tasks.md writes it: `T003`, `T104A`, `T102.1`. */
  writtenId: string;
  /** The description after the markers, e.g. `Create User model in src/models/user.py`. */
  title: string;
  /** The task as written after the checkbox, markers included: `T012 [P] [US1] Create …`. */
  text: string;
  done: boolean;
  parallel: boolean;
  /** `US1` from the `[US1]` marker, else the story of the group. */
  story?: string;
  /** Index into `ParsedTasks.groups`. */
  group: number;
  /** The `###` heading above the task, e.g. `Implementation for User Story 1`. */
  section?: string;
  dependsOn: string[];
  /** 1-based line number in tasks.md. */
  line: number;
  /** Set on the second and later tasks with the same written id: the first of them. */
  repeats?: { id: string; line: number };
}

/**
 * A line that repeats a task (same id, same description): not a task of its own. Its box says nothing
 * about the work: open while the task is ticked it is stale, ticked while the task is open it completes nothing.
 */
export interface CopyLine {
  line: number;
  /** The line as written, trimmed. */
  text: string;
  done: boolean;
  /** The id of the task it repeats (`T003`, `T003#2`). */
  of: string;
  /** That task's line. */
  ofLine: number;
}

/** A line that looks like a task but is not one ralph works on. Open (or unreadable), it holds completion back. */
export interface StrayLine {
  line: number;
  /** The line as written, trimmed. */
  text: string;
  state: BoxState;
  why: string;
}

export interface ParsedTasks {
  /** The `# Tasks: …` title. */
  title?: string;
  groups: TaskGroup[];
  tasks: SpeckitTask[];
  strays: StrayLine[];
  /** Lines that repeat a task, in file order (see CopyLine). */
  copies: CopyLine[];
  /** Every checkbox outside code (tasks or not) and the first one; the open ones without a task id. */
  checkboxes: { count: number; first?: { line: number; text: string }; openWithoutId: number; firstOpenWithoutId?: { line: number; text: string } };
  /** Things worth a warning (repeated ids, copies, dependencies on unknown ids). */
  warnings: string[];
}
