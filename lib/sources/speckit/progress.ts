// progress.txt entries and the ralph-tasks.json mirror: pure text and data, written by index.ts.
import { copiesByTask, type ParsedTasks } from './parse.ts';

export const PROGRESS_FILE = 'progress.txt';
export const TRACKING_FILE = 'ralph-tasks.json';
/** Consecutive failed iterations of one task before it is set aside. */
export const SKIP_AFTER = 3;

export type EntryStatus = 'completed' | 'failed' | 'skipped' | 'interrupted' | 'question';

export const STATUS_TEXT: Record<EntryStatus, string> = {
  completed: '✅ Completed',
  failed: '❌ Failed',
  skipped: '⏭️ Skipped',
  interrupted: '⚠️ Interrupted',
  question: '❓ Question: waiting for an answer',
};

const ITERATION_HEADING = /^## Iteration (\d+)\b/;
/** The first line of an entry, as iterationEntry writes it (for compaction). */
export const ENTRY_HEADING = /^## Iteration \d+ - /;

/** The top of a new progress.txt: title, feature, start time and the Codebase Patterns section. */
export function progressHeader(input: { feature: string; tasksPath: string; started: string }): string {
  return [
    '# Ralph Progress Log',
    `Feature: ${input.feature}`,
    `Tasks: ${input.tasksPath}`,
    `Started: ${input.started}`,
    '',
    '## Codebase Patterns',
    '<!-- Reusable patterns for this codebase, most useful first. Agents read this section before anything else. -->',
    '',
    '---',
    '',
  ].join('\n');
}

/** Marks where one run of ralph begins; iterations of that run follow it. */
export function sessionHeader(input: { sessionId: string; started: string; firstIteration: number }): string {
  return [`## Session ${input.started} (run ${input.sessionId})`, `Starting at iteration ${input.firstIteration}.`, '', '---', ''].join('\n');
}

export interface EntryInput {
  iteration: number;
  timestamp: string;
  task: { id: string; title: string };
  status: EntryStatus;
  /** Why the iteration failed, or why the task was skipped. */
  reason?: string;
  tasksDone: readonly string[];
  filesChanged: readonly string[];
  learnings?: string;
  commit?: string;
  duration?: string;
  note?: string;
  /** The independent review in one line, e.g. `rejected by codex: no tests`. */
  review?: string;
  /** What the agent asked a person (status `question`). */
  question?: string;
}

function indent(block: string): string[] {
  return block.split('\n').map((line) => (line.trim() ? `  ${line}` : ''));
}

/** One `## Iteration N - <timestamp>` entry, ending with `---`. */
export function iterationEntry(input: EntryInput): string {
  const lines = [`## Iteration ${input.iteration} - ${input.timestamp}`, `- Task: ${input.task.id} ${input.task.title}`, `- Status: ${STATUS_TEXT[input.status]}`];
  if (input.question) lines.push(`- Question: ${input.question.trim().replace(/\n/g, '\n  ')}`);
  else if (input.reason && input.status !== 'completed') lines.push(`- Reason: ${input.reason}`);
  lines.push(`- Tasks completed: ${input.tasksDone.length > 0 ? input.tasksDone.join(', ') : 'none'}`);
  if (input.filesChanged.length > 0) {
    lines.push('- Files changed:', ...input.filesChanged.map((file) => `  - ${file}`));
  } else {
    lines.push('- Files changed: none');
  }
  if (input.commit) lines.push(`- Commit: ${input.commit}`);
  if (input.duration) lines.push(`- Duration: ${input.duration}`);
  if (input.review) lines.push(`- Review: ${input.review}`);
  if (input.note) lines.push(`- Note: ${input.note}`);
  if (input.learnings?.trim()) lines.push('- Learnings:', ...indent(input.learnings.trim()));
  else lines.push('- Learnings: none reported');
  lines.push('', '---', '');
  return lines.join('\n');
}

/** The highest iteration number recorded in progress.txt (0 when none). */
export function lastIterationNumber(progress: string): number {
  let last = 0;
  for (const line of progress.split(/\r?\n/)) {
    const match = ITERATION_HEADING.exec(line);
    if (match) last = Math.max(last, Number(match[1]));
  }
  return last;
}

