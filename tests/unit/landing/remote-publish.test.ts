// A landing waiting on a remote that does not answer, against a real bare repository: the landing push is
// made to fail as an unreachable remote does (what git printed over git:// with the daemon stopped), the
// rest goes through. Meanwhile the waiting task's claim is not renewed (work this host cannot publish must
// not keep it from the others), while the claim of a task still at work is.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { abortableSleep, realDeps, type Deps } from '../../../lib/deps.ts';
import { Git } from '../../../lib/repo/git.ts';
import { remoteDock } from '../../../lib/landing/remote.ts';
import { tempDir } from '../../support/temp.ts';
import { GIT_ENV, runGit, seededRemote } from '../../support/remote-repo.ts';

const UNREACHABLE = { exitCode: 128, stdout: '', stderr: 'fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n\n' };

describe('a landing waiting on a silent remote', () => {
  it("lets its task's claim go unrenewed while the claims of tasks at work are renewed; it lands once the remote answers", async () => {
    const root = tempDir('ralph-publish-');
    const { bare, dir } = seededRemote(root, path.join(root, 'a'));
    const git = runGit;
    const claimOf = (task: string): string => git(bare, 'rev-parse', `refs/ralph/feature%2Fx/claims/${task}`).trim();

    let silent = 2;
    const seen: Array<{ t1: [string, string]; t2: [string, string] }> = [];
    const real = realDeps();
    const deps: Deps = {
      ...real,
      env: GIT_ENV,
      exec: async (bin, args, options) => (args.includes('--atomic') && silent-- > 0 ? UNREACHABLE : real.exec(bin, args, options)),
      // Each wait is a real one, long enough for several renewals (every 250 ms with this lease).
      sleep: async (_ms, signal) => {
        const before = { t1: claimOf('T1'), t2: claimOf('T2') };
        await abortableSleep(1_500, signal);
        seen.push({ t1: [before.t1, claimOf('T1')], t2: [before.t2, claimOf('T2')] });
      },
    };
    const warnings: string[] = [];
    const main = new Git(dir);
    const dock = remoteDock({ main, target: { name: 'origin', branch: 'feature/x', host: 'h1', hostId: 'h1-0000', claims: 'refs' }, me: { host: 'h1', clone: dir, run: 'run-1', pid: 1 }, leaseMs: 750, waitMs: 60_000, deps, signal: new AbortController().signal, warn: (message) => warnings.push(message), info: () => undefined, head: await main.head() });
    await dock.join();
    const head = await dock.target();
    await dock.claim('T1', head, async () => true);
    await dock.claim('T2', head, async () => true);
    writeFileSync(path.join(dir, 't1.txt'), 't1\n');
    git(dir, 'add', 't1.txt');
    git(dir, 'commit', '-qm', 'T1 done');
    expect(await dock.publish('T1')).toEqual({ kind: 'landed' });
    expect(warnings[0]).toMatch(/^origin does not answer \(fatal: unable to connect to 127\.0\.0\.1: 127\.0\.0\.1\[0: 127\.0\.0\.1\]: errno=Connection refused\): landing T1 waits and tries again for up to 60 s$/);
    expect(seen).toHaveLength(2);
    for (const wait of seen) {
      expect(wait.t1[1]).toBe(wait.t1[0]); // not renewed: T1's landing waits
      expect(wait.t2[1]).not.toBe(wait.t2[0]); // renewed: T2 is still at work
    }
    expect(git(bare, 'for-each-ref', '--format=%(refname)', 'refs/ralph/').trim()).toBe('refs/ralph/feature%2Fx/claims/T2');
    expect(git(bare, 'log', '-1', '--format=%s', 'feature/x').trim()).toBe('T1 done');
    await dock.release('T2');
    expect(git(bare, 'for-each-ref', 'refs/ralph/').trim()).toBe('');
  }, 60_000);
});
