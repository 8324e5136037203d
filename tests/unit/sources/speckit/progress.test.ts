import { describe, it, expect } from 'vitest';
import { extractLearnings } from '../../../../lib/sources/speckit/learnings.ts';
import { parseTasksMd } from '../../../../lib/sources/speckit/parse.ts';
import {
  emptyTracking,
  iterationEntry,
  lastIterationNumber,
  parseTracking,
  progressHeader,
  recordIteration,
  releaseSkipped,
  sessionHeader,
  syncTracking,
  type Tracking,
} from '../../../../lib/sources/speckit/progress.ts';

describe('progress.txt format', () => {
  it('starts with a header and the Codebase Patterns section', () => {
    expect(progressHeader({ feature: '001-user-auth', tasksPath: 'specs/001-user-auth/tasks.md', started: '2026-01-18 10:15:00' })).toBe(
      [
        '# Ralph Progress Log',
        'Feature: 001-user-auth',
        'Tasks: specs/001-user-auth/tasks.md',
        'Started: 2026-01-18 10:15:00',
        '',
        '## Codebase Patterns',
        '<!-- Reusable patterns for this codebase, most useful first. Agents read this section before anything else. -->',
        '',
        '---',
        '',
      ].join('\n'),
    );
  });

  it('marks each run with a session header', () => {
    expect(sessionHeader({ sessionId: 'abc', started: '2026-01-18 10:15:00', firstIteration: 4 })).toBe('## Session 2026-01-18 10:15:00 (run abc)\nStarting at iteration 4.\n\n---\n');
  });

  it('writes a completed iteration entry', () => {
    const entry = iterationEntry({
      iteration: 3,
      timestamp: '2026-01-18 10:20:00',
      task: { id: 'T005', title: 'Implement password hashing helpers in src/lib/hash.ts' },
      status: 'completed',
      reason: 'completed T005',
      tasksDone: ['T005', 'T006'],
      filesChanged: ['src/lib/hash.ts', 'specs/001-user-auth/tasks.md'],
      learnings: '- bcrypt needs a native build; use @node-rs/bcrypt\n\n- tests live beside the code',
      commit: 'abc1234',
      duration: '3m 05s',
    });
    expect(entry).toBe(
      [
        '## Iteration 3 - 2026-01-18 10:20:00',
        '- Task: T005 Implement password hashing helpers in src/lib/hash.ts',
        '- Status: ✅ Completed',
        '- Tasks completed: T005, T006',
        '- Files changed:',
        '  - src/lib/hash.ts',
        '  - specs/001-user-auth/tasks.md',
        '- Commit: abc1234',
        '- Duration: 3m 05s',
        '- Learnings:',
        '  - bcrypt needs a native build; use @node-rs/bcrypt',
        '',
        '  - tests live beside the code',
        '',
        '---',
        '',
      ].join('\n'),
    );
  });

  it('writes failed and skipped entries with their reason', () => {
    const failed = iterationEntry({ iteration: 1, timestamp: 't', task: { id: 'T001', title: 'x' }, status: 'failed', reason: 'timed out', tasksDone: [], filesChanged: [], note: 'premature promise' });
    expect(failed).toBe(
      ['## Iteration 1 - t', '- Task: T001 x', '- Status: ❌ Failed', '- Reason: timed out', '- Tasks completed: none', '- Files changed: none', '- Note: premature promise', '- Learnings: none reported', '', '---', ''].join('\n'),
    );
    const skipped = iterationEntry({ iteration: 2, timestamp: 't', task: { id: 'T001', title: 'x' }, status: 'skipped', reason: 'failed 3 in a row', tasksDone: [], filesChanged: [] });
    expect(skipped).toContain('- Status: ⏭️ Skipped\n- Reason: failed 3 in a row\n');
  });

  it('finds the last iteration number, ignoring indented and agent-quoted lines', () => {
    const text = ['# Ralph Progress Log', '## Iteration 2 - a', '## Iteration 11 - b', '  ## Iteration 99 - quoted', '### Iteration 50', '## Iteration 7 - c'].join('\r\n');
    expect(lastIterationNumber(text)).toBe(11);
    expect(lastIterationNumber('')).toBe(0);
  });
});

