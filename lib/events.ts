import type { AgentEvent } from './agents/types.ts';
import type { Redactor } from './redact/index.ts';
import type { Task } from './task.ts';

/** `question`: the agent stopped to ask a person (its final answer held a `<question>`); the task waits for the answer. */
export type IterationOutcome = 'pass' | 'fail' | 'no_change' | 'question';

/** approve; reject (with reasons); failed: no usable verdict; edited: the reviewer changed the repository. */
export type ReviewVerdict = 'approve' | 'reject' | 'failed' | 'edited';

/** The independent review of one iteration. */
export interface ReviewRecord {
  /** The reviewer, as given to --review (`codex`, `claude:opus`). */
  agent: string;
  verdict: ReviewVerdict;
  /** The reviewer's reasons (reject), or why the review failed. */
  reasons?: string;
  /** The tasks it judged. */
  taskIds: string[];
  attempts: number;
  /** True when every attempt failed to give a verdict: the session stops. */
  exhausted: boolean;
  durationMs: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  /** Files the reviewer changed although it must not (verdict `edited`). */
  filesChanged?: string[];
}

/** One iteration as it is reported (summary line, --json, report, history). */
export interface IterationRecord {
  iteration: number;
  taskId: string;
  taskTitle: string;
  outcome: IterationOutcome;
  reason: string;
  attempts: number;
  startedAt: string;
  durationMs: number;
  tasksDone: string[];
  filesChanged: string[];
  claimedComplete: boolean;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  commit?: string;
  gates?: Array<{ name: string; passed: boolean }>;
  /** The worker (1-based) that ran the iteration, with several workers. */
  worker?: number;
  /** A branch holding this iteration's work when it was not merged (failed, interrupted or conflicting). */
  kept?: string;
  /**
   * Whether the agent changed the repository: a file (outside the source's own task state) or HEAD.
   * The no-progress breaker reads it; absent in records written before it existed.
   */
  changed?: boolean;
  /** The independent review, when one ran; costUsd and tokens above include its share. */
  review?: ReviewRecord;
  /** Time its merge back took (several workers). */
  mergeMs?: number;
  /** Changed paths ralph's commit left out, each with why (`config.local.json (holds the value of API_KEY)`). */
  leftOut?: string[];
  /** What the agent's own commits added that ralph never commits (a secret value, a private key), with why. */
  unsafeCommits?: string[];
  /** --fallback: the agent that finished the iteration (`codex`, `claude:sonnet`). */
  agent?: string;
  /** --fallback: what each agent spent when a usage limit moved the iteration from one to another. */
  spentBy?: Record<string, { costUsd: number; inputTokens: number; outputTokens: number }>;
  /** A converge pass (`--converge`): which, its verdict and the tasks it appended. */
  converge?: { pass: number; verdict: 'appended' | 'converged' | 'silent' | 'broke'; appended?: string[] };
  /** A pass of the project's own hook (Spec Kit's before_implement / after_implement). */
  hook?: { event: string; command: string; extension?: string };
  /** What the agent asked (outcome `question`). */
  question?: string;
}

/** A question of the run's tasks as a summary shows it: still waiting, or answered and not yet worked on. */
export interface QuestionSummary {
  taskId: string;
  taskTitle: string;
  question: string;
  iteration: number;
  askedAt: string;
  answer?: string;
  answeredAt?: string;
}

export interface ConvergeSummary {
  /** Passes of the cycle, those a cut-short earlier run made (`resumed`) included. */
  passes: number;
  resumed: number;
  maxPasses: number;
  /** Per pass of this run: the tasks it appended (empty when it found none). */
  appended: string[][];
  converged: boolean;
}

/** `--pr`: where ralph pushed the branch, and the pull request it opened or updated (or why none). */
export interface PullRequestRecord {
  /** Where the branch goes: `origin/001-demo`. */
  target: string;
  /** The branch's last commit is on the remote at the end of the run. */
  pushed: boolean;
  /** What is not pushed and why (`2 commits (a1b2c3d..e4f5a6b): origin has commits this branch lacks`). */
  notPushed?: string;
  number?: number;
  url?: string;
  /** `unchanged`: a run with no iteration leaves the summary of the run that did the work. */
  action?: 'created' | 'updated' | 'unchanged';
  draft?: boolean;
  /** Why no pull request was opened or updated. */
  none?: string;
}

export type RunStatus = 'completed' | 'limit_reached' | 'failed' | 'interrupted';

