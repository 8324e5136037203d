// A bare remote and a clone on `feature/x` holding one commit (a.txt), pushed there as origin: the set-up the
// landing unit tests run their docks against (tests/unit/landing/).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** Who commits, and no system config: the landing unit tests' git environment. */
export const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };

export type RunGit = (cwd: string, ...args: string[]) => string;

/** git in `cwd` with GIT_ENV; its stdout. */
export const runGit: RunGit = (cwd, ...args) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });

/**
 * `root/remote.git` (bare; `onBare` runs on it before anything is pushed) and the clone `dir` (default
 * `root/seed`) with its first commit pushed to it as origin's feature/x.
 */
export function seededRemote(root: string, dir = path.join(root, 'seed'), onBare?: (bare: string) => void): { bare: string; dir: string } {
  const bare = path.join(root, 'remote.git');
  runGit(root, 'init', '-q', '--bare', bare);
  onBare?.(bare);
  runGit(root, 'init', '-q', '-b', 'feature/x', dir);
  for (const [key, value] of [['user.name', 'T'], ['user.email', 't@example.test']]) runGit(dir, 'config', key!, value!);
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  runGit(dir, 'add', 'a.txt');
  runGit(dir, 'commit', '-qm', 'base');
  runGit(dir, 'remote', 'add', 'origin', bare);
  runGit(dir, 'push', '-q', 'origin', 'feature/x');
  return { bare, dir };
}
