// lib/repo/head-file.ts: HEAD read from the files answers what `git rev-parse HEAD` answers, or nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { headFromFiles } from '../../../lib/repo/head-file.ts';
import { tempDir } from '../../support/temp.ts';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const gitHead = (cwd: string): string => git(cwd, 'rev-parse', 'HEAD');

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function repo(): string {
  const dir = tempDir('head-file-');
  dirs.push(dir);
  git(dir, 'init', '-q', '-b', 'feature/x');
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  git(dir, 'add', 'a.txt');
  git(dir, 'commit', '-q', '-m', 'one');
  return dir;
}

describe('HEAD from the files', () => {
  it('a branch (a loose ref, then packed), a detached HEAD and a worktree: what git says', () => {
    const dir = repo();
    expect(headFromFiles(dir)).toBe(gitHead(dir));
    // Packed, beside another branch at another commit (listed before it).
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'two');
    git(dir, 'branch', 'aaa', 'HEAD~1');
    git(dir, 'pack-refs', '--all');
    expect(headFromFiles(dir)).toBe(gitHead(dir));
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'three');
    expect(headFromFiles(dir)).toBe(gitHead(dir));
    const tree = path.join(dir, '..', `${path.basename(dir)}-w1`);
    dirs.push(tree);
    git(dir, 'worktree', 'add', '-q', '-b', 'w1', tree);
    git(tree, 'commit', '-q', '--allow-empty', '-m', 'in the worktree');
    expect(headFromFiles(tree)).toBe(gitHead(tree));
    expect(headFromFiles(dir)).toBe(gitHead(dir));
    expect(headFromFiles(tree)).not.toBe(headFromFiles(dir));
    git(dir, 'checkout', '-q', '--detach', 'HEAD~1');
    expect(headFromFiles(dir)).toBe(gitHead(dir));
  });

  it('answers nothing where git must: an unborn branch, a symbolic ref to another, a subfolder, no repository', () => {
    const empty = tempDir('head-file-');
    dirs.push(empty);
    expect(headFromFiles(empty)).toBeUndefined();
    git(empty, 'init', '-q', '-b', 'main');
    expect(headFromFiles(empty)).toBeUndefined();
    const dir = repo();
    mkdirSync(path.join(dir, 'sub'));
    expect(headFromFiles(path.join(dir, 'sub'))).toBeUndefined();
    git(dir, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/feature/x');
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/alias');
    expect(gitHead(dir)).toMatch(/^[0-9a-f]{40}$/);
    expect(headFromFiles(dir)).toBeUndefined();
    writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/.invalid\n');
    expect(headFromFiles(dir)).toBeUndefined();
  });
});