describe('extractLearnings', () => {
  it.each([
    ['a markdown heading', 'Did T005.\n\n## Learnings\n- hash rounds are set in config\n- run npm test -- --run\n\n## Next\nT006', '- hash rounds are set in config\n- run npm test -- --run'],
    ['a bold label', 'Done.\n\n**Learnings:**\n- use zod for input\n\n<promise>COMPLETE</promise>', '- use zod for input'],
    ['a plain label with inline text', 'Tasks: T001\nLearnings: the repo uses pnpm, not npm\nChecks: pass', 'the repo uses pnpm, not npm\nChecks: pass'],
    ['"What I learned"', '### What I learned\nThe router is in src/app.ts.\n### Checks\nok', 'The router is in src/app.ts.'],
    ['a list item label', '- **Key learnings**: migrations run on boot\n- **Checks**: lint ok', 'migrations run on boot'],
    ['a label followed by a paragraph after a blank line', '**Learnings**\n- a\n\nAll done for this story.', '- a'],
  ])('reads %s', (_, text, expected) => {
    expect(extractLearnings(text)).toBe(expected);
  });

  it('keeps fenced code inside the section and hides the completion token', () => {
    const text = '## Learnings\n```\n## not a heading\n```\nsee <promise>COMPLETE</promise> docs\n';
    expect(extractLearnings(text)).toBe('```\n## not a heading\n```\nsee [completion token] docs');
  });

  it('is undefined when there is no such section', () => {
    expect(extractLearnings('I implemented T001 and the tests pass.')).toBeUndefined();
    expect(extractLearnings('## Learnings\n\n## Next')).toBeUndefined();
  });
});

