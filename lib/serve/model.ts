// What the live page shows, folded from the lines of .ralph/events.jsonl: pure, one line at a time.
// A `session_start` line begins a new picture, so the page follows a run that restarts.
import { oneLine } from '../agents/common.ts';
import type { AgentEvent } from '../agents/types.ts';
import type { IterationRecord, RemoteSummary, RunSummary } from '../events.ts';

export type TimelineOutcome = IterationRecord['outcome'] | 'running' | 'interrupted';

export interface TimelineItem {
  /** The session's number (numbered on from earlier runs). */
  iteration: number;
  /** This run's count of it, against the session line's maxIterations (this run's limit); null in older logs. */
  ofRun: number | null;
  taskId: string;
  taskTitle: string;
  startedAt: string;
  /** Null while running. */
  durationMs: number | null;
  outcome: TimelineOutcome;
  reason: string | null;
  attempts: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  commit: string | null;
  /** Which worker ran it, when the run has several (the event's `worker` field). */
  worker: string | null;
}

export interface ActivityLine {
  at: string;
  kind: 'agent' | 'tool' | 'info' | 'warning' | 'error' | 'iteration' | 'steer';
  text: string;
  iteration: number | null;
}

export interface LiveModel {
  /** `remote`: the run's --remote (remote, shared branch, this host), when it has one. */
  session: { id: string; source: string; target: string; agent: string; branch: string | null; pid: number; maxIterations: number; startedAt: string; remote: { name: string; branch: string; host: string } | null } | null;
  timeline: TimelineItem[];
  activity: ActivityLine[];
  /** `remote` and `landed`: --remote's counts, and the tasks this host landed. */
  end: { status: RunSummary['status']; exitCode: number; message: string; endedAt: string; tasksRemaining: number; remote: RemoteSummary | null; landed: string[] } | null;
  lastEventAt: string | null;
}

export const MAX_ACTIVITY = 60;
const TEXT_MAX = 240;

export function emptyModel(): LiveModel {
  return { session: null, timeline: [], activity: [], end: null, lastEventAt: null };
}

type Line = Record<string, unknown> & { at: string; type: string };

function running(model: LiveModel, iteration: unknown): TimelineItem | undefined {
  return model.timeline.find((item) => item.iteration === iteration && item.outcome === 'running');
}

function push(model: LiveModel, at: string, kind: ActivityLine['kind'], text: string, iteration: unknown = null): void {
  model.activity.push({ at, kind, text: oneLine(text, TEXT_MAX), iteration: typeof iteration === 'number' ? iteration : null });
  if (model.activity.length > MAX_ACTIVITY) model.activity.splice(0, model.activity.length - MAX_ACTIVITY);
}

function agentLine(model: LiveModel, at: string, iteration: unknown, event: AgentEvent): void {
  switch (event.kind) {
    case 'text':
      if (event.text.trim()) push(model, at, 'agent', event.text, iteration);
      break;
    case 'tool_call':
      push(model, at, 'tool', `${event.name}${event.summary ? `: ${event.summary}` : ''}`, iteration);
      break;
    case 'error':
      push(model, at, 'error', `agent error: ${event.message}`, iteration);
      break;
    case 'rate_limit':
      if (event.status === 'rejected') push(model, at, 'warning', 'the agent hit a usage limit', iteration);
      break;
    case 'result': {
      const item = running(model, iteration);
      if (item) {
        item.costUsd += event.costUsd ?? 0;
        item.inputTokens += event.inputTokens ?? 0;
        item.outputTokens += event.outputTokens ?? 0;
      }
      break;
    }
    default:
      break;
  }
}

