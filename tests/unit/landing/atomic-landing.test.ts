// A landing and the release of its claim are one push the server takes whole or not at all, against a real
// bare repository whose pre-receive hook writes down every push it receives: were the claim released in a
// push of its own, a host killed between the two would leave the work landed and the task still held.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { realDeps, type Deps } from '../../../lib/deps.ts';
import { Git } from '../../../lib/repo/git.ts';
import { remoteDock } from '../../../lib/landing/remote.ts';
import { ClaimLostError } from '../../../lib/errors.ts';
import { tempDir } from '../../support/temp.ts';
import { GIT_ENV, runGit, seededRemote } from '../../support/remote-repo.ts';

const ZERO = '0000000000000000000000000000000000000000';

/**
 * A clone of a bare remote whose pre-receive hook writes down every push it receives, joined as host h1:
 * its git, its dock, and the lines of the pushes the remote received so far.
 */
async function joinedClone(prefix: string) {
  const root = tempDir(prefix);
  const pushes = path.join(root, 'pushes.log');
  const git = runGit;
  const { bare, dir } = seededRemote(root, path.join(root, 'a'), (bare) => {
    // One line per push: the refs it changes, `ref:created|deleted|updated`, in the order git lists them.
    const hook = path.join(bare, 'hooks', 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\nline=''\nwhile read old new ref; do\n  if [ "$old" = ${ZERO} ]; then what=created; elif [ "$new" = ${ZERO} ]; then what=deleted; else what=updated; fi\n  line="$line $ref:$what"\ndone\necho "$line" >> ${JSON.stringify(pushes)}\n`);
    chmodSync(hook, 0o755);
  });
  const deps: Deps = { ...realDeps(), env: GIT_ENV };
  const main = new Git(dir);
  const dock = remoteDock({ main, target: { name: 'origin', branch: 'feature/x', host: 'h1', hostId: 'h1-0000', claims: 'refs' }, me: { host: 'h1', clone: dir, run: 'run-1', pid: 1 }, leaseMs: 60_000, waitMs: 10_000, deps, signal: new AbortController().signal, warn: () => undefined, info: () => undefined, head: await main.head() });
  await dock.join();
  const pushed = (): string[] => readFileSync(pushes, 'utf8').trim().split('\n');
  return { bare, dir, git, dock, pushed };
}

describe('a landing on the remote', () => {
  it('updates the branch and deletes its claim in one push', async () => {
    const { bare, dir, git, dock, pushed } = await joinedClone('ralph-atomic-');
    const head = await dock.target();
    await dock.claim('T1', head, async () => true);
    writeFileSync(path.join(dir, 't1.txt'), 't1\n');
    git(dir, 'add', 't1.txt');
    git(dir, 'commit', '-qm', 'T1 done');
    const landed = git(dir, 'rev-parse', 'HEAD').trim();
    const before = pushed().length;
    expect(await dock.publish('T1')).toEqual({ kind: 'landed' });
    const after = pushed().slice(before);
    expect(after.map((line) => line.trim().split(' ').sort().join(' '))).toEqual(['refs/heads/feature/x:updated refs/ralph/feature%2Fx/claims/T1:deleted']);
    expect(git(bare, 'rev-parse', 'refs/heads/feature/x').trim()).toBe(landed);
    expect(git(bare, 'for-each-ref', 'refs/ralph/')).toBe('');
    await dock.close();
  });

  it('a batch: the branch and the release of every claim of its tasks in one push', async () => {
    const { bare, dir, git, dock, pushed } = await joinedClone('ralph-atomic-batch-');
    const head = await dock.target();
    await dock.claim('T1', head, async () => true);
    await dock.claim('T2', head, async () => true);
    for (const task of ['T1', 'T2']) {
      writeFileSync(path.join(dir, `${task}.txt`), `${task}\n`);
      git(dir, 'add', `${task}.txt`);
      git(dir, 'commit', '-qm', `${task} done`);
    }
    const landed = git(dir, 'rev-parse', 'HEAD').trim();
    const before = pushed().length;
    expect(await dock.publish(['T1', 'T2'])).toEqual({ kind: 'landed' });
    const after = pushed().slice(before);
    expect(after.map((line) => line.trim().split(' ').sort().join(' '))).toEqual(['refs/heads/feature/x:updated refs/ralph/feature%2Fx/claims/T1:deleted refs/ralph/feature%2Fx/claims/T2:deleted']);
    expect(git(bare, 'rev-parse', 'refs/heads/feature/x').trim()).toBe(landed);
    expect(git(bare, 'for-each-ref', 'refs/ralph/')).toBe('');
    await dock.close();
  });

  it('a claim won after another host landed that very task is given up: the task is done, not to redo', async () => {
    const root = tempDir('ralph-landed-');
    const { bare } = seededRemote(root);
    const git = runGit;
    const deps: Deps = { ...realDeps(), env: GIT_ENV };
    const host = async (name: string) => {
      const dir = path.join(root, name);
      git(root, 'clone', '-q', '-b', 'feature/x', bare, dir);
      for (const [key, value] of [['user.name', 'T'], ['user.email', 't@example.test']]) git(dir, 'config', key!, value!);
      const main = new Git(dir);
      const dock = remoteDock({ main, target: { name: 'origin', branch: 'feature/x', host: name, hostId: `${name}-0000`, claims: 'refs' }, me: { host: name, clone: dir, run: `run-${name}`, pid: 1 }, leaseMs: 60_000, waitMs: 10_000, deps, signal: new AbortController().signal, warn: () => undefined, info: () => undefined, head: await main.head() });
      await dock.join();
      return { dir, dock };
    };
    const a = await host('a');
    const b = await host('b');
    // b reads the tasks at the shared head as it is now; a then claims T1, lands it and releases its claim.
    const seenByB = await b.dock.target();
    await a.dock.claim('T1', await a.dock.target(), async () => true);
    writeFileSync(path.join(a.dir, 't1.txt'), 't1\n');
    git(a.dir, 'add', 't1.txt');
    git(a.dir, 'commit', '-qm', 'T1 done');
    expect(await a.dock.publish('T1')).toEqual({ kind: 'landed' });
    // b's claim of T1 goes through (no one holds it now), but the head moved since b looked: T1 is done there.
    const claimed = b.dock.claim('T1', seenByB, async () => !existsSync(path.join(b.dir, 't1.txt')));
    await expect(claimed).rejects.toBeInstanceOf(ClaimLostError);
    await expect(claimed).rejects.toThrow('T1 was just landed by another host');
    await b.dock.release('T1');
    expect(git(bare, 'for-each-ref', 'refs/ralph/')).toBe('');
    await a.dock.close();
    await b.dock.close();
  });
});
