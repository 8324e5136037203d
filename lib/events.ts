import type { AgentEvent } from './agents/types.ts';
import type { Task } from './sources/types.ts';

export type IterationOutcome = 'pass' | 'fail' | 'no_change';

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
  tasksRemaining: number;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  costUsd: number;
  records: IterationRecord[];
  /** PRD-style fields, in every mode: exitCode 0, tasks finished, iterations that failed. */
  success?: boolean;
  completedCount?: number;
  failedCount?: number;
}

/** The typed event stream of a run: the view, events.jsonl and status.json all read it. */
export type RunEvent =
  | { type: 'session_start'; sessionId: string; source: string; target: string; agent: string; maxIterations: number; branch?: string; pid: number; logDir: string }
  | { type: 'info'; message: string }
  | { type: 'warning'; message: string }
  | { type: 'iteration_start'; iteration: number; maxIterations: number; task: Task; worker?: number }
  | { type: 'agent'; iteration: number; event: AgentEvent }
  | { type: 'attempt_failed'; iteration: number; attempt: number; kind: string; reason: string }
  | { type: 'backoff'; iteration: number; attempt: number; delayMs: number; until: number; reason: string }
  | { type: 'usage_wait'; iteration: number; until: number; reason: string }
  | { type: 'gates'; iteration: number; results: Array<{ name: string; passed: boolean; durationMs: number }> }
  | { type: 'iteration_end'; record: IterationRecord }
  | { type: 'session_end'; summary: RunSummary };

export interface EventSink {
  emit(event: RunEvent, at: number): void;
  /** Flushes and closes; called once at the end. */
  close?(): Promise<void> | void;
}

/** Fans one event out to every sink; a failing sink never stops the run. */
export class EventBus {
  private readonly sinks: EventSink[] = [];
  constructor(private readonly now: () => number) {}

  add(sink: EventSink): void {
    this.sinks.push(sink);
  }

  emit(event: RunEvent): void {
    const at = this.now();
    for (const sink of this.sinks) {
      try {
        sink.emit(event, at);
      } catch {
        // a broken display or log must not end an overnight run
      }
    }
  }

  async close(): Promise<void> {
    for (const sink of this.sinks) await Promise.resolve(sink.close?.()).catch(() => undefined);
  }
}
