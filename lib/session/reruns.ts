// Tasks whose work conflicted when it landed: each runs again on a fresh base, first of all; after a second
// conflict in a row it runs alone, with nothing started beside it until it is done.
import type { Task } from '../sources/types.ts';

export class Reruns {
  private readonly queue: Task[] = [];
  /** Conflicts in a row per task. */
  private readonly conflictsOf = new Map<string, number>();
  private alone: { task: Task; started: boolean } | undefined;

  /** A task that must run alone is running: nothing may start beside it. */
  get blocking(): boolean {
    return this.alone?.started ?? false;
  }

  /**
   * What an idle worker takes before the source's own pick: the lone task once nothing runs (`null` while
   * the others finish), else the first queued rerun still open and free; undefined: the source picks.
   */
  next(open: ReadonlySet<string>, busy: ReadonlySet<string>, running: number): Task | null | undefined {
    if (this.alone) {
      if (running > 0 || !open.has(this.alone.task.id)) return null;
      this.alone.started = true;
      return this.alone.task;
    }
    while (this.queue.length > 0) {
      const task = this.queue.shift()!;
      if (open.has(task.id) && !busy.has(task.id)) return task;
    }
    return undefined;
  }

  /** An iteration of `task` ended; with a conflict its task is queued again. The warning to show, if any. */
  ended(task: Task, conflict: readonly string[] | undefined): string | undefined {
    if (this.alone?.task.id === task.id) this.alone = undefined;
    if (!conflict) {
      this.conflictsOf.delete(task.id);
      return undefined;
    }
    const conflicts = (this.conflictsOf.get(task.id) ?? 0) + 1;
    this.conflictsOf.set(task.id, conflicts);
    if (conflicts >= 2) {
      this.alone = { task, started: false };
      return `${task.id} conflicted again (${conflict.join(', ')}): it runs once more alone, with no other worker merging until it is done`;
    }
    this.queue.push(task);
    return `${task.id} conflicted when merged back (${conflict.join(', ')}): it runs again on a fresh base`;
  }
}
