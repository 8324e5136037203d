import type { IterationRecord, RunSummary } from '../../../lib/events.ts';

export function record(overrides: Partial<IterationRecord> & Pick<IterationRecord, 'iteration'>): IterationRecord {
  return {
    taskId: `ws-9w6.${overrides.iteration + 1}`,
    taskTitle: `Task ${overrides.iteration}: build part ${overrides.iteration}`,
    outcome: 'pass',
    reason: 'task finished',
    attempts: 1,
    startedAt: new Date(Date.UTC(2026, 0, 2, 3, 0, 0) + (overrides.iteration - 1) * 60_000).toISOString(),
    durationMs: 45_000,
    tasksDone: [],
    filesChanged: ['src/a.ts'],
    claimedComplete: true,
    costUsd: 0.0125,
    inputTokens: 1000,
    outputTokens: 200,
    ...overrides,
  };
}

/** A 4-iteration session: pass, fail (after a retry), no change, pass. */
export function sampleSummary(overrides: Partial<RunSummary> = {}): RunSummary {
  const records = [
    record({ iteration: 1, tasksDone: ['ws-9w6.2'], commit: '0123456789abcdef0123456789abcdef01234567', filesChanged: ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts', 'src/e.ts'] }),
    record({ iteration: 2, outcome: 'fail', reason: 'agent still failing after 2 attempts: API Error: 529 Overloaded', attempts: 2, durationMs: 20_000, filesChanged: [], costUsd: 0 }),
    record({ iteration: 3, outcome: 'no_change', reason: 'no task finished and no file changed', filesChanged: [] }),
    record({ iteration: 4, taskTitle: 'Escape <b>bold</b> & "quotes" | pipes', tasksDone: ['ws-9w6.5'] }),
  ];
  return {
    status: 'limit_reached',
    exitCode: 2,
    message: 'iteration limit 4 reached with 1 task remaining',
    sessionId: '20260102-030000',
    source: 'beads',
    agent: 'claude',
    iterations: records.length,
    tasksCompleted: 2,
    tasksRemaining: 1,
    startedAt: '2026-01-02T02:59:58.000Z',
    endedAt: '2026-01-02T03:03:50.000Z',
    durationMs: 232_000,
    costUsd: 0.0375,
    records,
    ...overrides,
  };
}
