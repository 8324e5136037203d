import { existsSync } from 'node:fs';
import path from 'node:path';
import dayjs from 'dayjs';
import { readConfigFile, resolveConfig, type SourceName } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { formatDuration } from '../duration.ts';
import { errorMessage } from '../errors.ts';
import { Git } from '../repo/git.ts';
import { inspectLock, LOCK_FILE, type LockState } from '../repo/lock.ts';
import { readStatusFile } from '../progress/status-file.ts';
import { describeState, formatClock } from '../progress/describe.ts';
import type { RunState, RunStatusFile } from '../progress/state.ts';
import { createSource, detectSource } from '../sources/index.ts';
import type { Task } from '../sources/types.ts';
import { paint, useColor } from '../view/colour.ts';
import { keptBranches } from '../session/worktrees.ts';
import type { ParsedArgv } from './argv.ts';
import { readQuestions, type Question } from '../questions/store.ts';
import { questionLines } from '../questions/text.ts';
import type { RemoteView } from '../landing/view.ts';
import { claimLines } from '../landing/view-text.ts';
import { remoteLook } from './status-remote.ts';

export type RunPresence = 'alive' | 'stale' | 'none';

export interface TaskCounts {
  source: string;
  target: string;
  total: number;
  done: number;
  remaining: number;
  ready: number;
  skipped: number;
  skippedIds: string[];
  /** Remaining tasks set aside until a person answers their question. */
  waiting?: number;
  /** Tasks in progress in the source itself and who holds them (beads: bd's claims, every host's). */
  held?: Array<{ id: string; holder: string }>;
}

/** Everything `ralph status` knows; `--json` prints exactly this. */
export interface StatusReport {
  root: string;
  checkedAt: string;
  /** alive: the lock holder runs; stale: a lock names a process that is gone; none: no lock. */
  run: RunPresence;
  alive: boolean;
  pid: number | null;
  /** reason: why the lock is stale, or held against the odds (a stopped run, a fresh heartbeat on a reused PID). */
  lock: { pid: number | null; startedAt: string | null; branch: string | null; heartbeatAgeMs: number | null; reason: string | null } | null;
  /** status.json was written by the process that holds (or held) the lock. */
  current: boolean;
  state: RunState | null;
  sessionId: string | null;
  iteration: number | null;
  maxIterations: number | null;
  task: { id: string; title: string } | null;
  elapsedMs: number | null;
  waitUntil: string | null;
  lastEventAgeMs: number | null;
  costUsd: number | null;
  /** `.ralph/status.json` as written (the last run's when no run is going on). */
  status: RunStatusFile | null;
  tasks: TaskCounts | { error: string } | null;
  /** Branches holding work ralph kept instead of merging (several workers: failed, interrupted, conflicting). */
  kept: string[];
  /** The agents' questions: waiting for an answer, or answered and not yet worked on (.ralph/questions.jsonl). */
  questions: Question[];
  /** --remote (or RALPH_REMOTE, "remote"): the feature's claims on the remote, or why they could not be read. */
  remote?: RemoteView;
}

const SOURCE_NAMES: readonly string[] = ['beads', 'speckit', 'prd'];

/** Whether `root` is a project ralph works on (or has worked on). */
async function isRalphRepo(root: string): Promise<boolean> {
  if (['.ralph', LOCK_FILE, `${LOCK_FILE}.d`].some((name) => existsSync(path.join(root, name)))) return true;
  return (await detectSource(root).catch(() => undefined)) !== undefined;
}

