// Which Spec Kit tasks may run at the same time, by the rules tasks.md itself states: phases in order,
// user-story phases independent of each other once the phases before the first story are done, `[P]`
// tasks beside each other, everything else in file order, and `(depends on …)` always honoured.
import { copiesByTask, tasksById, type ParsedTasks, type SpeckitTask } from './parse.ts';

/**
 * Open tasks that may start while `running` tasks are under way, in file order. A task counts as settled
 * when it is done or skipped; a running task is neither, so what waits for it waits. A task `waiting` for
 * an answer to its question is settled for the order of phases and lines, but not for `depends on`.
 */
export function parallelStartable(parsed: ParsedTasks, skipped: ReadonlySet<string>, running: ReadonlySet<string>, waiting: ReadonlySet<string> = new Set()): SpeckitTask[] {
  const settled = (task: SpeckitTask): boolean => task.done || skipped.has(task.id) || waiting.has(task.id);
  const byId = tasksById(parsed);
  const byGroup = new Map<number, SpeckitTask[]>();
  for (const task of parsed.tasks) {
    const list = byGroup.get(task.group) ?? [];
    list.push(task);
    byGroup.set(task.group, list);
  }
  const groups = [...byGroup.keys()].sort((a, b) => a - b);
  const isStory = (group: number): boolean => parsed.groups[group]?.story !== undefined;
  const groupSettled = (group: number): boolean => (byGroup.get(group) ?? []).every(settled);

  const startable: SpeckitTask[] = [];
  for (const [position, group] of groups.entries()) {
    // A story phase waits for the phases before it that are not stories (setup, foundational); any other
    // phase (polish) waits for everything before it.
    const earlier = groups.slice(0, position);
    const waitsFor = isStory(group) ? earlier.filter((other) => !isStory(other)) : earlier;
    if (!waitsFor.every(groupSettled)) continue;
    const tasks = byGroup.get(group) ?? [];
    for (const [index, task] of tasks.entries()) {
      if (settled(task) || running.has(task.id)) continue;
      const before = tasks.slice(0, index);
      // A [P] task may run beside other [P] tasks, but not before the sequential tasks above it.
      const orderOk = task.parallel ? before.every((other) => other.parallel || settled(other)) : before.every(settled);
      const depsOk = task.dependsOn.every((dep) => {
        const other = byId.get(dep);
        return other === undefined || (settled(other) && !waiting.has(other.id));
      });
      if (orderOk && depsOk) startable.push(task);
    }
  }
  return startable;
}

/**
 * tasks.md with the checkboxes of `ids` ticked (`[X]`, as /speckit.implement writes), and the open lines
 * that repeat them, as the prompt asks a single agent to do; other lines untouched.
 */
export function tickTasks(text: string, parsed: ParsedTasks, ids: readonly string[]): string {
  const lines = text.split('\n');
  const copies = copiesByTask(parsed);
  for (const id of ids) {
    const task = parsed.tasks.find((item) => item.id === id && !item.done);
    if (!task) continue;
    const open = (copies.get(id) ?? []).filter((copy) => !copy.done);
    for (const number of [task.line, ...open.map((copy) => copy.line)]) {
      const line = lines[number - 1];
      if (line !== undefined) lines[number - 1] = line.replace(/\[ \]/, '[X]');
    }
  }
  return lines.join('\n');
}