export interface RunSummary {
  status: RunStatus;
  exitCode: number;
  message: string;
  sessionId: string;
  source: string;
  agent: string;
  iterations: number;
  tasksCompleted: number;
  /** Tasks still to do, not counting skipped ones. */
  tasksRemaining: number;
  /** Tasks the source set aside (e.g. after repeated failures): open, but not worked on. */
  tasksSkipped?: number;
  skippedTaskIds?: string[];
  startedAt: string;
  endedAt: string;
  durationMs: number;
  costUsd: number;
  records: IterationRecord[];
  /** PRD-style fields, in every mode: exitCode 0, tasks finished, iterations that failed. */
  success?: boolean;
  completedCount?: number;
  failedCount?: number;
  /** Each check that kept the run from starting, in full (a run that could not start). */
  problems?: string[];
  /** Converge passes of this run (`--converge`): how many, what each appended, whether the last converged. */
  converge?: ConvergeSummary;
  /** The project's hooks this run passed or failed (`after_implement speckit.review.run (review)`), in order. */
  hooks?: Array<{ name: string; outcome: 'pass' | 'fail'; iteration: number }>;
  /** --fallback: per agent, the iterations it finished, what it spent and whether it is limited at the end. */
  agents?: Array<{ agent: string; iterations: number; costUsd: number; inputTokens: number; outputTokens: number; limitedUntil?: string | null }>;
  /** `--pr`: the push and the pull request. */
  pr?: PullRequestRecord;
  /** --remote: the remote and branch every host shared, this host, and who landed what during this run. */
  remote?: RemoteSummary;
  /** The questions of the source's tasks as the run ends: waiting for an answer, or answered and not yet worked on. */
  questions?: QuestionSummary[];
}

export interface RemoteSummary {
  name: string;
  branch: string;
  host: string;
  /** Tasks this host landed, and tasks the other hosts landed while this run went on. */
  landedHere: number;
  landedElsewhere: number;
}

/** The typed event stream of a run: the view, events.jsonl and status.json all read it. */
export type RunEvent =
  /** `remote`: --remote's remote, shared branch and this host (`ralph serve` shows the claims there). */
  | { type: 'session_start'; sessionId: string; source: string; target: string; agent: string; maxIterations: number; branch?: string; pid: number; logDir: string; remote?: { name: string; branch: string; host: string } }
  | { type: 'info'; message: string }
  | { type: 'warning'; message: string }
  | { type: 'iteration_start'; iteration: number; maxIterations: number; task: Task; worker?: number }
  | { type: 'agent'; iteration: number; event: AgentEvent }
  | { type: 'attempt_failed'; iteration: number; attempt: number; kind: string; reason: string }
  | { type: 'backoff'; iteration: number; attempt: number; delayMs: number; until: number; reason: string }
  | { type: 'usage_wait'; iteration: number; until: number; reason: string }
  /** --fallback: `from` hit a usage limit (until `until`; Infinity: for the run) and `to` goes on with the iteration. */
  | { type: 'agent_switch'; iteration: number; from: string; to: string; until: number; reason: string }
  /** --fallback: the primary's limit has reset and it works again, from this iteration on. */
  | { type: 'agent_back'; iteration: number; agent: string }
  | { type: 'gates'; iteration: number; results: Array<{ name: string; passed: boolean; durationMs: number }> }
  | { type: 'review_start'; iteration: number; agent: string; taskIds: string[] }
  | { type: 'review_end'; iteration: number; review: ReviewRecord }
  | { type: 'iteration_end'; record: IterationRecord }
  /** A stop, pause or unpause request from another terminal (lib/control), seen by the run. */
  | { type: 'control'; request: 'stop' | 'pause' | 'unpause'; requestedAt: number; by: string }
  /** The loop holds before starting an agent: paused since `since`. */
  | { type: 'paused'; since: number }
  | { type: 'resumed'; pausedMs: number }
  | { type: 'session_end'; summary: RunSummary };

export interface EventSink {
  emit(event: RunEvent, at: number): void;
  /** Flushes and closes; called once at the end. */
  close?(): Promise<void> | void;
  /** The run's state on disk (status.json, events.jsonl): when it cannot be written, the run must end. */
  readonly essential?: boolean;
}

/**
 * Fans one event out to every sink; a failing sink never stops the run. Each event is redacted once,
 * before any sink sees it. Agent events are the exception: they are parsed from output the runner has
 * already redacted, and they are the flood (a second pass over every byte would halve throughput).
 */
export class EventBus {
  private readonly sinks: EventSink[] = [];
  /** Told when an essential sink fails (a full disk): the run decides to end; a display's failure is ignored. */
  onEssentialError?: (error: unknown) => void;

  constructor(
    private readonly now: () => number,
    private readonly redactor?: () => Redactor,
  ) {}

  add(sink: EventSink): void {
    this.sinks.push(sink);
  }

  emit(event: RunEvent): void {
    const at = this.now();
    const clean = this.redactor && event.type !== 'agent' ? this.redactor().deep(event) : event;
    for (const sink of this.sinks) {
      try {
        sink.emit(clean, at);
      } catch (error) {
        // A broken display must not end an overnight run; the run's own state that cannot be written must.
        if (sink.essential) this.onEssentialError?.(error);
      }
    }
  }

  /** Closes the sinks last-added first, so what a late sink says while closing still reaches the earlier ones. */
  async close(): Promise<void> {
    for (const sink of [...this.sinks].reverse()) {
      try {
        await sink.close?.();
      } catch {
        // the run is ending: what could not be written is said by the sink's own fallback
      }
    }
  }
}