describe('tracking', () => {
  const parsed = parseTasksMd('## Phase 1: Setup\n- [x] T001 a\n- [ ] T002 b\n## Phase 2: User Story 1 - S (Priority: P1)\n- [ ] T003 [US1] c\n');
  const start = (): Tracking => syncTracking(emptyTracking('001-x', 'specs/001-x/tasks.md', 'now'), parsed, 'now');

  it('mirrors every task with its status', () => {
    const data = start();
    expect(data.summary).toEqual({ total: 3, done: 1, open: 2, skipped: 0 });
    expect(data.tasks[2]).toEqual({
      id: 'T003',
      title: 'c',
      phase: 'Phase 2: User Story 1 - S (Priority: P1)',
      story: 'US1',
      status: 'open',
      attempts: 0,
      failures: 0,
      consecutiveFailures: 0,
      skipped: false,
      lastIteration: undefined,
      lastOutcome: undefined,
    });
  });

  it('lists the lines that repeat a task under it, and counts only tasks', () => {
    const summary = parseTasksMd('## Phase 1: Setup\n- [x] T001 a\n- [ ] T002 b\n## Task Checklist Summary\n- [ ] T001 a\n- [x] T002 b\n## Summary\n- [ ] T001 a\n');
    const data = syncTracking(emptyTracking('001-x', 'specs/001-x/tasks.md', 'now'), summary, 'now');
    expect(data.summary).toEqual({ total: 2, done: 1, open: 1, skipped: 0 });
    expect(data.tasks.map((task) => [task.id, task.status, task.copies])).toEqual([
      ['T001', 'done', [5, 8]],
      ['T002', 'open', [6]],
    ]);
    expect(start().tasks.every((task) => !('copies' in task))).toBe(true);
  });

  it('skips a task after 3 failed iterations in a row (fail and no_change both count)', () => {
    let data = start();
    const kinds = ['no_change', 'fail', 'no_change'] as const;
    const skippedAt: boolean[] = [];
    kinds.forEach((kind, index) => {
      const out = recordIteration(data, { iteration: index + 1, taskId: 'T002', kind, tasksDone: [] });
      data = syncTracking(out.tracking, parsed, 'now');
      skippedAt.push(out.newlySkipped);
    });
    expect(skippedAt).toEqual([false, false, true]);
    expect(data.tasks[1]).toMatchObject({ status: 'skipped', skipped: true, failures: 3, consecutiveFailures: 3, attempts: 3, lastIteration: 3, lastOutcome: 'no_change' });
    expect(data.summary.skipped).toBe(1);
    expect(data.lastIteration).toBe(3);
  });

  it('an iteration whose agent asked a question counts for nothing: no failure, no break in a run, never a skip', () => {
    let data = start();
    const step = (taskId: string, kind: 'fail' | 'question', iteration: number) => {
      const out = recordIteration(data, { iteration, taskId, kind, tasksDone: [] });
      data = out.tracking;
      return out;
    };
    step('T002', 'fail', 1);
    step('T002', 'fail', 2);
    // Neither T002's own question nor T003's breaks T002's run, nor adds to it.
    expect(step('T002', 'question', 3)).toMatchObject({ newlySkipped: false, consecutiveFailures: 2 });
    step('T003', 'question', 4);
    expect(data.tasks[1]).toMatchObject({ failures: 2, consecutiveFailures: 2, attempts: 3, lastOutcome: 'question', lastIteration: 3, skipped: false });
    expect(data.tasks[2]).toMatchObject({ failures: 0, consecutiveFailures: 0, attempts: 1, lastOutcome: 'question' });
    expect(step('T002', 'fail', 5)).toMatchObject({ newlySkipped: true, consecutiveFailures: 3 });
    let asking = start();
    for (let iteration = 1; iteration <= 5; iteration += 1) asking = recordIteration(asking, { iteration, taskId: 'T002', kind: 'question', tasksDone: [] }).tracking;
    expect(asking.tasks[1]).toMatchObject({ failures: 0, skipped: false, attempts: 5 });
  });

  it('a passing iteration or an iteration on another task breaks the run of failures', () => {
    let data = start();
    const step = (taskId: string, kind: 'pass' | 'fail' | 'no_change', iteration: number) => {
      const out = recordIteration(data, { iteration, taskId, kind, tasksDone: kind === 'pass' ? [] : [] });
      data = out.tracking;
      return out;
    };
    step('T002', 'fail', 1);
    step('T002', 'fail', 2);
    step('T002', 'pass', 3);
    step('T002', 'fail', 4);
    step('T003', 'fail', 5);
    expect(step('T002', 'fail', 6)).toMatchObject({ newlySkipped: false, consecutiveFailures: 1 });
    expect(data.tasks[1]).toMatchObject({ failures: 4, consecutiveFailures: 1, skipped: false });
  });

  it('a tick seen between failures (a rejected attempt, unticked again) does not end the run of failures', () => {
    let data = start();
    const ticked = parseTasksMd('## Phase 1: Setup\n- [x] T001 a\n- [X] T002 b\n## Phase 2: User Story 1 - S (Priority: P1)\n- [ ] T003 [US1] c\n');
    const skippedAt: boolean[] = [];
    for (const iteration of [1, 2, 3]) {
      // The agent ticks T002, ralph reads tasks.md, the review rejects it and unticks it, the iteration fails.
      data = syncTracking(data, ticked, 'now');
      data = syncTracking(data, parsed, 'now');
      const out = recordIteration(data, { iteration, taskId: 'T002', kind: 'fail', tasksDone: [] });
      data = out.tracking;
      skippedAt.push(out.newlySkipped);
    }
    expect(skippedAt).toEqual([false, false, true]);
  });

  it('a skipped task checked off by hand becomes done', () => {
    const data = start();
    data.tasks[1]!.skipped = true;
    const after = syncTracking(data, parseTasksMd('## Phase 1: Setup\n- [x] T001 a\n- [X] T002 b\n'), 'later');
    expect(after.tasks.map((task) => [task.id, task.status, task.skipped])).toEqual([
      ['T001', 'done', false],
      ['T002', 'done', false],
    ]);
  });

  it('releaseSkipped gives set-aside tasks a fresh start', () => {
    const data = start();
    data.tasks[1] = { ...data.tasks[1]!, skipped: true, status: 'skipped', consecutiveFailures: 3, failures: 3 };
    const { tracking, released } = releaseSkipped(data);
    expect(released).toEqual(['T002']);
    expect(tracking.tasks[1]).toMatchObject({ skipped: false, status: 'open', consecutiveFailures: 0, failures: 3 });
  });

  it('round-trips through JSON and starts afresh from garbage', () => {
    const data = start();
    expect(parseTracking(JSON.stringify(data), '001-x', 'specs/001-x/tasks.md', 'now').tasks).toEqual(data.tasks);
    expect(parseTracking('{not json', 'f', 't', 'now')).toEqual(emptyTracking('f', 't', 'now'));
    expect(parseTracking('{"version":2,"tasks":[]}', 'f', 't', 'now').tasks).toEqual([]);
    expect(parseTracking(undefined, 'f', 't', 'now').lastIteration).toBe(0);
  });
});
