// What a run is doing right now, folded from its events: shared by status.json, the live view and `ralph status`.
import type { RunEvent, RunStatus } from '../events.ts';
import { reviewLine } from './review-text.ts';

export type RunState = 'starting' | 'running' | 'reviewing' | 'backing_off' | 'waiting_usage_reset' | 'paused' | 'finished';

export interface RunCounts {
  iterations: number;
  passed: number;
  failed: number;
  noChange: number;
  /** Iterations whose agent stopped to ask a person. */
  questions?: number;
  tasksCompleted: number;
  /** Independent reviews (--review) that approved, and that did not (rejected or failed). */
  reviewsApproved?: number;
  reviewsRejected?: number;
}

/** What one worker is doing (several workers). */
export interface WorkerStatus {
  worker: number;
  iteration: number;
  task: { id: string; title: string };
  startedAt: string;
}

/** The contents of `.ralph/status.json`. Absent values are null so the shape never changes. */
export interface RunStatusFile {
  version: 1;
  sessionId: string;
  pid: number;
  host: string;
  branch: string | null;
  /** The task source (beads, speckit, prd). */
  mode: string;
  target: string;
  agent: string;
  state: RunState;
  iteration: number;
  maxIterations: number;
  attempt: number;
  task: { id: string; title: string } | null;
  startedAt: string;
  lastEventAt: string;
  /** When a backoff or a usage-limit wait ends. */
  waitUntil: string | null;
  waitReason: string | null;
  lastFailure: { kind: string; reason: string; at: string } | null;
  counts: RunCounts;
  costUsd: number;
  logDir: string;
  status: RunStatus | null;
  exitCode: number | null;
  message: string | null;
  endedAt: string | null;
  tasksRemaining: number | null;
  /** The workers' iterations under way, by worker (several workers); null with one. */
  workers: WorkerStatus[] | null;
  /** Skipped task ids once the run ended (open, but set aside). */
  skippedTaskIds?: string[] | null;
  /** The reviewer while a review runs (--review), e.g. `codex`. */
  reviewer?: string | null;
  /** The last review's verdict in words, e.g. `rejected by codex: no tests`. */
  lastReview?: string | null;
  /** `ralph pause` is in force since then: no new iteration starts (state `paused` once the loop holds). */
  pausedSince: string | null;
  /** `ralph stop` was asked then: the run ends after the current iteration. */
  stopRequestedAt: string | null;
  /** --fallback: the agent now working (it differs from `agent` while the primary is limited). */
  activeAgent?: string;
  /** --fallback: agents limited, and until when (ISO; null: for the rest of the run). */
  limitedAgents?: Array<{ agent: string; until: string | null; reason: string }>;
  /**
   * Questions the agents asked (`<question>` in a final answer) whose tasks wait for a person: those of this
   * run until their task is worked on again; at the end, every one still open (with the answer once given).
   */
  questions?: Array<{ taskId: string; question: string; iteration: number; answer?: string }> | null;
}

/** How much an event changed: `state` must reach disk at once, `activity` may be throttled. */
export type Change = 'none' | 'activity' | 'state';

const iso = (at: number): string => new Date(at).toISOString();

/** Folds RunEvents into a RunStatusFile; knows nothing before `session_start`. */
export class RunTracker {
  private current: RunStatusFile | undefined;
  /** Cost of the iterations already ended; the running one's cost is added from its result events. */
  private endedCostUsd = 0;

  constructor(private readonly host: string) {}

  get status(): RunStatusFile | undefined {
    return this.current;
  }