export interface TrackedTask {
  id: string;
  title: string;
  phase?: string;
  story?: string;
  status: 'open' | 'done' | 'skipped';
  /** Iterations that worked on this task. */
  attempts: number;
  /** Failed iterations in total. */
  failures: number;
  /** Failed iterations in a row, reset by any passing iteration on the task or an iteration on another task. */
  consecutiveFailures: number;
  skipped: boolean;
  lastIteration?: number;
  lastOutcome?: 'pass' | 'fail' | 'no_change' | 'question';
  /** The reviewer's rejection of the last attempt, shown in the next prompt; dropped once the task is done. */
  review?: { iteration: number; reasons: string };
  /** Lines of tasks.md that repeat this task (a summary): not tasks of their own, their boxes count for nothing. */
  copies?: number[];
}

export interface RunningTask {
  taskId: string;
  iteration: number;
  startedAt: string;
}

export interface Tracking {
  version: 1;
  feature: string;
  tasksFile: string;
  updatedAt: string;
  lastIteration: number;
  /** The task an iteration is working on right now (cleared when it is recorded). */
  current?: RunningTask;
  /** With several workers: every task an iteration is working on right now (each cleared when recorded). */
  running?: RunningTask[];
  summary: { total: number; done: number; open: number; skipped: number };
  tasks: TrackedTask[];
  /** Converge passes of the cycle under way (`open`), or of the last one and whether it converged. */
  converge?: { passes: number; open: boolean; converged?: boolean };
  /** The project's hooks that passed in the cycle of work under way (`closed` once its after hooks all passed). */
  hooks?: { passed: string[]; closed: boolean };
}

export function emptyTracking(feature: string, tasksFile: string, now: string): Tracking {
  return { version: 1, feature, tasksFile, updatedAt: now, lastIteration: 0, summary: { total: 0, done: 0, open: 0, skipped: 0 }, tasks: [] };
}

/** Reads ralph-tasks.json; anything unreadable starts afresh (it is a mirror, tasks.md is the truth). */
export function parseTracking(text: string | undefined, feature: string, tasksFile: string, now: string): Tracking {
  const fresh = emptyTracking(feature, tasksFile, now);
  if (!text) return fresh;
  try {
    const data = JSON.parse(text) as Partial<Tracking>;
    if (data.version !== 1 || !Array.isArray(data.tasks)) return fresh;
    const tasks = data.tasks
      .filter((task): task is TrackedTask => typeof task === 'object' && task !== null && typeof task.id === 'string')
      .map((task) => ({
        ...task,
        attempts: Number(task.attempts) || 0,
        failures: Number(task.failures) || 0,
        consecutiveFailures: Number(task.consecutiveFailures) || 0,
        skipped: task.skipped === true,
      }));
    const running = Array.isArray(data.running) ? data.running.filter((item) => typeof item?.taskId === 'string' && Number.isInteger(item.iteration)) : undefined;
    const converge = data.converge && Number.isInteger(data.converge.passes) ? { passes: data.converge.passes, open: data.converge.open === true, ...(data.converge.converged === undefined ? {} : { converged: data.converge.converged === true }) } : undefined;
    const hooks = data.hooks && Array.isArray(data.hooks.passed) ? { passed: data.hooks.passed.filter((key): key is string => typeof key === 'string'), closed: data.hooks.closed === true } : undefined;
    return { ...fresh, lastIteration: Number(data.lastIteration) || 0, current: data.current, ...(running?.length ? { running } : {}), tasks, ...(converge ? { converge } : {}), ...(hooks ? { hooks } : {}) };
  } catch {
    return fresh;
  }
}

