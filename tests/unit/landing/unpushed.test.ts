// A landing cut short (committed in this clone, never pushed): ralph's own commits told apart from a user's
// by their trailers; replayed on the remote's head in a real repository, the state files ralph alone writes
// merged (a log appended on both sides, an iteration record whose number was taken meanwhile).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git } from '../../../lib/repo/git.ts';
import { appendedBoth, notRalphs, parseUnpushed, replayUnpushed, sharedStart, unpushedCommits, type Unpushed } from '../../../lib/landing/unpushed.ts';
import { tempDir } from '../../support/temp.ts';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };
const STATE = ['prd.json', 'progress.txt', '.rulebook-ralph/history'];

const commit = (over: Partial<Unpushed>): Unpushed => ({ sha: 'a', subject: 's', task: 'US-001', host: 'h1', iteration: '1', ...over });

describe('which unpushed commits are ralph\'s landing on this host', () => {
  it.each([
    ['all ralph\'s, this host', [commit({}), commit({ sha: 'b', task: 'US-002' })], undefined],
    ['a commit with no trailer (a user\'s)', [commit({}), commit({ sha: 'b', task: '', host: '' })], 'b'],
    ['another host\'s landing', [commit({ host: 'h2' })], 'a'],
    ['a commit naming two tasks', [commit({ task: 'US-001,US-002' })], 'a'],
    ['ralph\'s task trailer, no host (before Ralph-Host)', [commit({ host: '' })], 'a'],
  ])('%s', (_what, commits, first) => {
    expect(notRalphs(commits, 'h1')?.sha).toBe(first);
  });

  it('parses git log records with trailers', () => {
    expect(parseUnpushed('abc\x1fralph: US-001 x\x1fUS-001\x1fh1\x1f7\x1e\ndef\x1fmine\x1f\x1f\x1f\x1e\n')).toEqual([
      { sha: 'abc', subject: 'ralph: US-001 x', task: 'US-001', host: 'h1', iteration: '7' },
      { sha: 'def', subject: 'mine', task: '', host: '', iteration: '' },
    ]);
  });

  it.each([
    ['both appended', 'a\n', 'a\nb\n', 'a\nc\n', 'a\nb\nc\n'],
    ['one side rewrote the base', 'a\n', 'x\n', 'a\nc\n', undefined],
    ['no base', undefined, 'a\n', 'b\n', undefined],
  ])('appendedBoth: %s', (_what, base, ours, theirs, expected) => {
    expect(appendedBoth(base, ours, theirs)).toBe(expected);
  });

  it('sharedStart keeps whole lines only', () => {
    expect(sharedStart('# log\nab\n', '# log\nac\n')).toBe('# log\n');
    expect(sharedStart('x', 'y')).toBe('');
  });
});

/** A repository whose branch has a base, the remote's landing and this clone's unpushed landing beside it. */
function diverged(mineFiles: Record<string, string>, theirFiles: Record<string, string>) {
  const dir = tempDir('ralph-unpushed-');
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, env: ENV, encoding: 'utf8' });
  const write = (files: Record<string, string>): void => {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
  };
  git('init', '-q', '-b', 'night');
  git('config', 'user.name', 'T');
  git('config', 'user.email', 't@example.test');
  write({ 'prd.json': '{\n  "a": false,\n  "x": 1,\n  "y": 2,\n  "z": 3,\n  "b": false\n}\n', 'progress.txt': '# progress\n' });
  git('add', '-A');
  git('commit', '-qm', 'base');
  const base = git('rev-parse', 'HEAD').trim();
  write(theirFiles);
  git('add', '-A');
  git('commit', '-qm', 'ralph: US-002 theirs', '-m', 'Ralph-Iteration: 1\nRalph-Task: US-002\nRalph-Host: h2');
  const head = git('rev-parse', 'HEAD').trim();
  git('reset', '-q', '--hard', base);
  write(mineFiles);
  git('add', '-A');
  git('commit', '-qm', 'ralph: US-001 mine', '-m', 'Ralph-Iteration: 1\nRalph-Task: US-001\nRalph-Worker: w1\nRalph-Host: h1');
  const mine = git('rev-parse', 'HEAD').trim();
  return { dir, git, head, mine, main: new Git(dir) };
}

