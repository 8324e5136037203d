// Which task comes next, what is ready, why nothing is: pure decisions over a parsed tasks.md.
import type { Snapshot, Task } from '../types.ts';
import { copiesByTask, priorityNumber, tasksById, type CopyLine, type ParsedTasks, type SpeckitTask, type StrayLine, type TaskGroup } from './parse.ts';

/** `waiting`: the agent asked a question about the task and no person has answered it yet. */
export type TaskState = 'done' | 'open' | 'skipped' | 'waiting';

const NONE: ReadonlySet<string> = new Set();

export function stateOf(task: SpeckitTask, skipped: ReadonlySet<string>, waiting: ReadonlySet<string> = NONE): TaskState {
  if (task.done) return 'done';
  if (waiting.has(task.id)) return 'waiting';
  return skipped.has(task.id) ? 'skipped' : 'open';
}

function isUnblocked(task: SpeckitTask, byId: ReadonlyMap<string, SpeckitTask>): boolean {
  return task.dependsOn.every((dep) => byId.get(dep)?.done ?? true);
}

/**
 * Ready tasks, the next one first: open tasks whose dependencies are done, from the first phase (in file
 * order) that still has open tasks. When every open task of that phase waits on something, the earliest
 * unblocked task anywhere is taken instead, so a dependency written out of order does not stall the run.
 * Tasks set aside (skipped, or waiting for an answer) are not open: the next phase may go on without them.
 */
export function readyTasks(parsed: ParsedTasks, skipped: ReadonlySet<string>, waiting: ReadonlySet<string> = NONE): SpeckitTask[] {
  return readyOf(parsed, parsed.tasks.filter((task) => stateOf(task, skipped, waiting) === 'open'));
}

/** readyTasks from the open tasks (in file order); only the phases it answers from are checked for blockers. */
function readyOf(parsed: ParsedTasks, open: readonly SpeckitTask[]): SpeckitTask[] {
  const first = open[0];
  if (!first) return [];
  const byId = tasksById(parsed);
  const current = open.filter((task) => task.group === first.group && isUnblocked(task, byId));
  if (current.length > 0) return current;
  const fallback = open.find((task) => isUnblocked(task, byId));
  return fallback ? open.filter((task) => task.group === fallback.group && isUnblocked(task, byId)) : [];
}

export function groupOf(parsed: ParsedTasks, task: SpeckitTask): TaskGroup | undefined {
  return parsed.groups[task.group];
}

