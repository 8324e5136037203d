// A look at the remote, against a real bare repository, every git command two hosts' docks run counted and
// driven step by step: a claim fetches once, and when the shared head moved since the caller's look, the
// main worktree goes there from that same fetch (no second one) and asks whether the task is still open.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { realDeps, type Deps } from '../../../lib/deps.ts';
import { ClaimLostError, ClaimTakenError } from '../../../lib/errors.ts';
import { remoteDock } from '../../../lib/landing/remote.ts';
import { Git } from '../../../lib/repo/git.ts';
import { tempDir } from '../../support/temp.ts';
import { GIT_ENV, runGit, seededRemote } from '../../support/remote-repo.ts';


describe('a look at the remote', () => {
  it('a claim fetches once; when the head moved, the main worktree goes there from that fetch and the task is asked about', async () => {
    const root = tempDir('ralph-look-');
    const { bare } = seededRemote(root);
    const git = runGit;
    const clock = { now: 1_000_000 };
    const calls: string[] = [];
    const host = async (name: string) => {
      const dir = path.join(root, name);
      git(root, 'clone', '-q', '-b', 'feature/x', bare, dir);
      for (const [key, value] of [['user.name', 'T'], ['user.email', 't@example.test']]) git(dir, 'config', key!, value!);
      const real = realDeps();
      const deps: Deps = { ...real, env: GIT_ENV, now: () => clock.now, exec: (bin, args, options) => (calls.push(`${name} ${args[0]}`), real.exec(bin, args, options)) };
      const main = new Git(dir);
      const dock = remoteDock({ main, target: { name: 'origin', branch: 'feature/x', host: name, hostId: `${name}-0000`, claims: 'refs' }, me: { host: name, clone: dir, run: `run-${name}`, pid: 1 }, leaseMs: 600_000, waitMs: 60_000, deps, signal: new AbortController().signal, warn: () => undefined, info: () => undefined, head: await main.head() });
      await dock.join();
      return { dir, main, dock };
    };
    const a = await host('a');
    const b = await host('b');
    /** What `name`'s dock asked the remote for during `step`, `ms` after the step before. */
    const remoteCalls = async (name: string, step: () => Promise<unknown>, ms = 5_000): Promise<string[]> => {
      calls.length = 0;
      clock.now += ms;
      await step();
      return calls.filter((call) => call.startsWith(`${name} `) && /(fetch|ls-remote|push)$/.test(call)).map((call) => call.slice(name.length + 1));
    };
    const base = (await a.main.head())!;
    const land = async (task: string): Promise<string> => {
      writeFileSync(path.join(b.dir, `${task}.txt`), `${task}\n`);
      git(b.dir, 'add', `${task}.txt`);
      git(b.dir, 'commit', '-qm', `${task} done`);
      expect(await b.dock.lock.run(() => b.dock.publish(task))).toEqual({ kind: 'landed' });
      return git(bare, 'rev-parse', 'feature/x').trim();
    };

    // A stale look fetches; a look under freshMs old, at the main worktree's head, does not.
    expect(await remoteCalls('a', () => a.dock.lock.run(() => a.dock.target(1_000)))).toEqual(['fetch']);
    expect(await remoteCalls('a', () => a.dock.lock.run(() => a.dock.target(1_000)), 500)).toEqual([]);
    // The head did not move: the claim's push, one fetch, nothing asked.
    let asked = 0;
    expect(await remoteCalls('a', () => a.dock.claim('T1', base, async () => (asked++, true)))).toEqual(['push', 'fetch']);
    expect(asked).toBe(0);
    // The other host landed meanwhile: still one fetch; the main worktree at the new head; the task asked about.
    await b.dock.lock.run(() => b.dock.target());
    await b.dock.claim('T9', base, async () => true);
    const landed = await land('T9');
    expect(await remoteCalls('a', () => a.dock.claim('T2', base, async () => (asked++, true)))).toEqual(['push', 'fetch']);
    expect(asked).toBe(1);
    expect(await a.main.head()).toBe(landed);
    // Landed by the other host: the claim is given up (ClaimLostError), the main worktree at that head all the same.
    await b.dock.claim('T3', landed, async () => true);
    const next = await land('T3');
    const gone = await a.dock.claim('T4', landed, async () => false).catch((error: unknown) => error);
    expect(String(gone)).toMatch(/T4 was just landed by another host$/);
    // Landed, not merely taken: the look it was picked from is out of date (the loop looks again).
    expect(gone).toBeInstanceOf(ClaimLostError);
    expect(gone).not.toBeInstanceOf(ClaimTakenError);
    expect(await a.main.head()).toBe(next);
    // A landing always fetches, however recent the last look: it starts from the remote's real head.
    expect(await remoteCalls('a', () => a.dock.lock.run(() => a.dock.target()), 0)).toEqual(['fetch']);
    for (const task of ['T1', 'T2', 'T4']) await a.dock.release(task);
  }, 30_000);
});
