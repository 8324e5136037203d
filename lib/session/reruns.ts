// Tasks whose work conflicted when it landed: each runs again on a fresh base, first of all; after a second
// conflict in a row it runs alone, with nothing started beside it until it is done. Several tasks may come
// to run alone while others still run: they wait in line, and each runs alone in its turn.
import type { Task } from '../sources/types.ts';

export class Reruns {
  private readonly queue: Task[] = [];
  /** Conflicts in a row per task. */
  private readonly conflictsOf = new Map<string, number>();
  /** Tasks that must run alone, in the order they came to; the first one runs (or waits for the others to end). */
  private readonly lone: Array<{ task: Task; started: boolean }> = [];

  /** A task that must run alone is running: nothing may start beside it. */
  get blocking(): boolean {
    return this.lone[0]?.started ?? false;
  }

  /**
   * What an idle worker takes before the source's own pick: the lone task once nothing runs (`null` while
   * the others finish), else the first queued rerun still open and free; undefined: the source picks.
   */
  next(open: ReadonlySet<string>, busy: ReadonlySet<string>, running: number): Task | null | undefined {
    // A lone task done meanwhile (another worker, another host) no longer waits for its turn.
    while (this.lone.length > 0 && !this.lone[0]!.started && !open.has(this.lone[0]!.task.id)) this.lone.shift();
    const first = this.lone[0];
    if (first) {
      if (running > 0 || first.started) return null;
      first.started = true;
      return first.task;
    }
    while (this.queue.length > 0) {
      const task = this.queue.shift()!;
      if (open.has(task.id) && !busy.has(task.id)) return task;
    }
    return undefined;
  }

  /** An iteration of `task` ended; with a conflict its task is queued again. The warning to show, if any. */
  ended(task: Task, conflict: readonly string[] | undefined): string | undefined {
    const turn = this.lone.findIndex((entry) => entry.task.id === task.id && entry.started);
    if (turn >= 0) this.lone.splice(turn, 1);
    if (!conflict) {
      this.conflictsOf.delete(task.id);
      return undefined;
    }
    const conflicts = (this.conflictsOf.get(task.id) ?? 0) + 1;
    this.conflictsOf.set(task.id, conflicts);
    if (conflicts >= 2) {
      if (!this.lone.some((entry) => entry.task.id === task.id)) this.lone.push({ task, started: false });
      return `${task.id} conflicted again (${conflict.join(', ')}): it runs once more alone, with no other worker merging until it is done`;
    }
    this.queue.push(task);
    return `${task.id} conflicted when merged back (${conflict.join(', ')}): it runs again on a fresh base`;
  }
}
