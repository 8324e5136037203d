// Which task comes next, what is ready, why nothing is: pure decisions over a parsed tasks.md.
import type { Snapshot, Task } from '../types.ts';
import { priorityNumber, type ParsedTasks, type SpeckitTask, type TaskGroup } from './parse.ts';

export type TaskState = 'done' | 'open' | 'skipped';

export function stateOf(task: SpeckitTask, skipped: ReadonlySet<string>): TaskState {
  if (task.done) return 'done';
  return skipped.has(task.id) ? 'skipped' : 'open';
}

function isUnblocked(task: SpeckitTask, byId: ReadonlyMap<string, SpeckitTask>): boolean {
  return task.dependsOn.every((dep) => byId.get(dep)?.done ?? true);
}

/**
 * Ready tasks, the next one first: open tasks whose dependencies are done, from the first phase (in file
 * order) that still has open tasks. When every open task of that phase waits on something, the earliest
 * unblocked task anywhere is taken instead, so a dependency written out of order does not stall the run.
 */
export function readyTasks(parsed: ParsedTasks, skipped: ReadonlySet<string>): SpeckitTask[] {
  const byId = new Map(parsed.tasks.map((task) => [task.id, task]));
  const open = parsed.tasks.filter((task) => stateOf(task, skipped) === 'open');
  const first = open[0];
  if (!first) return [];
  const unblocked = open.filter((task) => isUnblocked(task, byId));
  const current = unblocked.filter((task) => task.group === first.group);
  if (current.length > 0) return current;
  const fallback = unblocked[0];
  return fallback ? unblocked.filter((task) => task.group === fallback.group) : [];
}

export function groupOf(parsed: ParsedTasks, task: SpeckitTask): TaskGroup | undefined {
  return parsed.groups[task.group];
}

/** The loop's view of one task. */
export function toTask(parsed: ParsedTasks, task: SpeckitTask, skipped: ReadonlySet<string>): Task {
  const group = groupOf(parsed, task);
  const story = group?.story;
  return {
    id: task.id,
    title: task.title,
    status: stateOf(task, skipped),
    priority: story?.id === task.story ? priorityNumber(story?.priority) : undefined,
    meta: {
      phase: group?.heading,
      story: task.story,
      storyTitle: story?.id === task.story ? story?.title : undefined,
      section: task.section,
      parallel: task.parallel,
      dependsOn: task.dependsOn,
      line: task.line,
    },
  };
}

/** Snapshot of tasks.md: skipped tasks are neither remaining nor ready. */
export function buildSnapshot(parsed: ParsedTasks, skipped: ReadonlySet<string>): Snapshot {
  const as = (task: SpeckitTask): Task => toTask(parsed, task, skipped);
  return {
    ready: readyTasks(parsed, skipped).map(as),
    remaining: parsed.tasks.filter((task) => stateOf(task, skipped) === 'open').map(as),
    done: parsed.tasks.filter((task) => task.done).map(as),
    skipped: parsed.tasks.filter((task) => stateOf(task, skipped) === 'skipped').map(as),
  };
}

/** One line per open task saying what it waits on. */
export function explainStuck(parsed: ParsedTasks, skipped: ReadonlySet<string>, tasksPath: string): string {
  const byId = new Map(parsed.tasks.map((task) => [task.id, task]));
  const lines: string[] = [];
  for (const task of parsed.tasks) {
    if (stateOf(task, skipped) !== 'open') continue;
    const waits = task.dependsOn
      .map((dep) => byId.get(dep))
      .filter((dep): dep is SpeckitTask => dep !== undefined && !dep.done)
      .map((dep) => `${dep.id} (${stateOf(dep, skipped) === 'skipped' ? 'skipped after repeated failures' : 'open'})`);
    if (waits.length > 0) lines.push(`${task.id} waits on ${waits.join(', ')}`);
  }
  const head = `no task in ${tasksPath} can start: every open task depends on one that is not done`;
  const hint = 'finish or check off the blocking tasks by hand (or fix the "depends on" text), then run ralph again';
  return [head, ...lines, hint].join('\n');
}

/** The commit message the prompt suggests for a finished phase: `feat(<feature>): US1 Sign in`. */
export function commitMessageFor(feature: string, group: TaskGroup | undefined): string {
  if (group?.story) return `feat(${feature}): ${group.story.id} ${group.story.title}`.trimEnd();
  const phase = group?.heading.replace(/^Phase\s+([0-9A-Z]+)\s*[:.\-–—]?\s*/i, 'Phase $1 ') ?? 'tasks';
  return `feat(${feature}): ${phase}`.trimEnd();
}

export interface SkippedNote {
  id: string;
  title: string;
  failures: number;
}

/** The `{CURRENT_TASK}` block: the task, its phase and story, what is still open there, and what to leave alone. */
export function currentTaskBlock(input: {
  parsed: ParsedTasks;
  task: SpeckitTask;
  skipped: readonly SkippedNote[];
  feature: string;
  tasksPath: string;
}): string {
  const { parsed, task } = input;
  const skippedIds = new Set(input.skipped.map((note) => note.id));
  const group = groupOf(parsed, task);
  const byId = new Map(parsed.tasks.map((item) => [item.id, item]));
  const lines = [`${task.text}`, '', `- Location: ${input.tasksPath} line ${task.line}`];
  if (group) lines.push(`- Phase: ${group.heading}`);
  if (group?.story) {
    const priority = group.story.priority ? `, priority ${group.story.priority}` : '';
    lines.push(`- User story: ${group.story.id} "${group.story.title}"${priority}${group.story.mvp ? ' (MVP)' : ''}`);
  }
  if (task.section) lines.push(`- Section: ${task.section}`);
  if (task.dependsOn.length > 0) {
    lines.push(`- Depends on: ${task.dependsOn.map((dep) => `${dep}${byId.get(dep)?.done ? ' (done)' : ' (open)'}`).join(', ')}`);
  }
  const siblings = parsed.tasks.filter((item) => item.group === task.group && !item.done && !skippedIds.has(item.id));
  if (siblings.length > 0) lines.push(`- Open tasks of this phase, in order: ${siblings.map((item) => item.id).join(', ')}`);
  lines.push(`- Commit message once this phase is complete: \`${commitMessageFor(input.feature, group)}\``);
  if (input.skipped.length > 0) {
    lines.push('', 'Skipped tasks: ralph set these aside after repeated failed iterations. Leave them alone: do not work on them or check them off.');
    for (const note of input.skipped) lines.push(`- ${note.id} ${note.title} (failed ${note.failures} iterations)`);
  }
  return lines.join('\n');
}
