// The state files a replayed landing and the remote both changed (lib/landing/merge-state.ts): a task list
// both ticked, a JSON record both wrote; what does not merge is refused, never guessed.
import { describe, expect, it } from 'vitest';
import { entryNumbers, mergeRecord, mergeTicks, renumberEntries } from '../../../lib/landing/merge-state.ts';
import { mergeStateFile } from '../../../lib/landing/unpushed.ts';

const list = (a: string, b: string, c = ' '): string => `# Tasks\n\n- [${a}] T002 [P] Part two\n- [${b}] T003 [P] Part three\n- [${c}] T004 Part four\n`;

describe('mergeTicks: a task list both sides ticked', () => {
  it.each([
    ['adjacent ticks, one each', list(' ', ' '), list(' ', 'X'), list('X', ' '), list('X', 'X')],
    ['both ticked the same box', list(' ', ' '), list('X', ' '), list('X', ' '), list('X', ' ')],
    ['one side unticked a box (a rejection), the other ticked another', list('X', ' '), list(' ', ' '), list('X', 'X'), list(' ', 'X')],
    ['no base (both added the file): the ticked box of each', undefined, list(' ', 'X'), list('X', ' '), list('X', 'X')],
    ['a line both changed beyond its box', list(' ', ' '), list(' ', ' ').replace('Part two', 'Part 2'), list('X', ' '), undefined],
    ['a line added on one side', list(' ', ' '), `${list(' ', 'X')}- [ ] T005 New\n`, list('X', ' '), undefined],
  ])('%s', (_what, base, ours, theirs, expected) => {
    expect(mergeTicks(base, ours, theirs)).toBe(expected);
  });
});

const tracking = (over: { updatedAt: string; last: number; t2: object; t3: object }): string =>
  `${JSON.stringify({ version: 1, updatedAt: over.updatedAt, lastIteration: over.last, tasks: [{ id: 'T002', status: 'open', attempts: 0, ...over.t2 }, { id: 'T003', status: 'open', attempts: 0, ...over.t3 }] }, null, 2)}\n`;

describe('mergeRecord: a JSON record both sides wrote', () => {
  const remote = tracking({ updatedAt: '2026-01-01T00:00:05.000Z', last: 1, t2: {}, t3: { status: 'done', attempts: 1, lastOutcome: 'pass' } });
  const mine = tracking({ updatedAt: '2026-01-01T00:00:03.000Z', last: 2, t2: { status: 'done', attempts: 1, lastOutcome: 'pass' }, t3: {} });
  const both = tracking({ updatedAt: '2026-01-01T00:00:05.000Z', last: 2, t2: { status: 'done', attempts: 1, lastOutcome: 'pass' }, t3: { status: 'done', attempts: 1, lastOutcome: 'pass' } });

  it('each side\'s task as that side left it; the later time, the larger number; the remote\'s indent', () => {
    expect(mergeRecord(undefined, remote, mine, 'T002')).toBe(both);
    const base = tracking({ updatedAt: '2026-01-01T00:00:00.000Z', last: 0, t2: {}, t3: {} });
    expect(mergeRecord(base, remote, mine, 'T002')).toBe(both);
  });

  it('a change of one side only is taken; an item only one side has is kept', () => {
    expect(JSON.parse(mergeRecord('{"a":1,"b":1}', '{"a":1,"b":2}', '{"a":3,"b":1}', 'x')!)).toEqual({ a: 3, b: 2 });
    expect(JSON.parse(mergeRecord(undefined, '[{"id":"A"}]', '[{"id":"A"},{"id":"B"}]', 'x')!)).toEqual([{ id: 'A' }, { id: 'B' }]);
  });

  it.each([
    ['two different words for one value', '{"a":"x"}', '{"a":"y"}', '{"a":"z"}'],
    ['removed on one side, changed on the other', '{"a":1,"b":1}', '{"a":1}', '{"a":1,"b":2}'],
    ['a list without ids both changed', '{"a":[1]}', '{"a":[1,2]}', '{"a":[1,3]}'],
    ['not JSON', '{"a":1}', '{"a":2', '{"a":3}'],
  ])('refused: %s', (_what, base, ours, theirs) => {
    expect(mergeRecord(base, ours, theirs, 'x')).toBeUndefined();
  });
});

describe('mergeStateFile: which rule a state file takes', () => {
  it('two records both began are merged as records, never appended one to the other', () => {
    expect(mergeStateFile(undefined, '{\n  "a": 1\n}\n', '{\n  "b": 2\n}\n', 'x')).toBe('{\n  "a": 1,\n  "b": 2\n}\n');
  });

  it('a log whose lines begin with a bracket is a log, not a record', () => {
    expect(mergeStateFile('[12:00] start\n', '[12:00] start\n[12:01] A\n', '[12:00] start\n[12:02] B\n', 'x')).toBe('[12:00] start\n[12:01] A\n[12:02] B\n');
  });

  it('a task list by its boxes, a log by what both appended', () => {
    expect(mergeStateFile(list(' ', ' '), list(' ', 'X'), list('X', ' '), 'T002')).toBe(list('X', 'X'));
    expect(mergeStateFile('# log\n', '# log\nA\n', '# log\nB\n', 'x')).toBe('# log\nA\nB\n');
  });
});

describe('renumberEntries: this host\'s log entries of an iteration the other hosts numbered too', () => {
  it.each([
    ['Spec Kit', '## Iteration 1 - 2026-01-01 10:00:00\n- Task: T002 x\n', '## Iteration 4 - 2026-01-01 10:00:00\n- Task: T002 x\n'],
    ['PRD', '## 2026-01-01 10:00 - US-001 - iteration 1: passed\n', '## 2026-01-01 10:00 - US-001 - iteration 4: passed\n'],
    ['another iteration, and a line that only mentions it', '## Iteration 12 - t\n- Note: Iteration 1 - was here\n', '## Iteration 12 - t\n- Note: Iteration 1 - was here\n'],
  ])('%s', (_what, appended, expected) => {
    expect(renumberEntries(appended, { from: 1, to: 4 })).toBe(expected);
  });

  it('entryNumbers reads both headings', () => {
    expect(entryNumbers('## Iteration 3 - t\n## 2026-01-01 10:00 - US-002 - iteration 5: failed\n## Session x\n')).toEqual([3, 5]);
  });
});

describe('mergeRecord: a summary that counts the list\'s statuses is counted again', () => {
  it('each side counted only its own task done', () => {
    const record = (done: string[]) => JSON.stringify({ summary: { total: 3, done: done.length, open: 3 - done.length, skipped: 0 }, tasks: ['T1', 'T2', 'T3'].map((id) => ({ id, status: done.includes(id) ? 'done' : 'open' })) });
    const base = record([]);
    expect(JSON.parse(mergeRecord(base, record(['T2']), record(['T1']), 'T1')!).summary).toEqual({ total: 3, done: 2, open: 1, skipped: 0 });
  });
});