/** Mirrors tasks.md into the tracking data: new tasks added, removed ones dropped, counters kept; copies listed under their task. */
export function syncTracking(tracking: Tracking, parsed: ParsedTasks, now: string): Tracking {
  const previous = new Map(tracking.tasks.map((task) => [task.id, task]));
  const copies = copiesByTask(parsed);
  const tasks = parsed.tasks.map((task): TrackedTask => {
    const before = previous.get(task.id);
    const repeated = copies.get(task.id);
    const skipped = !task.done && (before?.skipped ?? false);
    return {
      id: task.id,
      title: task.title,
      phase: parsed.groups[task.group]?.heading,
      story: task.story,
      status: task.done ? 'done' : skipped ? 'skipped' : 'open',
      attempts: before?.attempts ?? 0,
      failures: before?.failures ?? 0,
      // A box ticked now may be unticked again (a reviewer's rejection): only a passing iteration
      // (recordIteration) ends the run of failures, not a glimpse of the tick.
      consecutiveFailures: before?.consecutiveFailures ?? 0,
      skipped,
      lastIteration: before?.lastIteration,
      lastOutcome: before?.lastOutcome,
      ...(before?.review && !task.done ? { review: before.review } : {}),
      ...(repeated ? { copies: repeated.map((copy) => copy.line) } : {}),
    };
  });
  const count = (status: TrackedTask['status']): number => tasks.filter((task) => task.status === status).length;
  return {
    ...tracking,
    updatedAt: now,
    tasks,
    summary: { total: tasks.length, done: count('done'), open: count('open'), skipped: count('skipped') },
  };
}

/**
 * Records one iteration. In Spec Kit mode an iteration that finished no checkbox is a failure whatever
 * the agent said; the same task failing SKIP_AFTER iterations in a row is set aside. With several workers
 * (`interleaved`) iterations on other tasks run in between, so only the task's own iterations count. An
 * iteration whose agent asked a question counts for nothing: no failure, and no break in anyone's run.
 */
export function recordIteration(
  tracking: Tracking,
  result: { iteration: number; taskId: string; kind: 'pass' | 'fail' | 'no_change' | 'question'; tasksDone: readonly string[] },
  options: { interleaved?: boolean } = {},
): { tracking: Tracking; newlySkipped: boolean; consecutiveFailures: number } {
  let newlySkipped = false;
  let consecutiveFailures = 0;
  const done = new Set(result.tasksDone);
  const asked = result.kind === 'question';
  const tasks = tracking.tasks.map((task): TrackedTask => {
    if (asked) {
      if (task.id !== result.taskId) return task;
      consecutiveFailures = task.consecutiveFailures;
      return { ...task, attempts: task.attempts + 1, lastIteration: result.iteration, lastOutcome: result.kind };
    }
    if (task.id !== result.taskId) {
      if (options.interleaved) return done.has(task.id) ? { ...task, consecutiveFailures: 0 } : task;
      // Another task's run of failures is broken by this iteration.
      return done.has(task.id) ? { ...task, consecutiveFailures: 0 } : { ...task, consecutiveFailures: task.skipped ? task.consecutiveFailures : 0 };
    }
    const failed = result.kind !== 'pass';
    const next: TrackedTask = {
      ...task,
      attempts: task.attempts + 1,
      failures: task.failures + (failed ? 1 : 0),
      consecutiveFailures: failed ? task.consecutiveFailures + 1 : 0,
      lastIteration: result.iteration,
      lastOutcome: result.kind,
    };
    consecutiveFailures = next.consecutiveFailures;
    if (failed && !task.skipped && next.consecutiveFailures >= SKIP_AFTER && task.status !== 'done') {
      next.skipped = true;
      next.status = 'skipped';
      newlySkipped = true;
    }
    return next;
  });
  const { current: _current, running, ...rest } = tracking;
  const stillRunning = running?.filter((item) => item.taskId !== result.taskId);
  return {
    tracking: { ...rest, ...(stillRunning?.length ? { running: stillRunning } : {}), tasks, lastIteration: Math.max(tracking.lastIteration, result.iteration) },
    newlySkipped,
    consecutiveFailures,
  };
}

/** Gives tasks set aside by an earlier run a fresh start; returns the ids it released. */
export function releaseSkipped(tracking: Tracking): { tracking: Tracking; released: string[] } {
  const released = tracking.tasks.filter((task) => task.skipped).map((task) => task.id);
  const tasks = tracking.tasks.map((task) => (task.skipped ? { ...task, skipped: false, consecutiveFailures: 0, status: 'open' as const } : task));
  return { tracking: { ...tracking, tasks }, released };
}
