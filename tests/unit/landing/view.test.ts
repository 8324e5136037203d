import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { execCommand, type Deps } from '../../../lib/deps.ts';
import { Git } from '../../../lib/repo/git.ts';
import { RemoteClaims } from '../../../lib/landing/claims.ts';
import { remoteGit } from '../../../lib/landing/remote-git.ts';
import { readRemoteClaims, remoteBranchHead } from '../../../lib/landing/view.ts';
import { tempDir } from '../../support/temp.ts';

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const LEASE = 60_000;
const env = { PATH: process.env.PATH, HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });
const deps = (cwd: string, now = T0): Deps => ({ cwd, env, now: () => now, sleep: async () => undefined, random: () => 0.5, stdout: process.stdout, stderr: process.stderr, exec: execCommand });

/** A bare remote with branch `feat`, and two clones of it: `a` holds claims, `b` looks at them. */
function hosts(): { remote: string; a: string; b: string } {
  const dir = tempDir('ralph-view-');
  const remote = path.join(dir, 'remote.git');
  const seed = path.join(dir, 'seed');
  git(dir, 'init', '-q', '--bare', remote);
  git(dir, 'init', '-q', '-b', 'feat', seed);
  git(seed, 'commit', '-q', '--allow-empty', '-m', 'start');
  git(seed, 'push', '-q', remote, 'feat');
  for (const name of ['a', 'b']) {
    git(dir, 'clone', '-q', '-b', 'feat', remote, path.join(dir, name));
    // Claims are commits; the Git class runs with the process's own environment.
    git(path.join(dir, name), 'config', 'user.name', 't');
    git(path.join(dir, name), 'config', 'user.email', 't@example.com');
  }
  return { remote, a: path.join(dir, 'a'), b: path.join(dir, 'b') };
}

function holder(clone: string): RemoteClaims {
  return new RemoteClaims({ main: new Git(clone), git: remoteGit(deps(clone), clone), remote: 'origin', branch: 'feat', me: { host: 'host1', clone, run: 'run-1', pid: 4242 }, leaseMs: LEASE, now: () => T0, warn: () => undefined });
}

describe('readRemoteClaims', () => {
  it("reads another clone's claim as it is on the remote, expired once past the lease", async () => {
    const { a, b } = hosts();
    const claims = holder(a);
    expect(await claims.claim('T1', undefined)).toBeUndefined();
    const live = await readRemoteClaims({ root: b, deps: deps(b, T0 + 5_000), remote: 'origin', branch: 'feat', leaseMs: LEASE });
    expect(live).toEqual({ name: 'origin', branch: 'feat', claims: [{ task: 'T1', host: 'host1', clone: a, run: 'run-1', pid: 4242, since: '2026-11-26T12:00:00.000Z', renewedAt: '2026-11-26T12:00:00.000Z', expired: false }] });
    const late = await readRemoteClaims({ root: b, deps: deps(b, T0 + LEASE + 1), remote: 'origin', branch: 'feat', leaseMs: LEASE });
    expect(late.claims[0]!.expired).toBe(true);
    await claims.release('T1');
  });

  it("keeps what it fetched apart from the run's own mirror of the claims, and forgets released claims", async () => {
    const { a, b } = hosts();
    const claims = holder(a);
    await claims.claim('T1', undefined);
    await readRemoteClaims({ root: b, deps: deps(b), remote: 'origin', branch: 'feat', leaseMs: LEASE });
    expect(git(b, 'for-each-ref', '--format=%(refname)', 'refs/ralph-seen/')).toBe('');
    expect(git(b, 'for-each-ref', '--format=%(refname)', 'refs/ralph-view/')).toBe('refs/ralph-view/origin/feat/claims/T1\n');
    await claims.release('T1');
    expect((await readRemoteClaims({ root: b, deps: deps(b), remote: 'origin', branch: 'feat', leaseMs: LEASE })).claims).toEqual([]);
    expect(git(b, 'for-each-ref', 'refs/ralph-view/')).toBe('');
  });

  it('a remote that is not there, or not a repository: one line, no claims', async () => {
    const { b } = hosts();
    expect(await readRemoteClaims({ root: b, deps: deps(b), remote: 'upstream', branch: 'feat', leaseMs: LEASE })).toEqual({
      name: 'upstream',
      branch: 'feat',
      claims: [],
      error: 'this repository has no remote named upstream (git remote -v lists them; git remote add upstream URL)',
    });
    git(b, 'remote', 'set-url', 'origin', path.join(b, '..', 'gone.git'));
    const gone = await readRemoteClaims({ root: b, deps: deps(b), remote: 'origin', branch: 'feat', leaseMs: LEASE });
    expect(gone.claims).toEqual([]);
    expect(gone.error).toMatch(/^origin does not answer \(.*\)$/);
  });
});

describe('remoteBranchHead', () => {
  it("the branch's head on the remote, or null when it has no such branch", async () => {
    const { remote, b } = hosts();
    expect(await remoteBranchHead({ root: b, deps: deps(b), remote: 'origin', branch: 'feat' })).toEqual({ head: git(remote, 'rev-parse', 'feat').trim() });
    expect(await remoteBranchHead({ root: b, deps: deps(b), remote: 'origin', branch: 'other' })).toEqual({ head: null });
  });
});
