import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git } from '../../../lib/repo/git.ts';
import { compareWorkStates, readWorkState, stateAfterLanding, type WorkState } from '../../../lib/iteration/work-state.ts';
import { matchesAny } from '../../../lib/repo/paths.ts';
import { tempDir } from '../../support/temp.ts';

const state = (head: string | undefined, files: Record<string, string>): WorkState => ({ head, files: new Map(Object.entries(files)) });

describe('compareWorkStates', () => {
  it('sees nothing when HEAD and every changed file are the same', () => {
    expect(compareWorkStates(state('a', { 'x.ts': '1:1' }), state('a', { 'x.ts': '1:1' }))).toEqual({ headMoved: false, files: [] });
  });

  it('sees a moved HEAD, a file edited again, a new change and a change undone', () => {
    const before = state('a', { 'edited.ts': '1:1', 'undone.ts': '2:2' });
    const after = state('b', { 'edited.ts': '1:5', 'new.ts': '3:3' });
    expect(compareWorkStates(before, after)).toEqual({ headMoved: true, files: ['edited.ts', 'new.ts', 'undone.ts'] });
  });

  it('leaves out the ignored paths and ralph\'s own files', () => {
    const after = state('a', { '.beads/issues.jsonl': '9:9', 'specs/f/tasks.md': '1:1', '.ralph/status.json': '1:1', 'src/x.ts': '1:1' });
    expect(compareWorkStates(state('a', {}), after, ['.beads/', 'specs/f/tasks.md'])).toEqual({ headMoved: false, files: ['src/x.ts'] });
  });

  it('matches a file, or anything under a folder written with or without its slash', () => {
    expect(matchesAny('.beads/x', ['.beads/'])).toBe(true);
    expect(matchesAny('.rulebook-ralph/history/iteration-1.json', ['.rulebook-ralph/history'])).toBe(true);
    expect(matchesAny('.beadsx', ['.beads/'])).toBe(false);
    expect(matchesAny('prd.json', ['prd.json'])).toBe(true);
    expect(matchesAny('a/prd.json', ['prd.json'])).toBe(false);
  });
});

describe('readWorkState on a real repository', () => {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test' };

  it('tells an edit of an already modified file from no change at all', async () => {
    const dir = tempDir('ralph-work-');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    execFileSync('git', ['add', '-A'], { cwd: dir });
    execFileSync('git', ['commit', '-qm', 'init'], { cwd: dir, env });
    const git = new Git(dir);
    writeFileSync(path.join(dir, 'a.txt'), 'a\nb\n');
    const before = await readWorkState(git);
    expect(compareWorkStates(before, await readWorkState(git))).toEqual({ headMoved: false, files: [] });

    appendFileSync(path.join(dir, 'a.txt'), 'c\n');
    // A different size is enough; the time is set apart too, for file systems with coarse timestamps.
    utimesSync(path.join(dir, 'a.txt'), new Date(), new Date(Date.now() + 5000));
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src', 'new.ts'), 'x');
    const after = await readWorkState(git);
    expect(compareWorkStates(before, after)).toEqual({ headMoved: false, files: ['a.txt', 'src/new.ts'] });

    rmSync(path.join(dir, 'src'), { recursive: true });
    execFileSync('git', ['commit', '-qam', 'work'], { cwd: dir, env });
    expect(compareWorkStates(after, await readWorkState(git))).toEqual({ headMoved: true, files: ['a.txt', 'src/new.ts'] });
  });
});

describe('stateAfterLanding', () => {
  const git = (hooks: boolean): Git => ({ commitHooks: async () => hooks }) as unknown as Git;
  const afterAgent = state('a1', { 'src/x.ts': '10:1' });

  it('is the state read after the agent when ralph did not commit', async () => {
    expect(await stateAfterLanding(git(false), afterAgent, 'a1', 'a1')).toBe(afterAgent);
    expect(await stateAfterLanding(git(true), afterAgent, 'a1', undefined)).toBe(afterAgent);
  });

  it('is a clean tree at the new commit when ralph committed everything, unless a commit hook may have changed files', async () => {
    expect(await stateAfterLanding(git(false), afterAgent, 'a1', 'c2', ['src/x.ts'])).toEqual(state('c2', {}));
    expect(await stateAfterLanding(git(true), afterAgent, 'a1', 'c2', ['src/x.ts'])).toBeUndefined();
  });

  it("keeps what ralph's commit left out (the user's own work) as read after the agent; without the committed paths, reads again", async () => {
    const both = state('a1', { 'src/x.ts': '10:1', 'notes.md': '5:2', 'state/h/1.json': '3:3' });
    expect(await stateAfterLanding(git(false), both, 'a1', 'c2', ['src/x.ts', 'state/h'])).toEqual(state('c2', { 'notes.md': '5:2' }));
    expect(await stateAfterLanding(git(false), both, 'a1', 'c2')).toBeUndefined();
  });

  it('matches what git shows after a commit of everything', async () => {
    const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test' };
    const dir = tempDir('ralph-work-');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    execFileSync('git', ['add', '-A'], { cwd: dir });
    execFileSync('git', ['commit', '-qm', 'init'], { cwd: dir, env });
    const real = new Git(dir);
    writeFileSync(path.join(dir, 'a.txt'), 'b\n');
    writeFileSync(path.join(dir, 'new.txt'), 'n\n');
    const after = await readWorkState(real);
    execFileSync('git', ['add', '-A'], { cwd: dir });
    execFileSync('git', ['commit', '-qm', 'work'], { cwd: dir, env });
    const carried = await stateAfterLanding(real, after, after.head, await real.head(), ['a.txt', 'new.txt']);
    expect(carried).toEqual(await readWorkState(real));
  });
});
