// Claims on a remote, against a real bare repository (pushes go through git's receive-pack): the server
// decides every race; a live claim is never taken, an expired one by exactly one host.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClaimLostError, ClaimTakenError } from '../../../lib/errors.ts';
import { Git } from '../../../lib/repo/git.ts';
import { realDeps } from '../../../lib/deps.ts';
import { refPart, RemoteClaims } from '../../../lib/landing/claims.ts';
import { noAnswer, pushLines, remoteGit } from '../../../lib/landing/remote-git.ts';
import { tempDir } from '../../support/temp.ts';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };

/** A bare remote and `count` clones of it, each with claims of its own run, on one clock the test moves. */
function hosts(count: number, leaseMs = 10_000) {
  const root = tempDir('ralph-claims-');
  const bare = path.join(root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', bare], { env: ENV });
  const clock = { now: 1_000_000 };
  const warnings: string[] = [];
  const clones = Array.from({ length: count }, (_, index) => {
    const dir = path.join(root, `h${index + 1}`);
    execFileSync('git', ['init', '-q', dir], { env: ENV });
    execFileSync('git', ['remote', 'add', 'origin', bare], { cwd: dir, env: ENV });
    for (const [key, value] of [['user.name', 'T'], ['user.email', 't@example.test']]) execFileSync('git', ['config', key!, value!], { cwd: dir, env: ENV });
    const main = new Git(dir);
    const deps = { ...realDeps(), env: ENV };
    const claims = new RemoteClaims({ main, git: remoteGit(deps, dir), remote: 'origin', branch: 'feature/x', me: { host: `h${index + 1}`, clone: dir, run: `run-${index + 1}`, pid: 100 + index }, leaseMs, now: () => clock.now, warn: (message) => warnings.push(message) });
    const fetch = () => execFileSync('git', ['fetch', '-q', '--prune', 'origin', claims.fetchSpec], { cwd: dir, env: ENV });
    return { dir, claims, fetch, seen: async (task: string) => (fetch(), (await claims.read()).find((claim) => claim.task === task)) };
  });
  const onRemote = (): string[] => execFileSync('git', ['for-each-ref', '--format=%(refname)', 'refs/ralph/'], { cwd: bare, encoding: 'utf8' }).split('\n').filter(Boolean);
  return { clones, clock, warnings, onRemote };
}

// The claims' clock is the test's (`clock.now`); so are their renewal timers. A renewal fired by real time
// on a loaded machine would renew a claim the test has just let expire on its clock (the holder is alive
// and renewing, so its claim is live: a takeover must fail), or move the claim between two of the test's
// looks. The renewals tests call renew() themselves.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('claims on the remote', () => {
  it('a claim is a ref under refs/ralph/<branch>/claims/ saying who holds it; another live run cannot take it', async () => {
    const { clones, onRemote } = hosts(2);
    const [a, b] = clones as [ReturnType<typeof hosts>['clones'][number], ReturnType<typeof hosts>['clones'][number]];
    expect(await a.claims.claim('T001', await a.seen('T001'))).toBeUndefined();
    expect(onRemote()).toEqual(['refs/ralph/feature%2Fx/claims/T001']);
    const seen = await b.seen('T001');
    expect(seen).toMatchObject({ task: 'T001', host: 'h1', run: 'run-1', pid: 100, since: 1_000_000, renewedAt: 1_000_000 });
    await expect(b.claims.claim('T001', seen)).rejects.toThrow(/^T001 is held by h1 \(.*h1, run run-1, pid 100\) since /);
    a.claims.forget('T001');
  });

  it('two hosts creating the same claim at once: the server gives it to exactly one (20 races)', async () => {
    const { clones } = hosts(2);
    for (let round = 0; round < 20; round += 1) {
      const task = `T${round}`;
      const outcomes = await Promise.allSettled(clones.map((clone) => clone.claims.claim(task, undefined)));
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      const lost = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(ClaimLostError);
      for (const clone of clones) clone.claims.forget(task);
    }
  });

  it('a claim made from an out-of-date view (no claim seen, one made since) loses, and leaves the holder\'s claim as it was', async () => {
    const { clones } = hosts(2);
    const [a, b] = clones as [ReturnType<typeof hosts>['clones'][number], ReturnType<typeof hosts>['clones'][number]];
    const stale = await b.seen('T001'); // b looks before a claims
    expect(stale).toBeUndefined();
    await a.claims.claim('T001', await a.seen('T001'));
    const held = execFileSync('git', ['ls-remote', 'origin', 'refs/ralph/feature%2Fx/claims/T001'], { cwd: a.dir, env: ENV, encoding: 'utf8' });
    // Taken, not landed: what else b's look showed still stands (the loop picks from it again, no new fetch).
    await expect(b.claims.claim('T001', stale)).rejects.toBeInstanceOf(ClaimTakenError);
    expect(execFileSync('git', ['ls-remote', 'origin', 'refs/ralph/feature%2Fx/claims/T001'], { cwd: a.dir, env: ENV, encoding: 'utf8' })).toBe(held);
    expect((await b.seen('T001'))!.run).toBe('run-1');
    a.claims.forget('T001');
  });

  it('an expired claim is taken over by exactly one of two hosts (compare-and-swap on the commit seen); a live one by none', async () => {
    const { clones, clock, warnings } = hosts(3, 5_000);
    const [dead, b, c] = clones as Array<ReturnType<typeof hosts>['clones'][number]>;
    await dead!.claims.claim('T001', undefined);
    dead!.claims.forget('T001'); // the host dies: nothing renews it any more
    clock.now += 4_000;
    const live = await b!.seen('T001');
    await expect(b!.claims.claim('T001', live)).rejects.toThrow(/is held by h1/);
    clock.now += 2_000; // past the lease
    const [seenB, seenC] = [await b!.seen('T001'), await c!.seen('T001')];
    const outcomes = await Promise.allSettled([b!.claims.claim('T001', seenB), c!.claims.claim('T001', seenC)]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(warnings.filter((line) => /^took over T001 from h1 \(.*\): its claim was not renewed for 6 s \(lease 5 s\)$/.test(line))).toHaveLength(1);
    const holder = await c!.seen('T001');
    expect(['run-2', 'run-3']).toContain(holder!.run);
    b!.claims.forget('T001');
    c!.claims.forget('T001');
  });

  it("a new claim does not wait behind the clone's pushes of the claims it holds (a landing's push, a renewal)", async () => {
    const { clones, onRemote } = hosts(1);
    const [a] = clones as Array<ReturnType<typeof hosts>['clones'][number]>;
    await a!.claims.claim('T001', undefined);
    // The queue of this clone's pushes of held claims is busy (a landing's push in flight) until let go.
    let letGo!: () => void;
    const busy = a!.claims.serial(() => new Promise<void>((resolve) => (letGo = resolve)));
    expect(await a!.claims.claim('T002', undefined)).toBeUndefined();
    expect(onRemote()).toEqual(['refs/ralph/feature%2Fx/claims/T001', 'refs/ralph/feature%2Fx/claims/T002']);
    // A claim it holds already (claimed again) waits its turn, behind that push.
    let again = false;
    const turn = a!.claims.claim('T001', await a!.seen('T001')).then(() => (again = true));
    for (let tick = 0; tick < 5; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(again).toBe(false);
    letGo();
    await busy;
    await turn;
    expect(again).toBe(true);
    for (const task of ['T001', 'T002']) await a!.claims.release(task);
  }, 20_000);

  it('release deletes only a claim that is still this run\'s', async () => {
    const { clones, clock, onRemote } = hosts(2, 1_000);
    const [a, b] = clones as Array<ReturnType<typeof hosts>['clones'][number]>;
    await a!.claims.claim('T001', undefined);
    clock.now += 5_000;
    await b!.claims.claim('T001', await b!.seen('T001'));
    await a!.claims.release('T001'); // a's lease ran out and b holds it now: a's release must not delete b's claim
    expect(onRemote()).toEqual(['refs/ralph/feature%2Fx/claims/T001']);
    expect((await a!.seen('T001'))!.run).toBe('run-2');
    await b!.claims.release('T001');
    expect(onRemote()).toEqual([]);
  });
});

describe('renewals', () => {
  it('a paused claim (its landing waits on a silent remote) is not renewed; resumed, it is again', async () => {
    const { clones, clock } = hosts(1, 60_000);
    const [a] = clones as Array<ReturnType<typeof hosts>['clones'][number]>;
    const renew = (a!.claims as unknown as { renew(task: string): Promise<void> }).renew.bind(a!.claims);
    await a!.claims.claim('T001', undefined);
    const first = (await a!.seen('T001'))!;
    clock.now += 10_000;
    a!.claims.pause('T001');
    await renew('T001');
    expect((await a!.seen('T001'))!.sha).toBe(first.sha);
    a!.claims.resume('T001');
    await renew('T001');
    expect((await a!.seen('T001'))!.renewedAt).toBe(first.renewedAt + 10_000);
    a!.claims.forget('T001');
  });

  it('renewal after renewal: each moves the claim on from the commit the last one made, and the claim stays this run\'s', async () => {
    const { clones, clock } = hosts(1, 60_000);
    const [a] = clones as Array<ReturnType<typeof hosts>['clones'][number]>;
    const renew = (a!.claims as unknown as { renew(task: string): Promise<void> }).renew.bind(a!.claims);
    await a!.claims.claim('T001', undefined);
    const shas = [(await a!.seen('T001'))!.sha];
    for (let round = 1; round <= 3; round += 1) {
      clock.now += 20_000;
      await renew('T001');
      const now = (await a!.seen('T001'))!;
      expect(now.renewedAt).toBe(1_000_000 + round * 20_000);
      expect(now.run).toBe('run-1');
      shas.push(now.sha);
    }
    expect(new Set(shas).size).toBe(4);
    expect(a!.claims.lostReason('T001')).toBeUndefined();
    a!.claims.forget('T001');
  });

  it("claims an earlier run of this clone left are dropped for the tasks named; another clone's are not", async () => {
    const { clones, onRemote } = hosts(2);
    const [a, b] = clones as Array<ReturnType<typeof hosts>['clones'][number]>;
    await a!.claims.claim('T001', undefined);
    await a!.claims.claim('T002', undefined);
    await b!.claims.claim('T003', undefined);
    a!.claims.forget('T001');
    a!.claims.forget('T002'); // the run is killed: its claims stay on the remote
    const again = new RemoteClaims({ main: new Git(a!.dir), git: remoteGit({ ...realDeps(), env: ENV }, a!.dir), remote: 'origin', branch: 'feature/x', me: { host: 'h1', clone: a!.dir, run: 'run-1b', pid: 200 }, leaseMs: 10_000, now: () => 1_000_000, warn: () => undefined });
    a!.fetch();
    expect(await again.dropLeftBehind(['T001', 'T003'])).toEqual(['T001']);
    expect(onRemote()).toEqual(['refs/ralph/feature%2Fx/claims/T002', 'refs/ralph/feature%2Fx/claims/T003']);
    b!.claims.forget('T003');
  });
});

describe('a claim carries its holder\'s lease', () => {
  it('a host with a shorter --lease judges another host\'s claim by that host\'s lease, not its own', async () => {
    const root = hosts(1, 60_000);
    const [long] = root.clones as Array<ReturnType<typeof hosts>['clones'][number]>;
    await long!.claims.claim('T001', undefined);
    long!.claims.forget('T001');
    const seen = await long!.seen('T001');
    expect(seen!.leaseMs).toBe(60_000);
    const { isExpired } = await import('../../../lib/landing/claims.ts');
    // 10 s later: past a 5 s lease, well within the holder's 60 s.
    expect(isExpired(seen!, 5_000, seen!.renewedAt + 10_000)).toBe(false);
    expect(isExpired(seen!, 5_000, seen!.renewedAt + 61_000)).toBe(true);
    expect(isExpired({ renewedAt: seen!.renewedAt }, 5_000, seen!.renewedAt + 10_000)).toBe(true);
  });
});

describe('remote git output', () => {
  it('refPart keeps ref names valid for any branch or task id', () => {
    expect(refPart('feature/x')).toBe('feature%2Fx');
    expect(refPart('US-001')).toBe('US-001');
    expect(refPart('a..b.lock')).toBe('a%2E%2Eb%2Elock');
    expect(refPart('tâche 1')).toBe('t%C3%A2che%201');
  });

  it('push --porcelain lines, and a remote that does not answer told apart from one that refuses', () => {
    expect(pushLines('To git://h/r\n!\trefs/heads/x:refs/heads/x\t[rejected] (fetch first)\n=\tHEAD:refs/ralph/a\t[up to date]\nDone\n')).toEqual([
      { flag: '!', to: 'refs/heads/x', summary: '[rejected] (fetch first)' },
      { flag: '=', to: 'refs/ralph/a', summary: '[up to date]' },
    ]);
    expect(noAnswer({ exitCode: 128, stdout: '', stderr: 'fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n' })).toBe('fatal: unable to connect to 127.0.0.1: 127.0.0.1[0: 127.0.0.1]: errno=Connection refused');
    expect(noAnswer({ exitCode: 1, stdout: '!\trefs/heads/x:refs/heads/x\t[rejected] (non-fast-forward)\n', stderr: 'error: failed to push some refs' })).toBeUndefined();
    expect(noAnswer({ exitCode: 0, stdout: '', stderr: '' })).toBeUndefined();
  });
});
