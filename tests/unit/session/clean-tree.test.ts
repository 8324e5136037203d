import { describe, expect, it } from 'vitest';
import { sortLeft, uncommittedNote } from '../../../lib/session/clean-tree.ts';

describe('uncommittedNote: what a run says at its end about its own uncommitted paths', () => {
  it.each([
    ['nothing left', { work: [], leftOut: [] }, 'ralph' as const, undefined],
    ['nothing left, --no-commit', { work: [], leftOut: [] }, 'off' as const, undefined],
    ['--no-commit: everything the run changed', { work: ['src/b.ts', 'specs/f/tasks.md'], leftOut: [] }, 'off' as const, '--no-commit: what this run changed stays uncommitted (2 paths: specs/f/tasks.md, src/b.ts); commit it yourself'],
    ['a task that did not pass (ralph commits)', { work: ['app.txt'], leftOut: [] }, 'ralph' as const, "the work of tasks that did not pass stays uncommitted (1 path: app.txt); ralph commits a task's work once it passes"],
    ['a task that did not pass (the agent commits)', { work: ['app.txt'], leftOut: [] }, 'agent' as const, "the work of tasks that did not pass stays uncommitted (1 path: app.txt); ralph commits a task's work once it passes"],
    ['the task source\'s own files written after ralph\'s last commit (bd as the run ends)', { work: [], sourceFiles: ['.beads/issues.jsonl'], leftOut: [] }, 'agent' as const, "the task source's own files changed after ralph's last commit (.beads/issues.jsonl): commit them with your next change"],
    ['a file ralph never commits', { work: [], leftOut: [{ path: 'config.local.json', why: { kind: 'secret' as const, names: ['API_KEY'] } }] }, 'ralph' as const, 'never committed by ralph: config.local.json (holds the value of API_KEY)'],
  ])('%s', (_what, left, mode, expected) => {
    expect(uncommittedNote(left, mode)).toBe(expected === undefined ? undefined : `left uncommitted: ${expected}`);
  });

  it('names at most 8 paths', () => {
    const work = Array.from({ length: 10 }, (_, index) => `f${index}.ts`);
    expect(uncommittedNote({ work, leftOut: [] }, 'off')).toBe('left uncommitted: --no-commit: what this run changed stays uncommitted (10 paths: f0.ts, f1.ts, f2.ts, f3.ts, f4.ts, f5.ts, f6.ts, f7.ts and 2 more); commit it yourself');
  });
});

describe('sortLeft: the task source\'s own files apart from the work', () => {
  it.each([
    ['beads: bd\'s files apart', ['.beads/issues.jsonl', 'src/a.ts'], 'agent' as const, { work: ['src/a.ts'], sourceFiles: ['.beads/issues.jsonl'], leftOut: [] }],
    ['--no-commit: all of it is the run\'s work', ['.beads/issues.jsonl', 'src/a.ts'], 'off' as const, { work: ['.beads/issues.jsonl', 'src/a.ts'], sourceFiles: [], leftOut: [] }],
  ])('%s', (_what, paths, mode, expected) => {
    expect(sortLeft(paths, [], ['.beads/'], mode)).toEqual(expected);
  });
});