/** The task source's counts; a source that cannot be read becomes `{ error }`, never a failure of `status`. */
async function loadTasks(root: string, parsed: ParsedArgv, deps: Deps, runSource: string | undefined): Promise<StatusReport['tasks']> {
  try {
    const config = resolveConfig({ flags: parsed.flags, env: deps.env, file: readConfigFile(root) });
    // A live run's own source first; otherwise the one the next run would pick.
    const known = runSource && SOURCE_NAMES.includes(runSource) ? (runSource as SourceName) : undefined;
    const name = config.source ?? known ?? (await detectSource(root, { prd: config.extra.get('prd') as string | undefined }));
    if (!name) return null;
    const branch = await new Git(root).branch();
    const source = await createSource(name, { root, branch, config, deps: { ...deps, cwd: root }, warn: () => undefined });
    const problems = await source.check();
    let snapshot;
    try {
      snapshot = await source.snapshot();
    } catch (error) {
      return { error: problems[0] ?? errorMessage(error) };
    }
    const skipped = snapshot.skipped?.length ?? 0;
    return {
      source: name,
      target: source.describe(),
      total: snapshot.done.length + snapshot.remaining.length + skipped,
      done: snapshot.done.length,
      remaining: snapshot.remaining.length,
      ready: snapshot.ready.length,
      skipped,
      skippedIds: (snapshot.skipped ?? []).map((task) => task.id),
      waiting: snapshot.waiting?.length ?? 0,
      ...heldIn(snapshot.remaining),
    };
  } catch (error) {
    return { error: errorMessage(error) };
  }
}

/** Reads the lock and status.json and folds them into a report (without the task counts). */
export function readRunState(root: string, now: number): Omit<StatusReport, 'tasks' | 'kept' | 'questions'> {
  const lock: LockState = inspectLock(root, now);
  const status = readStatusFile(root) ?? null;
  const run: RunPresence = lock.held ? 'alive' : lock.stale ? 'stale' : 'none';
  const pid = lock.info?.pid ?? null;
  const current = status !== null && pid !== null && status.pid === pid && run !== 'none';
  const ended = status?.endedAt ? Date.parse(status.endedAt) : now;
  return {
    root,
    checkedAt: new Date(now).toISOString(),
    run,
    alive: run === 'alive',
    pid,
    lock: run === 'none' ? null : { pid, startedAt: lock.info?.startedAt ?? null, branch: lock.info?.branch ?? null, heartbeatAgeMs: lock.heartbeatAgeMs === undefined ? null : Math.round(lock.heartbeatAgeMs), reason: lock.reason ?? null },
    current,
    state: status?.state ?? null,
    sessionId: status?.sessionId ?? null,
    iteration: status?.iteration ?? null,
    maxIterations: status?.maxIterations ?? null,
    task: status?.task ?? null,
    elapsedMs: status ? Math.max(0, ended - Date.parse(status.startedAt)) : null,
    waitUntil: status?.waitUntil ?? null,
    lastEventAgeMs: status ? Math.max(0, now - Date.parse(status.lastEventAt)) : null,
    costUsd: status?.costUsd ?? null,
    status,
  };
}

const ago = (ms: number): string => `${formatDuration(ms)} ago`;

