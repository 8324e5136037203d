// A scripted run as RunEvents: start, an iteration that backs off, waits for a usage reset and passes, the end.
import type { IterationRecord, RunEvent, RunSummary } from '../../../lib/events.ts';

export const T0 = Date.parse('2026-11-22T02:00:00.000Z');
export const task = { id: 'ws-9w6.2', title: 'Task 1: build part 1', status: 'open' };

export function record(extra: Partial<IterationRecord> = {}): IterationRecord {
  return {
    iteration: 1,
    taskId: task.id,
    taskTitle: task.title,
    outcome: 'pass',
    reason: 'task finished',
    attempts: 2,
    startedAt: new Date(T0 + 1000).toISOString(),
    durationMs: 60_000,
    tasksDone: [task.id],
    filesChanged: ['src/a.ts'],
    claimedComplete: false,
    costUsd: 0.25,
    inputTokens: 10,
    outputTokens: 20,
    ...extra,
  };
}

export function summary(extra: Partial<RunSummary> = {}): RunSummary {
  return {
    status: 'completed',
    exitCode: 0,
    message: 'all tasks of epic ws-9w6 are complete',
    sessionId: '20261122-020000',
    source: 'beads',
    agent: 'claude',
    iterations: 1,
    tasksCompleted: 1,
    tasksRemaining: 0,
    startedAt: new Date(T0).toISOString(),
    endedAt: new Date(T0 + 120_000).toISOString(),
    durationMs: 120_000,
    costUsd: 0.25,
    records: [record()],
    ...extra,
  };
}

export const sessionStart: Extract<RunEvent, { type: 'session_start' }> = {
  type: 'session_start',
  sessionId: '20261122-020000',
  source: 'beads',
  target: 'epic ws-9w6 "Feature: ralph-automation"',
  agent: 'claude',
  maxIterations: 50,
  branch: '001-ralph-automation',
  pid: 4242,
  logDir: '/repo/.ralph/logs/20261122-020000',
};

/** [offset ms from T0, event] */
export const script: Array<[number, RunEvent]> = [
  [0, sessionStart],
  [1000, { type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }],
  [1500, { type: 'agent', iteration: 1, event: { kind: 'init', model: 'sonnet' } }],
  [2000, { type: 'agent', iteration: 1, event: { kind: 'result', text: 'API Error: Request rejected (429)', isError: true, costUsd: 0.05 } }],
  [2100, { type: 'attempt_failed', iteration: 1, attempt: 1, kind: 'transient', reason: 'API Error: Request rejected (429)' }],
  [2100, { type: 'backoff', iteration: 1, attempt: 1, delayMs: 4000, until: T0 + 6100, reason: 'transient failure' }],
  [6200, { type: 'agent', iteration: 1, event: { kind: 'init' } }],
  [7000, { type: 'attempt_failed', iteration: 1, attempt: 2, kind: 'usage_limit', reason: 'usage limit (five_hour)' }],
  [7000, { type: 'usage_wait', iteration: 1, until: T0 + 3_600_000, reason: 'usage limit (five_hour)' }],
  [3_600_500, { type: 'agent', iteration: 1, event: { kind: 'text', text: 'working again' } }],
  [3_660_000, { type: 'iteration_end', record: record() }],
  [3_661_000, { type: 'session_end', summary: summary() }],
];
