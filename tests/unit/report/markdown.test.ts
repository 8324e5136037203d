import { describe, expect, it } from 'vitest';
import { escapeCell, renderMarkdownReport } from '../../../lib/report/markdown.ts';
import { formatCount, reportFacts } from '../../../lib/report/totals.ts';
import { record, sampleSummary } from './fixture.ts';

const rowsOf = (markdown: string): string[] => {
  const start = markdown.indexOf('## Iterations');
  return markdown.slice(start).split('\n').filter((line) => line.startsWith('| ')).slice(2);
};

/** Splits a table row on unescaped pipes. */
const cellsOf = (row: string): string[] => row.slice(2, -2).split(/(?<!\\) \| /);

describe('renderMarkdownReport', () => {
  const markdown = renderMarkdownReport(sampleSummary());

  it('starts with the session facts', () => {
    expect(markdown.split('\n')[0]).toBe('# ralph session 20260102-030000');
    expect(markdown).toContain('| **source** | beads |');
    expect(markdown).toContain('| **agent** | claude |');
    expect(markdown).toContain('| **status** | limit_reached: iteration limit 4 reached with 1 task remaining |');
    expect(markdown).toContain('| **exit code** | 2 |');
    expect(markdown).toMatch(/\| \*\*started\*\* \| 2026-01-0[12] \d\d:59:58 [+-]\d\d:\d\d \|/);
    expect(markdown).toContain('| **duration** | 3m 52s |');
  });

  it('gives the totals', () => {
    expect(markdown).toContain('| iterations | passed | failed | no change | tasks completed | tasks remaining | tasks skipped | cost | tokens in | tokens out |');
    expect(markdown).toContain('| 4 | 2 | 1 | 1 | 2 | 1 | 0 | $0.0375 | 4,000 | 800 |');
  });

  it('has one row per iteration with task, outcome, duration, cost, files and commit', () => {
    const rows = rowsOf(markdown);
    expect(rows).toHaveLength(4);
    expect(cellsOf(rows[0]!)).toEqual(['1', 'ws-9w6.2 Task 1: build part 1', 'pass', '45.0s', '$0.0125', '5: src/a.ts, src/b.ts, src/c.ts, …', '0123456']);
    expect(cellsOf(rows[1]!)).toEqual(['2', 'ws-9w6.3 Task 2: build part 2', 'fail after 2 attempts: agent still failing after 2 attempts: API Error: 529 Overloaded', '20.0s', '$0.0000', '0', '—']);
    expect(cellsOf(rows[2]!)[2]).toBe('no change: no task finished and no file changed');
  });

  it('escapes pipes and line breaks in cells so the table keeps its columns', () => {
    const row = rowsOf(markdown)[3]!;
    expect(row).toContain('Escape <b>bold</b> & "quotes" \\| pipes');
    expect(cellsOf(row)).toHaveLength(7);
    expect(escapeCell('a|b\nc\\d')).toBe('a\\|b c\\\\d');
    const odd = renderMarkdownReport(sampleSummary({ records: [record({ iteration: 1, taskTitle: 'two\nlines | and pipe', filesChanged: ['we|ird.ts'] })] }));
    const [only] = rowsOf(odd);
    expect(cellsOf(only!)).toHaveLength(7);
    expect(only).toContain('two lines \\| and pipe');
    expect(only).toContain('1: we\\|ird.ts');
  });

  it('says so when no iteration ran', () => {
    const empty = renderMarkdownReport(sampleSummary({ records: [], iterations: 0, status: 'failed', exitCode: 1 }));
    expect(empty).toContain('No iteration ran.');
    expect(empty).toContain('| 0 | 0 | 0 | 0 |');
  });
});

