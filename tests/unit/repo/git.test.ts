import { execFileSync } from 'node:child_process';
import { writeFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git, gitReason, parseStatusV2 } from '../../../lib/repo/git.ts';
import { tempDir } from '../../support/temp.ts';

describe('parseStatusV2', () => {
  it('reads the HEAD oid and ordinary, renamed, unmerged and untracked paths', () => {
    const output = [
      '# branch.oid 1111111111111111111111111111111111111111',
      '# branch.head main',
      '1 .M N... 100644 100644 100644 aaaa bbbb src/a file.ts',
      '2 R. N... 100644 100644 100644 aaaa bbbb R100 new.ts',
      'old.ts',
      'u UU N... 100644 100644 100644 100644 aaaa bbbb cccc conflict.ts',
      '? notes/new.md',
      '',
    ].join('\0');
    // A rename lists both paths: the old one is gone, and a commit of the new one alone would keep it.
    expect(parseStatusV2(output)).toEqual({ head: '1111111111111111111111111111111111111111', changed: ['src/a file.ts', 'new.ts', 'old.ts', 'conflict.ts', 'notes/new.md'] });
  });

  it('has no head before the first commit', () => {
    expect(parseStatusV2('# branch.oid (initial)\0# branch.head main\0')).toEqual({ changed: [] });
  });
});

describe('Git against a real repository', () => {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test' };
  const repo = () => {
    const dir = tempDir('ralph-git-');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    execFileSync('git', ['add', '-A'], { cwd: dir });
    execFileSync('git', ['commit', '-qm', 'init'], { cwd: dir, env });
    return dir;
  };

  it('lists files committed since a base and uncommitted now, but never its own state', async () => {
    const dir = repo();
    const git = new Git(dir);
    const base = await git.head();
    writeFileSync(path.join(dir, 'b.txt'), 'b\n');
    execFileSync('git', ['add', '-A'], { cwd: dir });
    execFileSync('git', ['commit', '-qm', 'b'], { cwd: dir, env });
    renameSync(path.join(dir, 'a.txt'), path.join(dir, 'c.txt'));
    writeFileSync(path.join(dir, '.ralph.lock'), '1\n');
    const changes = await git.changedSince(base);
    expect(changes.files).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect(changes.head).toBe(await git.head());
  });

  it('commits exactly the paths it is given, in full, and leaves what the user changed or staged alone', async () => {
    const dir = repo();
    const git = new Git(dir);
    writeFileSync(path.join(dir, 'b.txt'), 'b\n');
    writeFileSync(path.join(dir, 'glob*.txt'), 'literal name\n');
    writeFileSync(path.join(dir, 'globby.txt'), 'not named\n');
    writeFileSync(path.join(dir, 'user.txt'), 'the user\'s\n');
    writeFileSync(path.join(dir, 'a.txt'), 'staged by the user\n');
    execFileSync('git', ['add', 'a.txt'], { cwd: dir });
    const previous = process.env;
    process.env = env;
    try {
      const commit = await git.commitPaths(['b.txt', 'glob*.txt'], 'work', { 'Ralph-Iteration': '1' });
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      expect(commit).toBe(await git.head());
      const shown = execFileSync('git', ['show', '--name-only', '--format=%B', 'HEAD'], { cwd: dir, encoding: 'utf8' });
      expect(shown).toContain('Ralph-Iteration: 1');
      expect(shown.trim().split('\n').slice(-2).sort()).toEqual(['b.txt', 'glob*.txt']);
      // The user's staged change stays staged, their new files untracked.
      expect(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual(['?? globby.txt', '?? user.txt', 'M  a.txt']);
      expect(await git.commitPaths(['b.txt'], 'nothing', {})).toBeUndefined();
      expect(await git.commitPaths([], 'nothing', {})).toBeUndefined();
      // A deletion, and an amend that folds a path into HEAD.
      execFileSync('rm', [path.join(dir, 'b.txt')]);
      writeFileSync(path.join(dir, 'c.txt'), 'c\n');
      const deleted = await git.commitPaths(['b.txt'], 'delete', {});
      const amended = await git.commitPaths(['c.txt'], '', {}, { amend: true });
      expect(amended).not.toBe(deleted);
      expect(execFileSync('git', ['show', '--name-status', '--format=%s', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').filter(Boolean)).toEqual(['delete', 'D\tb.txt', 'A\tc.txt']);
    } finally {
      process.env = previous;
    }
  });

  it('knows whether a commit runs a hook that could change files, in the git dir or core.hooksPath', async () => {
    const dir = repo();
    expect(await new Git(dir).commitHooks()).toBe(false);
    writeFileSync(path.join(dir, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    expect(await new Git(dir).commitHooks()).toBe(true);
    const other = repo();
    const hooks = path.join(other, 'my-hooks');
    execFileSync('mkdir', [hooks]);
    writeFileSync(path.join(hooks, 'post-commit'), '#!/bin/sh\n', { mode: 0o755 });
    execFileSync('git', ['config', 'core.hooksPath', hooks], { cwd: other });
    expect(await new Git(other).commitHooks()).toBe(true);
  });
});

describe('gitReason', () => {
  it("git's own reason in one line: the error with what it names, up to the next error, without advice", () => {
    expect(gitReason('Updating a..b\nerror: Your local changes to the following files would be overwritten by merge:\n\tprd.json\nPlease commit your changes or stash them before you merge.\nAborting\n')).toBe('error: Your local changes to the following files would be overwritten by merge: prd.json');
    expect(gitReason('fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n')).toBe('fatal: unable to connect to 127.0.0.1: 127.0.0.1[0: 127.0.0.1]: errno=Connection refused');
    expect(gitReason("fatal: '/x.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\n")).toBe("fatal: '/x.git' does not appear to be a git repository");
    expect(gitReason('nothing said with a prefix\nsecond line')).toBe('nothing said with a prefix');
    expect(gitReason('', 'git push failed')).toBe('git push failed');
  });
});