function describeRun(status: RunStatusFile, now: number): string[] {
  const lines = [`  state:      ${describeState(status, now)}`];
  if (status.iteration > 0) lines.push(`  iteration:  ${status.iteration}/${status.maxIterations}${status.attempt > 1 ? `, attempt ${status.attempt}` : ''}`);
  if (status.workers && status.state !== 'finished') {
    for (const item of status.workers) lines.push(`  worker w${item.worker}:  iteration ${item.iteration}, ${item.task.id} ${item.task.title} (${formatDuration(Math.max(0, now - Date.parse(item.startedAt)))})`);
    if (status.workers.length === 0) lines.push('  workers:    none running');
  } else if (status.task) lines.push(`  task:       ${status.task.id} ${status.task.title}`);
  const started = Date.parse(status.startedAt);
  const ended = status.endedAt ? Date.parse(status.endedAt) : now;
  lines.push(`  elapsed:    ${formatDuration(Math.max(0, ended - started))} (since ${formatClock(started, now)})`);
  lines.push(`  last event: ${ago(Math.max(0, now - Date.parse(status.lastEventAt)))}`);
  if (status.costUsd > 0) lines.push(`  cost:       $${status.costUsd.toFixed(4)}`);
  // --fallback: which agent works now, and which are limited until when.
  if (status.activeAgent && status.activeAgent !== status.agent) lines.push(`  agent now:  ${status.activeAgent} (fallback)`);
  for (const item of status.limitedAgents ?? []) if (!item.until || Date.parse(item.until) > now) lines.push(`  limited:    ${item.agent} ${item.until ? `until ${formatClock(Date.parse(item.until), now)}` : 'for the rest of the run'}: ${item.reason}`);
  const c = status.counts;
  const asked = c.questions ? `, ${c.questions} asked a question` : '';
  lines.push(`  iterations: ${c.iterations} (${c.passed} passed, ${c.failed} failed, ${c.noChange} no change${asked}), ${c.tasksCompleted} task${c.tasksCompleted === 1 ? '' : 's'} completed`);
  const approved = c.reviewsApproved ?? 0;
  const rejected = c.reviewsRejected ?? 0;
  if (approved + rejected > 0 || status.lastReview) lines.push(`  reviews:    ${approved} approved, ${rejected} not approved${status.lastReview ? `; last: ${status.lastReview}` : ''}`);
  if (status.lastFailure && status.state !== 'finished') lines.push(`  last failure: ${status.lastFailure.kind}: ${status.lastFailure.reason} (${ago(Math.max(0, now - Date.parse(status.lastFailure.at)))})`);
  if (status.state === 'finished' && status.message) lines.push(`  result:     ${status.message}`);
  return lines;
}