  apply(event: RunEvent, at: number): Change {
    if (event.type === 'session_start') {
      this.endedCostUsd = 0;
      this.current = {
        version: 1,
        sessionId: event.sessionId,
        pid: event.pid,
        host: this.host,
        branch: event.branch ?? null,
        mode: event.source,
        target: event.target,
        agent: event.agent,
        state: 'starting',
        iteration: 0,
        maxIterations: event.maxIterations,
        attempt: 0,
        task: null,
        startedAt: iso(at),
        lastEventAt: iso(at),
        waitUntil: null,
        waitReason: null,
        lastFailure: null,
        counts: { iterations: 0, passed: 0, failed: 0, noChange: 0, questions: 0, tasksCompleted: 0, reviewsApproved: 0, reviewsRejected: 0 },
        costUsd: 0,
        logDir: event.logDir,
        status: null,
        exitCode: null,
        message: null,
        endedAt: null,
        tasksRemaining: null,
        workers: null,
        skippedTaskIds: null,
        reviewer: null,
        lastReview: null,
        pausedSince: null,
        stopRequestedAt: null,
        questions: [],
      };
      return 'state';
    }
    const s = this.current;
    if (!s) return 'none';
    s.lastEventAt = iso(at);
    switch (event.type) {
      case 'info':
      case 'warning':
        return 'activity';
      case 'iteration_start':
        this.toRunning(s);
        s.iteration = event.iteration;
        s.maxIterations = event.maxIterations;
        s.attempt = 1;
        s.task = { id: event.task.id, title: event.task.title };
        // Taken again: its question was answered.
        if (s.questions) s.questions = s.questions.filter((item) => item.taskId !== event.task.id);
        if (event.worker !== undefined) {
          const others = (s.workers ?? []).filter((item) => item.worker !== event.worker);
          s.workers = [...others, { worker: event.worker, iteration: event.iteration, task: s.task, startedAt: iso(at) }].sort((a, b) => a.worker - b.worker);
        }
        return 'state';
      case 'agent': {
        // The first output after a backoff or a wait means the next attempt is under way (the reviewer's, during a review).
        const resumed = s.state === 'backing_off' || s.state === 'waiting_usage_reset' || s.state === 'starting';
        if (resumed) {
          this.toRunning(s);
          if (s.reviewer) s.state = 'reviewing';
        }
        if (event.event.kind === 'result' && event.event.costUsd) {
          s.costUsd += event.event.costUsd;
          return 'state';
        }
        return resumed ? 'state' : 'activity';
      }
      case 'attempt_failed':
        s.lastFailure = { kind: event.kind, reason: event.reason, at: iso(at) };
        return 'state';
      case 'backoff':
        s.state = 'backing_off';
        s.attempt = event.attempt + 1;
        s.waitUntil = iso(event.until);
        s.waitReason = event.reason;
        return 'state';
      case 'agent_switch': {
        s.activeAgent = event.to;
        const limited = (s.limitedAgents ?? []).filter((item) => item.agent !== event.from && item.agent !== event.to);
        s.limitedAgents = [...limited, { agent: event.from, until: Number.isFinite(event.until) ? iso(event.until) : null, reason: event.reason }];
        return 'state';
      }
      case 'agent_back':
        // The primary again: no fallback is working.
        delete s.activeAgent;
        s.limitedAgents = (s.limitedAgents ?? []).filter((item) => item.agent !== event.agent);
        return 'state';
      case 'usage_wait':
        s.state = 'waiting_usage_reset';
        s.waitUntil = iso(event.until);
        s.waitReason = event.reason;
        return 'state';
      case 'gates':
        this.toRunning(s);
        return 'state';
      case 'review_start':
        this.toRunning(s);
        s.state = 'reviewing';
        s.reviewer = event.agent;
        s.attempt = 1;
        return 'state';
      case 'review_end': {
        this.toRunning(s);
        s.reviewer = null;
        s.lastReview = reviewLine(event.review);
        const approved = event.review.verdict === 'approve';
        s.counts.reviewsApproved = (s.counts.reviewsApproved ?? 0) + (approved ? 1 : 0);
        s.counts.reviewsRejected = (s.counts.reviewsRejected ?? 0) + (approved ? 0 : 1);
        return 'state';
      }
      case 'iteration_end': {
        const record = event.record;
        this.toRunning(s);
        if (s.workers) {
          s.workers = s.workers.filter((item) => item.iteration !== record.iteration);
          // The task line shows what still runs, not what just ended.
          const latest = s.workers.at(-1);
          if (latest) s.task = latest.task;
        }
        s.counts.iterations += 1;
        if (record.outcome === 'pass') s.counts.passed += 1;
        else if (record.outcome === 'fail') s.counts.failed += 1;
        else if (record.outcome === 'question') {
          s.counts.questions = (s.counts.questions ?? 0) + 1;
          s.questions = [...(s.questions ?? []), { taskId: record.taskId, question: record.question ?? '', iteration: record.iteration }];
        } else s.counts.noChange += 1;
        s.counts.tasksCompleted += record.tasksDone.length;
        this.endedCostUsd += record.costUsd;
        s.costUsd = this.endedCostUsd;
        return 'state';
      }
      case 'control':
        if (event.request === 'stop') s.stopRequestedAt = iso(event.requestedAt);
        else if (event.request === 'pause') s.pausedSince = iso(event.requestedAt);
        else s.pausedSince = null;
        return 'state';
      case 'paused':
        s.state = 'paused';
        s.pausedSince = iso(event.since);
        return 'state';
      case 'resumed':
        this.toRunning(s);
        s.pausedSince = null;
        return 'state';
      case 'session_end': {
        const summary = event.summary;
        s.state = 'finished';
        s.pausedSince = null;
        s.waitUntil = null;
        s.waitReason = null;
        s.status = summary.status;
        s.exitCode = summary.exitCode;
        s.message = summary.message;
        s.endedAt = iso(at);
        s.tasksRemaining = summary.tasksRemaining;
        if (s.workers) s.workers = [];
        s.skippedTaskIds = summary.skippedTaskIds ?? [];
        if (summary.questions) s.questions = summary.questions.map((item) => ({ taskId: item.taskId, question: item.question, iteration: item.iteration, ...(item.answer === undefined ? {} : { answer: item.answer }) }));
        s.counts.iterations = Math.max(s.counts.iterations, summary.iterations);
        s.counts.tasksCompleted = Math.max(s.counts.tasksCompleted, summary.tasksCompleted);
        s.costUsd = Math.max(s.costUsd, summary.costUsd);
        return 'state';
      }
    }
  }

  private toRunning(s: RunStatusFile): void {
    s.state = 'running';
    s.waitUntil = null;
    s.waitReason = null;
  }
}