describe('replayUnpushed (a real repository)', () => {
  it("the progress log keeps both hosts' lines; this host's record takes the next free number, in its name, its content and its trailer", async () => {
    const record = (task: string) => `{\n  "iterationNumber": 1,\n  "taskId": "${task}"\n}\n`;
    const { dir, git, head, mine, main } = diverged(
      { 'one.txt': 'one\n', 'prd.json': '{\n  "a": true,\n  "x": 1,\n  "y": 2,\n  "z": 3,\n  "b": false\n}\n', 'progress.txt': '# progress\nUS-001 done\n', '.rulebook-ralph/history/iteration-1.json': record('US-001') },
      { 'two.txt': 'two\n', 'prd.json': '{\n  "a": false,\n  "x": 1,\n  "y": 2,\n  "z": 3,\n  "b": true\n}\n', 'progress.txt': '# progress\nUS-002 done\n', '.rulebook-ralph/history/iteration-1.json': record('US-002') },
    );
    const commits = await unpushedCommits(main, head, mine);
    expect(commits.map((item) => [item.task, item.host, item.iteration])).toEqual([['US-001', 'h1', '1']]);
    const replayed = await replayUnpushed(main, commits, head, mine, STATE);
    expect('head' in replayed).toBe(true);
    expect(git('rev-parse', 'HEAD~1').trim()).toBe(head);
    expect(readFileSync(path.join(dir, 'progress.txt'), 'utf8')).toBe('# progress\nUS-002 done\nUS-001 done\n');
    expect(JSON.parse(readFileSync(path.join(dir, 'prd.json'), 'utf8'))).toMatchObject({ a: true, b: true });
    expect(JSON.parse(readFileSync(path.join(dir, '.rulebook-ralph/history/iteration-1.json'), 'utf8'))).toEqual({ iterationNumber: 1, taskId: 'US-002' });
    expect(JSON.parse(readFileSync(path.join(dir, '.rulebook-ralph/history/iteration-2.json'), 'utf8'))).toEqual({ iterationNumber: 2, taskId: 'US-001' });
    expect(git('log', '-1', '--format=%(trailers:key=Ralph-Iteration,valueonly)%(trailers:key=Ralph-Host,valueonly)%s').trim()).toBe('2\nh1\nralph: US-001 mine');
    expect(git('status', '--porcelain').trim()).toBe('');
  });

  it("Spec Kit's state: this host's progress entry takes the number after the other hosts', its task record too; the summary counted again", async () => {
    const entry = (n: number, task: string) => `## Iteration ${n} - 2026-01-01 00:00:00\n- Task: ${task} x\n- Status: ✅ completed\n\n---\n`;
    const tracking = (done: string[], last: Record<string, number>) =>
      `${JSON.stringify({ version: 1, lastIteration: Math.max(0, ...Object.values(last)), summary: { total: 3, done: done.length, open: 3 - done.length, skipped: 0 }, tasks: ['US-001', 'US-002', 'US-003'].map((id) => ({ id, status: done.includes(id) ? 'done' : 'open', ...(last[id] ? { lastIteration: last[id] } : {}) })) }, null, 2)}\n`;
    // The log is named to sort after the record: the log decides the number, whatever git's order.
    const { dir, git, head: theirs, mine, main } = diverged(
      { 'one.txt': 'one\n', 'work-log.txt': `# progress\n## Session b (run h1)\n${entry(1, 'US-001')}`, 'ralph-tasks.json': tracking(['US-001'], { 'US-001': 1 }) },
      { 'two.txt': 'two\n', 'work-log.txt': `# progress\n${entry(1, 'US-002')}${entry(2, 'US-003')}`, 'ralph-tasks.json': tracking(['US-002', 'US-003'], { 'US-002': 1, 'US-003': 2 }) },
    );
    const replayed = await replayUnpushed(main, await unpushedCommits(main, theirs, mine), theirs, mine, ['work-log.txt', 'ralph-tasks.json']);
    expect('head' in replayed).toBe(true);
    expect(readFileSync(path.join(dir, 'work-log.txt'), 'utf8')).toBe(`# progress\n${entry(1, 'US-002')}${entry(2, 'US-003')}## Session b (run h1)\n${entry(3, 'US-001')}`);
    const record = JSON.parse(readFileSync(path.join(dir, 'ralph-tasks.json'), 'utf8')) as { lastIteration: number; summary: object; tasks: Array<{ id: string; status: string; lastIteration?: number }> };
    expect(record.summary).toEqual({ total: 3, done: 3, open: 0, skipped: 0 });
    expect(record.lastIteration).toBe(3);
    expect(record.tasks.map((task) => `${task.id} ${task.status} ${task.lastIteration}`)).toEqual(['US-001 done 3', 'US-002 done 1', 'US-003 done 2']);
    expect(git('log', '-1', '--format=%(trailers:key=Ralph-Iteration,valueonly)').trim()).toBe('3');
    expect(git('status', '--porcelain').trim()).toBe('');
  });

  it('a conflict in the work itself: back at the unpushed commit, the paths named', async () => {
    const { git, head, mine, main } = diverged({ 'shared.txt': 'mine\n' }, { 'shared.txt': 'theirs\n' });
    const replayed = await replayUnpushed(main, await unpushedCommits(main, head, mine), head, mine, STATE);
    expect(replayed).toEqual({ conflict: ['shared.txt'] });
    expect(git('rev-parse', 'HEAD').trim()).toBe(mine);
    expect(git('status', '--porcelain').trim()).toBe('');
  });

  it('a state file rewritten on both sides (not only appended): a conflict, never a guess', async () => {
    const { head, mine, main } = diverged({ 'progress.txt': 'rewritten here\n' }, { 'progress.txt': 'rewritten there\n' });
    expect(await replayUnpushed(main, await unpushedCommits(main, head, mine), head, mine, STATE)).toEqual({ conflict: ['progress.txt'] });
  });
});