/** The report for people. */
export function formatStatus(report: StatusReport, now: number, color = false): string {
  const lines: string[] = [];
  const status = report.status;
  const where = status ? `session ${status.sessionId}, ${status.mode} (${status.target}), agent ${status.agent}` : '';
  if (report.run === 'alive') {
    const lock = report.lock;
    const host = status && report.current ? ` on ${status.host}` : '';
    lines.push(paint(color, 'green', `ralph is running: PID ${report.pid}${host}, branch ${lock?.branch || '(none)'}`) + (report.current ? `, ${where}` : ''));
    if (lock?.reason) lines.push(`  lock:       ${lock.reason}`);
    if (report.current && status) lines.push(...describeRun(status, now));
    else lines.push(`  state:      starting (lock taken ${lock?.startedAt ? ago(Math.max(0, now - Date.parse(lock.startedAt))) : 'just now'})`);
  } else if (report.run === 'stale') {
    const lock = report.lock;
    const named = `${LOCK_FILE} names PID ${report.pid}${lock?.startedAt ? `, started ${lock.startedAt}` : ''}${lock?.branch ? `, branch ${lock.branch}` : ''}`;
    const gone = lock?.reason === `PID ${report.pid} is gone`;
    const why = report.pid === null ? lock?.reason : `${named}, ${gone ? 'which is gone (killed?)' : `but ${lock?.reason}`}`;
    lines.push(paint(color, 'red', `ralph is not running: ${why}; the next run reclaims the lock`));
    if (report.current && status) lines.push(`last known state of ${where}:`, ...describeRun(status, now));
  } else {
    lines.push('no ralph run in progress');
    if (status) {
      const end = status.endedAt ? `ended ${ago(Math.max(0, now - Date.parse(status.endedAt)))}` : `last event ${ago(Math.max(0, now - Date.parse(status.lastEventAt)))}, ended without a summary`;
      lines.push(`last run: ${where}, ${end}:`, ...describeRun(status, now));
    }
  }
  const tasks = report.tasks;
  if (tasks && 'error' in tasks) lines.push(`tasks: cannot read the task source: ${tasks.error}`);
  else if (tasks) lines.push(`tasks (${tasks.source}, ${tasks.target}): ${tasks.done} done, ${tasks.remaining} remaining (${tasks.ready} ready${tasks.waiting ? `, ${tasks.waiting} waiting for an answer` : ''})${tasks.skipped ? `, ${tasks.skipped} skipped (${tasks.skippedIds.join(', ')})` : ''}, ${tasks.total} in all`);
  if (tasks && !('error' in tasks) && tasks.held?.length) lines.push(`in progress in ${tasks.source}: ${tasks.held.map((item) => `${item.id} held by ${item.holder}`).join(', ')}`);
  if (report.remote) lines.push(...claimLines(report.remote, now, report.root));
  lines.push(...questionLines(report.questions, (iso) => ago(Math.max(0, now - Date.parse(iso)))));
  if (report.kept.length > 0) lines.push(`unmerged work kept on ${report.kept.length} branch${report.kept.length === 1 ? '' : 'es'} (look, then merge or delete): ${report.kept.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

/** The questions, or none when the file cannot be read (status only reads; it never fails on it). */
function readQuestionsQuietly(root: string): Question[] {
  try {
    return readQuestions(root);
  } catch {
    return [];
  }
}

/** Task counts cost a few helper calls (bd …): `--watch` refreshes them less often than the rest. */
const TASKS_REFRESH_MS = 5000;
const WATCH_INTERVAL_MS = 1000;

/**
 * `ralph status`: is a run alive (or did its holder die), what is it doing, how many tasks are left.
 * Works beside a running ralph: it only reads. `--json` prints one object; `--watch` refreshes every
 * second until the signal aborts. 0 when the state could be read (even with no run), 1 outside a ralph repo.
 */
export async function statusCommand(parsed: ParsedArgv, deps: Deps, signal: AbortSignal = new AbortController().signal): Promise<number> {
  const root = (await new Git(deps.cwd).root()) ?? deps.cwd;
  if (!(await isRalphRepo(root))) {
    deps.stderr.write(`ralph: no ralph state or task source in ${root}\n  hint: run 'ralph status' inside a project ralph works on (with .beads/, specs/*/tasks.md or prd.json)\n`);
    return 1;
  }
  const json = parsed.flags.get('json') === true;
  const watch = parsed.flags.get('watch') === true;
  const tty = Boolean(deps.stdout.isTTY);
  const color = useColor(deps.stdout, deps.env);
  let tasks: StatusReport['tasks'] = null;
  let kept: string[] = [];
  let tasksAt = Number.NEGATIVE_INFINITY;
  const remote = await remoteLook(root, parsed, deps, signal);

  while (!signal.aborted) {
    const now = deps.now();
    const state = readRunState(root, now);
    if (now - tasksAt >= TASKS_REFRESH_MS) {
      tasks = await loadTasks(root, parsed, deps, state.alive && state.current ? state.status?.mode : undefined);
      kept = await keptBranches(new Git(root));
      tasksAt = now;
    }
    const report: StatusReport = { ...state, tasks, kept, questions: readQuestionsQuietly(root), ...(remote ? { remote: await remote.view() } : {}) };
    if (json) deps.stdout.write(`${JSON.stringify(report)}\n`);
    else if (watch && tty) deps.stdout.write(`\u001b[H\u001b[2J${formatStatus(report, now, color)}\n(refreshing every second; Ctrl+C to stop)\n`);
    else if (watch) deps.stdout.write(`--- ${dayjs(now).format('YYYY-MM-DD HH:mm:ss')}\n${formatStatus(report, now, color)}`);
    else deps.stdout.write(formatStatus(report, now, color));
    if (!watch) return 0;
    try {
      await deps.sleep(WATCH_INTERVAL_MS, signal);
    } catch {
      break;
    }
  }
  return 0;
}

/** Remaining tasks the source itself shows in progress with a holder (beads: the assignee of a claim). */
function heldIn(remaining: readonly Task[]): { held?: Array<{ id: string; holder: string }> } {
  const held = remaining.filter((task) => task.status === 'in_progress' && typeof task.meta?.assignee === 'string').map((task) => ({ id: task.id, holder: task.meta!.assignee as string }));
  return held.length > 0 ? { held } : {};
}
