import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftPaths, recordLeftWork, takeLeftWork } from '../../../lib/session/left-work.ts';
import { tempDir } from '../../support/temp.ts';

describe('leftPaths', () => {
  it.each([
    ['the agent\'s new and changed files', ['src/a.ts', 'work.txt'], [], ['src/a.ts', 'work.txt']],
    ['minus the user\'s own changes from before the run', ['notes.md', 'src/a.ts'], ['notes.md'], ['src/a.ts']],
    ['minus the source\'s state files and ralph\'s own files', ['prd.json', 'progress.txt', '.rulebook-ralph/history/iteration-1.json', '.ralph/status.json', '.ralph.lock', 'src/a.ts'], [], ['src/a.ts']],
    ['nothing left', ['prd.json'], [], []],
  ])('%s', (_name, changed, user, expected) => {
    expect(leftPaths(changed, new Set(user), ['prd.json', 'progress.txt', '.rulebook-ralph/history'])).toEqual(expected);
  });
});

describe('recordLeftWork and takeLeftWork', () => {
  const file = (root: string): string => path.join(root, '.ralph', 'left-work.json');

  it('what an unfinished iteration left is ralph\'s at the next start, until a commit takes it', () => {
    const root = tempDir('ralph-left-');
    recordLeftWork(root, { taskId: 'US-001', iteration: 1, paths: [] });
    expect(existsSync(file(root))).toBe(false);
    recordLeftWork(root, { taskId: 'US-001', iteration: 1, paths: ['work-1.txt', 'src/b.ts'] });
    expect(statSync(file(root)).mode & 0o777).toBe(0o600);
    const first = takeLeftWork(root, ['work-1.txt', 'src/b.ts', 'notes.md']);
    expect([...first.paths].sort()).toEqual(['src/b.ts', 'work-1.txt']);
    expect(first.notes).toEqual(["uncommitted work of iteration 1 on US-001, which did not finish (2 paths: work-1.txt, src/b.ts), is ralph's, not yours: US-001 runs again with it, and ralph's next commit takes it"]);
    // The run committed src/b.ts but stopped again before work-1.txt: that one is still named.
    expect([...takeLeftWork(root, ['work-1.txt']).paths]).toEqual(['work-1.txt']);
    expect(JSON.parse(readFileSync(file(root), 'utf8')).left).toEqual([{ taskId: 'US-001', iteration: 1, paths: ['work-1.txt'] }]);
    // When the agent commits its own work (or nobody does), ralph's commits take nothing: the note says no more.
    expect(takeLeftWork(root, ['work-1.txt'], false).notes).toEqual(["uncommitted work of iteration 1 on US-001, which did not finish (1 path: work-1.txt), is ralph's, not yours: US-001 runs again with it"]);
    // Committed: forgotten, and the file goes.
    expect(takeLeftWork(root, []).paths.size).toBe(0);
    expect(existsSync(file(root))).toBe(false);
  });

  it('several unfinished iterations are kept apart; a garbled file counts as none', () => {
    const root = tempDir('ralph-left-');
    recordLeftWork(root, { taskId: 'T001', iteration: 2, paths: ['a.ts'] });
    recordLeftWork(root, { taskId: 'T002', iteration: 3, paths: ['b.ts'] });
    expect(takeLeftWork(root, ['a.ts', 'b.ts']).notes.map((note) => note.split(',')[0])).toEqual(['uncommitted work of iteration 2 on T001', 'uncommitted work of iteration 3 on T002']);
    recordLeftWork(root, { taskId: 'T001', iteration: 2, paths: ['c.ts'] });
    expect([...takeLeftWork(root, ['a.ts', 'b.ts', 'c.ts']).paths].sort()).toEqual(['b.ts', 'c.ts']);
    const garbled = tempDir('ralph-left-');
    recordLeftWork(garbled, { taskId: 'T001', iteration: 1, paths: ['a.ts'] });
    writeFileSync(file(garbled), '{"left": [{"taskId": 1}');
    expect(takeLeftWork(garbled, ['a.ts'])).toEqual({ paths: new Set(), notes: [] });
  });
});
