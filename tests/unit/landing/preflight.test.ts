// What --remote needs, each missing thing as its own line, before anything runs.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgv } from '../../../lib/cli/argv.ts';
import { resolveConfig } from '../../../lib/config/index.ts';
import { realDeps } from '../../../lib/deps.ts';
import { Git } from '../../../lib/repo/git.ts';
import { hostId, remoteHost, remoteTarget } from '../../../lib/landing/preflight.ts';
import type { TaskSource } from '../../../lib/sources/types.ts';
import { tempDir } from '../../support/temp.ts';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test' };
const config = (argv: string[]) => resolveConfig({ flags: parseArgv(argv).flags, env: {}, file: {}, passthrough: [] });
const source = (state?: ReturnType<NonNullable<TaskSource['remoteState']>>) => ({ ...(state ? { remoteState: () => state } : {}) }) as unknown as TaskSource;

function repo(): { dir: string; bare: string } {
  const root = tempDir('ralph-preflight-');
  const bare = path.join(root, 'remote.git');
  const dir = path.join(root, 'clone');
  execFileSync('git', ['init', '-q', '--bare', bare], { env: ENV });
  execFileSync('git', ['init', '-q', '-b', 'feature/x', dir], { env: ENV });
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: dir, env: ENV });
  execFileSync('git', ['remote', 'add', 'origin', bare], { cwd: dir, env: ENV });
  return { dir, bare };
}

describe('--remote preflight', () => {
  it('off without --remote; on, the target names the remote, the branch, the host and how tasks are claimed', async () => {
    const { dir } = repo();
    const problems: string[] = [];
    expect(await remoteTarget(new Git(dir), config([]), source(), 'feature/x', dir, problems, realDeps())).toBeUndefined();
    const target = await remoteTarget(new Git(dir), config(['--remote', 'origin', '--host-name', 'vm 7']), source(), 'feature/x', dir, problems, realDeps());
    expect(problems).toEqual([]);
    expect(target).toEqual({ name: 'origin', branch: 'feature/x', host: 'vm 7', hostId: hostId('vm 7', dir), claims: 'refs' });
    expect(target!.hostId).toMatch(/^vm-7-[0-9a-f]{4}$/);
    expect((await remoteTarget(new Git(dir), config(['--remote', 'origin']), source('database'), 'feature/x', dir, [], realDeps()))!.claims).toBe('database');
  });

  it('every missing thing at once, one line each: the remote, the branch, commits, converge, the source', async () => {
    const { dir } = repo();
    const problems: string[] = [];
    const target = await remoteTarget(new Git(dir), config(['--remote', 'upstream', '--no-commit', '--converge']), source({ problem: 'the source says no' }), undefined, dir, problems, realDeps());
    expect(target).toBeUndefined();
    expect(problems).toEqual([
      '--remote upstream: this repository has no remote of that name (it has: origin; git remote add upstream URL)',
      '--remote upstream shares the current branch with the other hosts, but HEAD is detached: check out the feature branch',
      '--remote upstream lands work on the remote as commits: drop --no-commit (or the commit: false setting)',
      '--converge cannot run with --remote upstream yet: once the hosts are done, run ralph --converge on one of them without --remote (then push)',
      'the source says no',
    ]);
  });

  it("a remote that does not answer now is named with its URL and git's reason", async () => {
    const { dir } = repo();
    execFileSync('git', ['remote', 'add', 'gone', path.join(dir, '..', 'no-such.git')], { cwd: dir, env: ENV });
    const problems: string[] = [];
    await remoteTarget(new Git(dir), config(['--remote', 'gone']), source(), 'feature/x', dir, problems, realDeps());
    expect(problems).toEqual([expect.stringMatching(/^--remote gone \(.*no-such\.git\) does not answer: fatal: '.*no-such\.git' does not appear to be a git repository$/)]);
  });

  it('the host id is stable per clone and differs between two clones of one machine', () => {
    expect(hostId('box', '/a/clone')).toBe(hostId('box', '/a/clone'));
    expect(hostId('box', '/a/clone')).not.toBe(hostId('box', '/b/clone'));
    expect(remoteHost(config([]), '/a')).toBeUndefined();
  });
});