describe('renderMarkdownReport with reviews and skipped tasks', () => {
  const review = (verdict: 'approve' | 'reject', costUsd: number) => ({ agent: 'codex', verdict, ...(verdict === 'reject' ? { reasons: 'no tests | none' } : {}), taskIds: ['T1'], attempts: 1, exhausted: false, durationMs: 1000, costUsd, inputTokens: 10, outputTokens: 5 });
  const summary = sampleSummary({
    tasksSkipped: 2,
    skippedTaskIds: ['T002', 'T003'],
    records: [
      record({ iteration: 1, outcome: 'fail', reason: 'the reviewer (codex) rejected the work: no tests', review: review('reject', 0.01) }),
      record({ iteration: 2, review: review('approve', 0.02) }),
      record({ iteration: 3 }),
    ],
  });
  const markdown = renderMarkdownReport(summary);

  it('names the skipped tasks and sums the reviews in the totals', () => {
    expect(markdown).toContain('| tasks remaining | tasks skipped | cost | tokens in | tokens out | reviews |');
    expect(markdown).toContain('| 2 (T002, T003) |');
    expect(markdown).toContain('| 2: 1 approved, 1 not, $0.0300 |');
  });

  it('has a review column: the verdict, its reasons and its cost', () => {
    const rows = rowsOf(markdown).map(cellsOf);
    expect(rows.map((cells) => cells.at(-1))).toEqual(['rejected by codex: no tests \\| none, $0.0100', 'approved by codex, $0.0200', '—']);
  });

  it('has no review column when no review ran', () => {
    expect(renderMarkdownReport(sampleSummary())).not.toContain('| review |');
  });
});

describe('formatCount', () => {
  it('groups thousands with commas and rounds, as en-US does', () => {
    const values = [0, 7, 999, 1000, 1234.5, 65_536, 999_999, 1_000_000, 123_456_789.4, -1, -1234, -1_000_000];
    expect(values.map(formatCount)).toEqual(['0', '7', '999', '1,000', '1,235', '65,536', '999,999', '1,000,000', '123,456,789', '-1', '-1,234', '-1,000,000']);
    expect(values.map(formatCount)).toEqual(values.map((value) => Math.round(value).toLocaleString('en-US')));
  });

  it("a Questions section: this run's questions and their state, then the earlier runs' still open", () => {
    const summary = sampleSummary({
      records: [
        record({ iteration: 1, taskId: 'T002', taskTitle: 'Greet', outcome: 'question', reason: 'asked: Hello | Hi?', question: 'Hello | Hi?', tasksDone: [], filesChanged: [] }),
        record({ iteration: 2, taskId: 'T004', taskTitle: 'Part', outcome: 'question', reason: 'asked: Which part?', question: 'Which part?', tasksDone: [], filesChanged: [] }),
      ],
      questions: [
        { taskId: 'T002', taskTitle: 'Greet', question: 'Hello | Hi?', iteration: 1, askedAt: 'x' },
        { taskId: 'T009', taskTitle: 'Old', question: 'Still open?', iteration: 7, askedAt: 'y', answer: 'yes', answeredAt: 'z' },
      ],
    });
    const text = renderMarkdownReport(summary);
    expect(text).toContain('| iterations | passed | failed | no change | questions |');
    expect(text).toContain('| 1 | T002 Greet | question: Hello \\| Hi? |');
    expect(text.slice(text.indexOf('## Questions'))).toMatch(
      /^## Questions\n\n\| # \| task \| question \| answer \|\n\| --- \| --- \| --- \| --- \|\n\| 1 \| T002 Greet \| Hello \\\| Hi\? \| waiting for an answer: ralph answer T002 "…" \|\n\| 2 \| T004 Part \| Which part\? \| answered; the task was worked on since \|\n\| 7 \| T009 Old \| Still open\? \| answered: yes \(asked by an earlier run\) \|\n/,
    );
    expect(renderMarkdownReport(sampleSummary())).not.toContain('## Questions');
  });
});

describe("the project's hooks in the report", () => {
  it('names each hook pass of the run, passed or failed, with its iteration', () => {
    const hooks = [
      { name: 'before_implement speckit.git.validate (git)', outcome: 'pass' as const, iteration: 1 },
      { name: 'after_implement speckit.review.run (review)', outcome: 'fail' as const, iteration: 4 },
    ];
    expect(renderMarkdownReport(sampleSummary({ hooks }))).toContain('| **hooks** | before_implement speckit.git.validate (git) passed (iteration 1); after_implement speckit.review.run (review) failed (iteration 4) |');
    expect(reportFacts(sampleSummary()).map(([name]) => name)).not.toContain('hooks');
  });
});
