// Watching the remote cheaply (lib/landing/watch.ts): which refs moved decides whether a look fetches; then
// two hosts' docks on a real bare repository, every git command they run counted, driven step by step.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { realDeps, type Deps } from '../../../lib/deps.ts';
import { remoteDock } from '../../../lib/landing/remote.ts';
import { movedRefs, parseListed } from '../../../lib/landing/watch.ts';
import { Git } from '../../../lib/repo/git.ts';
import { tempDir } from '../../support/temp.ts';

const BRANCH = 'refs/heads/feature/x';
const PREFIX = 'refs/ralph/feature%2Fx/claims/';
const view = (branch: string | undefined, claims: Record<string, string> = {}) => ({ branch, claims: new Map(Object.entries(claims).map(([task, sha]) => [`${PREFIX}${task}`, sha])) });

describe('which refs moved', () => {
  it('reads ls-remote: the branch and the claims, exactly (its patterns match the ends of longer names too)', () => {
    const listed = ['a1\trefs/heads/feature/x', 'b2\trefs/heads/other/refs/heads/feature/x', `c3\t${PREFIX}T1`, 'd4\trefs/ralph/feature%2Fy/claims/T1', 'e5\trefs/heads/feature/x/more', ''].join('\n');
    expect(parseListed(listed, BRANCH, PREFIX)).toEqual(view('a1', { T1: 'c3' }));
    expect(parseListed(listed, BRANCH)).toEqual(view('a1'));
    expect(parseListed('', BRANCH, PREFIX)).toEqual(view(undefined));
  });

  it.each([
    ['nothing moved', view('a', { T1: 'c' }), view('a', { T1: 'c' }), []],
    ['the branch moved', view('b', { T1: 'c' }), view('a', { T1: 'c' }), [BRANCH]],
    ['the branch is gone', view(undefined), view('a'), [BRANCH]],
    ['a claim appeared', view('a', { T1: 'c', T2: 'd' }), view('a', { T1: 'c' }), [`${PREFIX}T2`]],
    ['a claim was renewed', view('a', { T1: 'e' }), view('a', { T1: 'c' }), [`${PREFIX}T1`]],
    ['a claim went', view('a'), view('a', { T1: 'c' }), [`${PREFIX}T1`]],
  ])('%s', (_name, remote, mirror, moved) => {
    expect(movedRefs(remote, mirror, BRANCH)).toEqual(moved);
  });
});

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };

describe('a look at the remote', () => {
  it('lists the refs and fetches only when one this clone mirrors moved; a claim fetches only when the branch moved', async () => {
    const root = tempDir('ralph-watch-');
    const bare = path.join(root, 'remote.git');
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' });
    git(root, 'init', '-q', '--bare', bare);
    const seed = path.join(root, 'seed');
    git(root, 'init', '-q', '-b', 'feature/x', seed);
    writeFileSync(path.join(seed, 'a.txt'), 'a\n');
    git(seed, 'add', 'a.txt');
    git(seed, 'commit', '-qm', 'base');
    git(seed, 'push', '-q', bare, 'feature/x');
    const clock = { now: 1_000_000 };
    const calls: string[] = [];
    const host = async (name: string) => {
      const dir = path.join(root, name);
      git(root, 'clone', '-q', '-b', 'feature/x', bare, dir);
      for (const [key, value] of [['user.name', 'T'], ['user.email', 't@example.test']]) git(dir, 'config', key!, value!);
      const real = realDeps();
      const deps: Deps = { ...real, env: ENV, now: () => clock.now, exec: (bin, args, options) => (calls.push(`${name} ${args[0]}`), real.exec(bin, args, options)) };
      const main = new Git(dir);
      const dock = remoteDock({ main, target: { name: 'origin', branch: 'feature/x', host: name, hostId: `${name}-0000`, claims: 'refs' }, me: { host: name, clone: dir, run: `run-${name}`, pid: 1 }, leaseMs: 600_000, waitMs: 60_000, deps, signal: new AbortController().signal, warn: () => undefined, info: () => undefined, head: await main.head() });
      await dock.join();
      return { dir, main, dock };
    };
    const a = await host('a');
    const b = await host('b');
    /** What `name`'s dock asked the remote for during `step`. */
    const remoteCalls = async (name: string, step: () => Promise<unknown>): Promise<string[]> => {
      calls.length = 0;
      clock.now += 5_000; // every look is stale: none is taken as current
      await step();
      return calls.filter((call) => call.startsWith(`${name} `) && /(fetch|ls-remote|push)$/.test(call)).map((call) => call.slice(name.length + 1));
    };
    const base = (await a.main.head())!;

    expect(await remoteCalls('a', () => a.dock.target(1_000))).toEqual(['ls-remote']);
    // Another host's claim is a ref that moved: fetched, and seen.
    await b.dock.claim('T1', base, async () => true);
    expect(await remoteCalls('a', () => a.dock.target(1_000))).toEqual(['ls-remote', 'fetch']);
    expect([...(await a.dock.elsewhere()).keys()]).toEqual(['T1']);
    expect(await remoteCalls('a', () => a.dock.target(1_000))).toEqual(['ls-remote']);
    // Its own claim: pushed, the branch listed (it did not move), and mirrored, so the next look fetches nothing.
    let asked = 0;
    expect(await remoteCalls('a', () => a.dock.claim('T2', base, async () => (asked++, true)))).toEqual(['push', 'ls-remote']);
    expect(asked).toBe(0);
    expect(await remoteCalls('a', () => a.dock.target(1_000))).toEqual(['ls-remote']);

    // The other host lands T1: a claim made on the old head fetches, goes to the new head and asks whether its task is still open.
    writeFileSync(path.join(b.dir, 't1.txt'), 't1\n');
    git(b.dir, 'add', 't1.txt');
    git(b.dir, 'commit', '-qm', 'T1 done');
    expect(await b.dock.lock.run(() => b.dock.publish('T1'))).toEqual({ kind: 'landed' });
    const landed = git(bare, 'rev-parse', 'feature/x').trim();
    expect(await remoteCalls('a', () => a.dock.claim('T3', base, async () => (asked++, true)))).toEqual(['push', 'ls-remote', 'fetch']);
    expect(asked).toBe(1);
    expect(await a.main.head()).toBe(landed);
    expect([...(await a.dock.elsewhere()).keys()]).toEqual([]);
    // A landing still fetches: what it replays onto must be in this clone.
    expect(await remoteCalls('a', () => a.dock.lock.run(() => a.dock.target()))).toEqual(['fetch']);
    for (const task of ['T2', 'T3']) await a.dock.release(task);
  }, 30_000);
});
