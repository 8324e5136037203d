import { describe, expect, it } from 'vitest';
import { renderSummaryBlock, SUMMARY_BEGIN, SUMMARY_END, withSummaryBlock } from '../../../lib/pr/body.ts';
import type { IterationRecord, RunSummary } from '../../../lib/events.ts';

const record = (iteration: number, extra: Partial<IterationRecord> = {}): IterationRecord => ({
  iteration,
  taskId: `T00${iteration}`,
  taskTitle: `Task ${iteration}`,
  outcome: 'pass',
  reason: '',
  attempts: 1,
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 1500,
  tasksDone: [`T00${iteration}`],
  filesChanged: ['a.ts'],
  claimedComplete: false,
  costUsd: 0.01,
  inputTokens: 10,
  outputTokens: 5,
  commit: 'abcdef1234567890',
  ...extra,
});

const summary = (extra: Partial<RunSummary> = {}): RunSummary => ({
  status: 'limit_reached',
  exitCode: 2,
  message: 'iteration limit of 2 reached with 1 task left',
  sessionId: 'S1',
  source: 'speckit',
  agent: 'claude',
  iterations: 2,
  tasksCompleted: 1,
  tasksRemaining: 1,
  tasksSkipped: 1,
  skippedTaskIds: ['T009'],
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:01:00.000Z',
  durationMs: 60_000,
  costUsd: 0.02,
  records: [record(1), record(2, { outcome: 'fail', reason: 'gate | lint failed', tasksDone: [], commit: undefined })],
  ...extra,
});

describe('the pull request body', () => {
  it('holds the status, tasks done, left and skipped, cost and the iterations table, between its markers', () => {
    const block = renderSummaryBlock(summary(), { branch: '001-demo', target: 'origin/001-demo' });
    const lines = block.split('\n');
    expect(lines[0]).toBe(SUMMARY_BEGIN);
    expect(lines.at(-1)).toBe(SUMMARY_END);
    expect(lines[1]).toBe('### ralph on `001-demo`: stopped at a limit, work left');
    expect(block).toContain('| **status** | limit_reached: iteration limit of 2 reached with 1 task left (exit 2) |');
    expect(block).toContain('| **tasks** | 1 done in this run, 1 left |');
    expect(block).toContain('| **skipped** | 1 (T009) |');
    expect(block).toContain('| **iterations** | 2 (1 passed) |');
    expect(block).toContain('| **cost** | $0.0200 |');
    expect(block).toContain('| 1 | T001 Task 1 | pass | 1.5s | $0.0100 | 1: a.ts | abcdef1 |');
    // A pipe in a reason does not break the table.
    expect(block).toContain('| 2 | T002 Task 2 | fail: gate \\| lint failed | 1.5s | $0.0100 | 1: a.ts | — |');
  });

  it('says complete only when the pushed branch holds the run\'s work; otherwise which paths it lacks', () => {
    const done = summary({ status: 'completed', exitCode: 0, message: 'all tasks are complete', tasksRemaining: 0, skippedTaskIds: [] });
    expect(renderSummaryBlock(done, { branch: '001-demo', target: 'origin/001-demo' }).split('\n')[1]).toBe('### ralph on `001-demo`: complete');
    expect(renderSummaryBlock(done, { branch: '001-demo', target: 'origin/001-demo', notOnRemote: [] }).split('\n')[1]).toBe('### ralph on `001-demo`: complete');
    const missing = renderSummaryBlock(done, { branch: '001-demo', target: 'origin/001-demo', notOnRemote: ['specs/001-demo/tasks.md', 'src/a.ts'] });
    expect(missing.split('\n')[1]).toBe('### ralph on `001-demo`: done in the working tree, not on origin/001-demo');
    expect(missing).toContain('| **status** | completed: all tasks are complete (exit 0); in the working tree only, not on origin/001-demo |');
    expect(missing).toContain('| **not on the remote** | 2 paths left uncommitted by the run, so this branch lacks them: specs/001-demo/tasks.md, src/a.ts |');
    // A run that did not finish says both.
    expect(renderSummaryBlock(summary(), { branch: '001-demo', target: 'origin/001-demo', notOnRemote: ['a.ts'] }).split('\n')[1]).toBe('### ralph on `001-demo`: stopped at a limit, work left; not all on origin/001-demo');
  });

  it('replaces its own block and keeps what someone wrote around it; adds one below text it did not write', () => {
    const old = `${SUMMARY_BEGIN}\nold summary\n${SUMMARY_END}`;
    expect(withSummaryBlock(`Notes above.\n\n${old}\n\nNotes below.\n`, 'NEW')).toBe('Notes above.\n\nNEW\n\nNotes below.\n');
    expect(withSummaryBlock('Written by hand.\n\n', 'NEW')).toBe('Written by hand.\n\nNEW\n');
    expect(withSummaryBlock('', 'NEW')).toBe('NEW\n');
    // An end marker without its beginning is someone's text, not ralph's block.
    expect(withSummaryBlock(`text ${SUMMARY_END}`, 'NEW')).toBe(`text ${SUMMARY_END}\n\nNEW\n`);
  });
});

describe('the summary block with questions and fallback agents', () => {
  it('lists the questions still open and what each agent did', () => {
    const block = renderSummaryBlock(
      summary({
        questions: [
          { taskId: 'T003', taskTitle: 'Delete users', question: 'Should the API return 404 or 410 for deleted users?', iteration: 2, askedAt: '2026-01-01T00:00:30.000Z' },
          { taskId: 'T004', taskTitle: 'Export', question: 'CSV or JSON?', iteration: 1, askedAt: '2026-01-01T00:00:10.000Z', answer: 'CSV' },
        ],
        agents: [
          { agent: 'claude:opus', iterations: 0, costUsd: 0, inputTokens: 0, outputTokens: 0, limitedUntil: null },
          { agent: 'codex', iterations: 2, costUsd: 0.02, inputTokens: 20, outputTokens: 10 },
        ],
      }),
      { branch: '001-x', target: 'origin/001-x' },
    );
    expect(block).toContain('#### Questions\n\n| task | question | answer |\n| --- | --- | --- |\n| T003 Delete users | Should the API return 404 or 410 for deleted users? | waiting: ralph answer T003 "…" |\n| T004 Export | CSV or JSON? | CSV |');
    expect(block).toContain('#### Agents\n\n| agent | iterations | cost | tokens in | tokens out | limited at the end |');
    expect(block).toMatch(/\| claude:opus \| 0 \| [^|]+ \| 0 \| 0 \| for the rest of the run \|/);
  });
});
