import { execFileSync } from 'node:child_process';
import { writeFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git, parseStatusV2 } from '../../lib/git.ts';
import { tempDir } from '../support/temp.ts';

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
    expect(parseStatusV2(output)).toEqual({ head: '1111111111111111111111111111111111111111', changed: ['src/a file.ts', 'new.ts', 'conflict.ts', 'notes/new.md'] });
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

  it('commits everything and gives the new commit in full, without asking git for HEAD again', async () => {
    const dir = repo();
    const git = new Git(dir);
    writeFileSync(path.join(dir, 'b.txt'), 'b\n');
    const previous = process.env;
    process.env = env;
    try {
      const commit = await git.commitAll('work', { 'Ralph-Iteration': '1' });
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      expect(commit).toBe(await git.head());
      expect(await git.commitAll('nothing', {})).toBeUndefined();
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