/** The loop's view of one task. */
export function toTask(parsed: ParsedTasks, task: SpeckitTask, skipped: ReadonlySet<string>, waiting: ReadonlySet<string> = NONE): Task {
  const group = groupOf(parsed, task);
  const story = group?.story;
  return {
    id: task.id,
    title: task.title,
    status: stateOf(task, skipped, waiting),
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

/** Stray lines that hold completion back: open, or marked in a way ralph cannot read. */
export function blockingStrays(parsed: ParsedTasks): StrayLine[] {
  return parsed.strays.filter((stray) => stray.state !== 'done');
}

/** A stray line as the loop sees it: remaining, never ready, so the run cannot end "complete" past it. */
function strayTask(stray: StrayLine): Task {
  return { id: `line ${stray.line}`, title: stray.text, status: 'stray', meta: { line: stray.line, why: stray.why } };
}

/**
 * Snapshot of tasks.md: skipped tasks are neither remaining nor ready; tasks waiting for an answer remain
 * but are never ready; open stray lines remain.
 */
export function buildSnapshot(parsed: ParsedTasks, skipped: ReadonlySet<string>, waiting: ReadonlySet<string> = NONE): Snapshot {
  const as = (task: SpeckitTask): Task => toTask(parsed, task, skipped, waiting);
  // One pass sorts the tasks (a big tasks.md has tens of thousands of them).
  const open: SpeckitTask[] = [];
  const remaining: Task[] = [];
  const done: Task[] = [];
  const skippedTasks: Task[] = [];
  const waitingTasks: Task[] = [];
  for (const task of parsed.tasks) {
    const state = stateOf(task, skipped, waiting);
    if (state === 'open' || state === 'waiting') {
      const item = as(task);
      remaining.push(item);
      if (state === 'open') open.push(task);
      else waitingTasks.push(item);
    } else (state === 'done' ? done : skippedTasks).push(as(task));
  }
  for (const stray of blockingStrays(parsed)) remaining.push(strayTask(stray));
  return { ready: readyOf(parsed, open).map(as), remaining, done, skipped: skippedTasks, ...(waitingTasks.length > 0 ? { waiting: waitingTasks } : {}) };
}

/** One line per open task saying what it waits on, and one per stray line that holds completion back. */
export function explainStuck(parsed: ParsedTasks, skipped: ReadonlySet<string>, tasksPath: string, answering: ReadonlySet<string> = NONE): string {
  const strays = blockingStrays(parsed);
  const waiting = parsed.tasks.some((task) => stateOf(task, skipped, answering) === 'open');
  const parts = waiting ? [explainWaiting(parsed, skipped, tasksPath, answering)] : [];
  const setAside = parsed.tasks.filter((task) => stateOf(task, skipped) === 'skipped');
  if (setAside.length > 0) {
    const one = setAside.length === 1;
    parts.push(
      [
        `${setAside.length} task${one ? ' was' : 's were'} skipped after failing iteration after iteration and ${one ? 'is' : 'are'} still open, so the feature is not complete:`,
        ...setAside.map((task) => `  ${task.id} ${task.title} (${tasksPath} line ${task.line})`),
        '  finish them by hand and tick them, or run ralph again: a new run gives skipped tasks another chance',
      ].join('\n'),
    );
  }
  if (strays.length > 0) parts.push(explainStrays(strays, tasksPath));
  return parts.join('\n');
}

/** Why each stray line keeps the feature from completing, and what to do about it. */
export function explainStrays(strays: readonly StrayLine[], tasksPath: string): string {
  const lines = strays.map((stray) => `  ${tasksPath}:${stray.line}: ${shorten(stray.text)}: ${stray.why}`);
  const one = strays.length === 1;
  const head = `${strays.length} line${one ? '' : 's'} of ${tasksPath} look${one ? 's' : ''} like ${one ? 'a task' : 'tasks'} that ralph will not work on and cannot count as done, so the feature is not complete:`;
  const hint = '  tick a line whose work is done, give a real task an id like T001 inside a phase, or delete the line; then run ralph again';
  return [head, ...lines, hint].join('\n');
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

const WAITS_WORDS: Record<TaskState, string> = { done: 'done', open: 'open', skipped: 'skipped after repeated failures', waiting: 'waiting for an answer to its question' };

function explainWaiting(parsed: ParsedTasks, skipped: ReadonlySet<string>, tasksPath: string, answering: ReadonlySet<string>): string {
  const byId = tasksById(parsed);
  const lines: string[] = [];
  for (const task of parsed.tasks) {
    if (stateOf(task, skipped, answering) !== 'open') continue;
    const waits = task.dependsOn
      .map((dep) => byId.get(dep))
      .filter((dep): dep is SpeckitTask => dep !== undefined && !dep.done)
      .map((dep) => `${dep.id} (${WAITS_WORDS[stateOf(dep, skipped, answering)]})`);
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

/** The task as the reviewer sees it: its line, phase, story, and where the acceptance scenarios are. */
export function reviewBrief(input: { parsed: ParsedTasks; task: SpeckitTask; tasksPath: string; specPath: string; planPath: string }): string {
  const { parsed, task } = input;
  const group = groupOf(parsed, task);
  const lines = [`### Task ${task.id}`, '', task.text, '', `- Location: ${input.tasksPath} line ${task.line}`];
  if (group) lines.push(`- Phase: ${group.heading}`);
  if (group?.story) lines.push(`- User story: ${group.story.id} "${group.story.title}"`);
  if (task.section) lines.push(`- Section: ${task.section}`);
  lines.push(`- The feature's spec, with the acceptance scenarios of each user story: ${input.specPath}; the plan: ${input.planPath}`);
  return lines.join('\n');
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
  /** The reviewer's rejection of the last attempt at this task, when there was one. */
  review?: { iteration: number; reasons: string };
  /** Tasks waiting for a person's answer to their question: to be left alone. */
  waiting?: ReadonlyArray<{ id: string; title: string }>;
  /** This task's answered questions, as lib/questions/text.ts words them. */
  answers?: string;
}): string {
  const { parsed, task } = input;
  const waiting = input.waiting ?? [];
  const skippedIds = new Set([...input.skipped, ...waiting].map((note) => note.id));
  const group = groupOf(parsed, task);
  const byId = tasksById(parsed);
  const lines = [`${task.text}`, '', `- Location: ${input.tasksPath} line ${task.line}`];
  if (group) lines.push(`- Phase: ${group.heading}`);
  if (group?.story) {
    const priority = group.story.priority ? `, priority ${group.story.priority}` : '';
    lines.push(`- User story: ${group.story.id} "${group.story.title}"${priority}${group.story.mvp ? ' (MVP)' : ''}`);
  }
  if (task.section) lines.push(`- Section: ${task.section}`);
  lines.push(...repeatNotes(parsed, task));
  if (task.dependsOn.length > 0) {
    lines.push(`- Depends on: ${task.dependsOn.map((dep) => `${dep}${byId.get(dep)?.done ? ' (done)' : ' (open)'}`).join(', ')}`);
  }
  const siblings = parsed.tasks.filter((item) => item.group === task.group && !item.done && !skippedIds.has(item.id));
  if (siblings.length > 0) lines.push(`- Open tasks of this phase, in order: ${siblings.map((item) => item.id).join(', ')}`);
  lines.push(`- Commit message once this phase is complete: \`${commitMessageFor(input.feature, group)}\``);
  if (input.review) {
    lines.push(`- Review: ralph's independent reviewer rejected the last attempt at this task (iteration ${input.review.iteration}) and unchecked it: ${input.review.reasons}. Fix these problems first; the task counts as done only once a review approves it.`);
  }
  if (input.answers) lines.push('', input.answers);
  if (waiting.length > 0) {
    lines.push('', "Tasks waiting for a person's answer: an earlier iteration asked a question about each. Leave them alone: do not work on them or check them off.");
    for (const note of waiting) lines.push(`- ${note.id} ${note.title}`);
  }
  if (input.skipped.length > 0) {
    lines.push('', 'Skipped tasks: ralph set these aside after repeated failed iterations. Leave them alone: do not work on them or check them off.');
    for (const note of input.skipped) lines.push(`- ${note.id} ${note.title} (failed ${note.failures} iterations)`);
  }
  return lines.join('\n');
}

/**
 * What the agent must know when an id is written on several lines: which line is this task, and which
 * copies to tick with it. Ticking them keeps the file readable; ralph goes by the task's own line.
 */
function repeatNotes(parsed: ParsedTasks, task: SpeckitTask): string[] {
  const notes: string[] = [];
  if (task.repeats) notes.push(`- ${task.writtenId} is also the id of another task (line ${task.repeats.line}): this task is the one on line ${task.line}; leave the other line alone`);
  const copies = copiesByTask(parsed).get(task.id) ?? [];
  const open = copies.filter((copy) => !copy.done);
  const ticked = copies.filter((copy) => copy.done);
  const lines = (list: readonly CopyLine[]): string => `line${list.length === 1 ? '' : 's'} ${list.map((copy) => copy.line).join(', ')}`;
  if (open.length > 0) notes.push(`- ${task.writtenId} is written again on ${lines(open)}: tick ${open.length === 1 ? 'that line' : 'those lines'} too when this task is done`);
  if (ticked.length > 0 && !task.done) {
    notes.push(`- ${capitalize(lines(ticked))} ${ticked.length === 1 ? 'repeats this task and is' : 'repeat this task and are'} already ticked: that does not make it done; tick line ${task.line} once the work is done`);
  }
  return notes;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