/** Folds one parsed line of events.jsonl into the model (in place); returns the model. */
export function foldLine(model: LiveModel, line: Line): LiveModel {
  const at = line.at;
  if (line.type === 'session_start') {
    Object.assign(model, emptyModel());
    model.session = {
      id: String(line.sessionId),
      source: String(line.source),
      target: String(line.target),
      agent: String(line.agent),
      branch: typeof line.branch === 'string' ? line.branch : null,
      pid: Number(line.pid),
      maxIterations: Number(line.maxIterations),
      startedAt: at,
      remote: remoteOf(line.remote),
    };
  }
  if (!model.session) return model;
  model.lastEventAt = at;
  const worker = typeof line.worker === 'string' || typeof line.worker === 'number' ? String(line.worker) : null;
  switch (line.type) {
    case 'iteration_start': {
      const task = (line.task ?? {}) as { id?: string; title?: string };
      model.timeline.push({ iteration: Number(line.iteration), ofRun: typeof line.ofRun === 'number' ? line.ofRun : null, taskId: String(task.id ?? '?'), taskTitle: String(task.title ?? ''), startedAt: at, durationMs: null, outcome: 'running', reason: null, attempts: 1, costUsd: 0, inputTokens: 0, outputTokens: 0, commit: null, worker });
      push(model, at, 'iteration', `iteration ${line.iteration}: ${task.id} ${task.title}`, line.iteration);
      break;
    }
    case 'agent':
      agentLine(model, at, line.iteration, line.event as AgentEvent);
      break;
    case 'attempt_failed': {
      const item = running(model, line.iteration);
      if (item) item.attempts = Number(line.attempt) + 1;
      push(model, at, 'warning', `attempt ${line.attempt} failed (${line.kind}): ${line.reason}`, line.iteration);
      break;
    }
    case 'backoff':
      push(model, at, 'warning', `backing off ${Math.round(Number(line.delayMs) / 1000)}s before attempt ${Number(line.attempt) + 1}`, line.iteration);
      break;
    case 'usage_wait':
      push(model, at, 'warning', `usage limit: waiting until ${new Date(Number(line.until)).toISOString()}: ${line.reason}`, line.iteration);
      break;
    case 'gates': {
      const results = (line.results ?? []) as Array<{ name: string; passed: boolean }>;
      push(model, at, 'info', `gates: ${results.map((gate) => `${gate.name} ${gate.passed ? 'passed' : 'FAILED'}`).join(', ') || 'none'}`, line.iteration);
      break;
    }
    case 'iteration_end': {
      const record = line.record as IterationRecord;
      const item = running(model, record.iteration) ?? model.timeline.find((entry) => entry.iteration === record.iteration);
      const ended: TimelineItem = { iteration: record.iteration, ofRun: item?.ofRun ?? null, taskId: record.taskId, taskTitle: record.taskTitle, startedAt: record.startedAt, durationMs: record.durationMs, outcome: record.outcome, reason: record.reason, attempts: record.attempts, costUsd: record.costUsd, inputTokens: record.inputTokens, outputTokens: record.outputTokens, commit: record.commit ?? null, worker: item?.worker ?? (record.worker === undefined ? worker : String(record.worker)) };
      if (item) Object.assign(item, ended);
      else model.timeline.push(ended);
      push(model, at, record.outcome === 'fail' ? 'error' : 'iteration', `iteration ${record.iteration} ${record.taskId}: ${record.outcome.replace('_', ' ')}${record.outcome === 'pass' ? '' : ` (${record.reason})`}`, record.iteration);
      break;
    }
    case 'control':
      push(model, at, 'steer', line.request === 'unpause' ? 'pause lifted' : `${line.request} requested by ${line.by}`);
      break;
    case 'paused':
      push(model, at, 'steer', 'paused: no new iteration starts');
      break;
    case 'resumed':
      push(model, at, 'steer', 'resumed');
      break;
    case 'info':
      push(model, at, 'info', String(line.message));
      break;
    case 'warning':
      push(model, at, 'warning', String(line.message));
      break;
    case 'session_end': {
      const summary = line.summary as RunSummary;
      model.end = { status: summary.status, exitCode: summary.exitCode, message: summary.message, endedAt: at, tasksRemaining: summary.tasksRemaining, remote: summary.remote ?? null, landed: summary.remote ? (summary.records ?? []).flatMap((record) => record.tasksDone) : [] };
      for (const item of model.timeline) {
        if (item.outcome !== 'running') continue;
        item.outcome = 'interrupted';
        item.durationMs = Date.parse(at) - Date.parse(item.startedAt);
      }
      break;
    }
  }
  return model;
}

function remoteOf(value: unknown): { name: string; branch: string; host: string } | null {
  const remote = value as { name?: unknown; branch?: unknown; host?: unknown } | undefined;
  return remote && typeof remote.name === 'string' && typeof remote.branch === 'string' ? { name: remote.name, branch: remote.branch, host: String(remote.host ?? '') } : null;
}

/** Parses one line of events.jsonl; undefined for a torn or foreign line. */
export function parseLine(text: string): Line | undefined {
  try {
    const data = JSON.parse(text) as unknown;
    if (typeof data !== 'object' || data === null) return undefined;
    const line = data as Line;
    return typeof line.type === 'string' && typeof line.at === 'string' ? line : undefined;
  } catch {
    return undefined;
  }
}
