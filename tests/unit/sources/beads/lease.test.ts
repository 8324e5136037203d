// Claims of a dead host expire and exactly one other host takes them over; a live host's claims are
// renewed and never taken. Hosts are clones sharing the fake bd's server database (bd-hosts.ts).
import { describe, expect, it } from 'vitest';
import { ClaimLostError } from '../../../../lib/errors.ts';
import { Bd, type BdIssue } from '../../../../lib/sources/beads/bd.ts';
import { createBeadsSource } from '../../../../lib/sources/beads/source.ts';
import { expiredClaim, renewClaim, RENEWED_KEY } from '../../../../lib/sources/beads/lease.ts';
import type { Task, TaskSource } from '../../../../lib/sources/types.ts';
import type { SeedIssue } from '../../../fakes/bd-seed.ts';
import type { BeadsProject } from './bd-helpers.ts';
import { sharedServer, type SharedServer } from './bd-hosts.ts';

const LONG_AGO = '2025-01-01T00:00:00.000Z';
const info = (worker = 1) => ({ iteration: 1, maxIterations: 9, sessionId: 's', worker });
const dead: SeedIssue = { id: 'ws-ep.5', title: 'Dead host\'s', status: 'in_progress', assignee: 'ralph-hostB-w1', updated_at: LONG_AGO };
const ids = (tasks: readonly Task[]): string[] => tasks.map((task) => task.id);

async function started(server: SharedServer, host: string | undefined, options: Parameters<SharedServer['clone']>[1] = {}) {
  const project = server.clone(host, options);
  const source = createBeadsSource(project.ctx);
  expect(await source.check()).toEqual([]);
  return { project, source };
}

function holderOf(server: SharedServer, id: string): { status: string; assignee?: string; updated_at: string } {
  return server.issues().find((issue) => issue.id === id)!;
}

describe('expiredClaim: another host\'s ralph claim, not written for longer than the lease', () => {
  const now = Date.parse('2025-01-01T01:00:00.000Z');
  const issue = (assignee: string, updated: string, status = 'in_progress'): BdIssue => ({ id: 'x', title: 'x', status, priority: 2, assignee, updated_at: updated });
  it.each([
    ['another host, 11 minutes old', issue('ralph-hostB-w1', '2025-01-01T00:49:00Z'), true],
    ['another host, 9 minutes old', issue('ralph-hostB-w1', '2025-01-01T00:51:00Z'), false],
    ['this host (its own: recovery puts those back)', issue('ralph-hostA-w1', LONG_AGO), false],
    ['a run without --remote', issue('ralph-w1', LONG_AGO), false],
    ['a person', issue('alice', LONG_AGO), false],
    ['closed', issue('ralph-hostB-w1', LONG_AGO, 'closed'), false],
    ['no time to judge by', issue('ralph-hostB-w1', 'soon'), false],
  ])('%s → %s', (_name, claim, expected) => expect(expiredClaim(claim, 'hostA', now, 600_000)).toBe(expected));
});

describe('takeover of an expired claim', () => {
  it('the ready list offers another host\'s expired claim after bd\'s ready beads, never a live one, and only with --remote', async () => {
    const live: SeedIssue = { id: 'ws-ep.6', title: 'Live host\'s', status: 'in_progress', assignee: 'ralph-hostC-w1', updated_at: new Date().toISOString() };
    const server = sharedServer('1.x', [dead, live]);
    const { source } = await started(server, 'hostA');
    const ready = (await source.snapshot()).ready;
    expect(ids(ready)).toEqual(['ws-ep.2', 'ws-ep.5']);
    expect(ready[1]?.meta).toMatchObject({ heldBy: 'ralph-hostB-w1' });
    const oneMachine = (await started(server, undefined)).source;
    expect(ids((await oneMachine.snapshot()).ready)).toEqual(['ws-ep.2']);
  });

  it('claim() takes it: reopened only while still the dead host\'s, then claimed and checked, for this host\'s worker', async () => {
    const server = sharedServer('1.x', [dead]);
    const { project, source } = await started(server, 'hostA');
    const task = (await source.snapshot()).ready.find((item) => item.id === 'ws-ep.5')!;
    project.calls.length = 0;
    await source.claim?.(task, info(2));
    expect(holderOf(server, 'ws-ep.5')).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostA-w2' });
    expect(project.calls).toEqual([
      // What this bd can do (heartbeat, reclaim), asked once at the first claim: 1.0.5 has neither.
      ['--help'],
      ['show', 'ws-ep.5'],
      ['update', 'ws-ep.5', '--claim', '--actor', 'ralph-hostB-w1', '--status', 'open', '--assignee', ''],
      ['update', 'ws-ep.5', '--claim', '--actor', 'ralph-hostA-w2'],
      ['show', 'ws-ep.5'],
      ['show', 'ws-ep.5'],
    ]);
    // A retry of the iteration (the loop's reclaim) finds it already this worker's.
    await source.claim?.(task, info(2));
    await source.settle?.({} as never, info(2));
  });

  it('the holder renewed it meanwhile: no takeover, the claim stays the holder\'s', async () => {
    const server = sharedServer('1.x', [dead]);
    const { source } = await started(server, 'hostA');
    const task = (await source.snapshot()).ready.find((item) => item.id === 'ws-ep.5')!;
    const hostB = server.clone('hostB');
    expect(await renewClaim(new Bd(hostB.ctx.deps, hostB.root), 'ws-ep.5', 'ralph-hostB-w1', Date.now())).toEqual({ kind: 'held' });
    await expect(source.claim?.(task, info())).rejects.toThrow(ClaimLostError);
    expect(holderOf(server, 'ws-ep.5').assignee).toBe('ralph-hostB-w1');
  });

  it('two hosts take over one expired claim at the same moment: exactly one gets it', async () => {
    for (let trial = 0; trial < 4; trial++) {
      const server = sharedServer('1.x', [dead]);
      const hosts = await Promise.all(['hostA', 'hostC'].map((host) => started(server, host)));
      const tasks = await Promise.all(hosts.map(async ({ source }) => (await source.snapshot()).ready.find((item) => item.id === 'ws-ep.5')!));
      const results = await Promise.allSettled(hosts.map(({ source }, index) => source.claim!(tasks[index]!, info())));
      const won = results.map((result) => result.status === 'fulfilled');
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(results.find((result) => result.status === 'rejected')).toMatchObject({ reason: expect.any(ClaimLostError) });
      expect(holderOf(server, 'ws-ep.5').assignee).toBe(won[0] ? 'ralph-hostA-w1' : 'ralph-hostC-w1');
      for (const { source } of hosts) await source.settle?.({} as never, info());
    }
  });

  it('a host that looked before another took over, and reopens after: its reopen is refused, the other keeps the bead', async () => {
    const server = sharedServer('1.x', [dead]);
    const a = await started(server, 'hostA');
    const c = await started(server, 'hostC');
    const taskA = (await a.source.snapshot()).ready.find((item) => item.id === 'ws-ep.5')!;
    const taskC = (await c.source.snapshot()).ready.find((item) => item.id === 'ws-ep.5')!;
    // C reads the bead (still hostB's), then stalls before its first write until A's takeover is complete.
    // A starts only once C has read it: else C may read it in the moment A has released hostB's claim.
    let aDone!: () => void;
    const aFinished = new Promise<void>((resolve) => (aDone = resolve));
    let cHasRead!: () => void;
    const cRead = new Promise<void>((resolve) => (cHasRead = resolve));
    const exec = c.project.ctx.deps.exec;
    c.project.ctx.deps.exec = async (bin, args, options) => {
      if (args[0] === 'update') {
        cHasRead(); // its first write comes after its read
        await aFinished;
      }
      return exec(bin, args, options);
    };
    const late = c.source.claim!(taskC, info());
    await Promise.race([cRead, late.catch(() => undefined)]);
    await a.source.claim!(taskA, info());
    aDone();
    await expect(late).rejects.toThrow(ClaimLostError);
    expect(holderOf(server, 'ws-ep.5')).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostA-w1' });
    await a.source.settle?.({} as never, info());
  });
});

describe('renewal', () => {
  it('renews only the holder\'s own claim: stamps updated_at through metadata; a closed bead or another\'s is left as it is', async () => {
    const mine: SeedIssue = { id: 'ws-ep.7', title: 'Mine', status: 'in_progress', assignee: 'ralph-hostA-w1', updated_at: LONG_AGO };
    const closed: SeedIssue = { id: 'ws-ep.6', title: 'Done', status: 'closed', assignee: 'ralph-hostA-w1', updated_at: LONG_AGO };
    const server = sharedServer('1.x', [mine, closed, dead]);
    const host = server.clone('hostA');
    const bd = new Bd(host.ctx.deps, host.root);
    const now = Date.parse('2026-05-01T10:00:00.000Z');
    expect(await renewClaim(bd, 'ws-ep.7', 'ralph-hostA-w1', now)).toEqual({ kind: 'held' });
    const renewed = server.issues().find((issue) => issue.id === 'ws-ep.7') as unknown as { updated_at: string; status: string; metadata: Record<string, unknown> };
    expect(Date.parse(renewed.updated_at)).toBeGreaterThan(Date.parse(LONG_AGO));
    expect(renewed).toMatchObject({ status: 'in_progress', metadata: { [RENEWED_KEY]: '2026-05-01T10:00:00.000Z' } });
    expect(await renewClaim(bd, 'ws-ep.6', 'ralph-hostA-w1', now)).toEqual({ kind: 'closed' });
    expect(await renewClaim(bd, 'ws-ep.7', 'ralph-hostA-w2', now)).toEqual({ kind: 'lost', holder: 'ralph-hostA-w1', status: 'in_progress' });
    // Another's claim, and a closed bead: not written at all (a renewal must never keep a dead claim alive).
    expect(holderOf(server, 'ws-ep.6')).toMatchObject({ status: 'closed', updated_at: LONG_AGO });
    expect(await renewClaim(bd, dead.id, 'ralph-hostA-w1', now)).toEqual({ kind: 'lost', holder: 'ralph-hostB-w1', status: 'in_progress' });
    expect(holderOf(server, dead.id).updated_at).toBe(LONG_AGO);
  });

  it('a live host\'s bead is renewed while it works and never offered; once the host is gone it expires and another takes it', async () => {
    // A fake clock for every host and for bd's timestamps (FAKE_BD_NOW): a lease passes at once. Only the
    // keeper's timer (lease/3) runs in real time; the test waits for the renewal it makes, not for a time.
    const lease = 1500;
    const clock = { now: Date.parse('2026-05-01T10:00:00.000Z') };
    const iso = (ms: number): string => new Date(ms).toISOString();
    const projects: BeadsProject[] = [];
    const onClock = async (host: string) => {
      const project = server.clone(host, { lease, now: () => clock.now });
      project.ctx.deps.env.FAKE_BD_NOW = iso(clock.now);
      projects.push(project);
      const source = createBeadsSource(project.ctx);
      expect(await source.check()).toEqual([]);
      return { project, source };
    };
    const pass = (ms: number): void => {
      clock.now += ms;
      for (const project of projects) project.ctx.deps.env.FAKE_BD_NOW = iso(clock.now);
    };
    const server = sharedServer('1.x');
    const a = await onClock('hostA');
    const c = await onClock('hostC');
    // hostA's bd calls: each renewal it completes is told by its stamp; a kill stops it between two calls.
    const stamps: string[] = [];
    let stamped = (): void => undefined;
    const inFlight = new Set<Promise<unknown>>();
    let killed = false;
    const exec = a.project.ctx.deps.exec;
    a.project.ctx.deps.exec = (bin, args, options) => {
      if (killed) return new Promise(() => undefined);
      const call = exec(bin, args, options).then((result) => {
        const stamp = args.find((arg) => arg.startsWith(`${RENEWED_KEY}=`));
        if (stamp && result.exitCode === 0) {
          stamps.push(stamp.slice(RENEWED_KEY.length + 1));
          stamped();
        }
        return result;
      });
      inFlight.add(call);
      void call.finally(() => inFlight.delete(call));
      return call;
    };
    /** Resolves once hostA has renewed its claim at `time` (a deadline, not a pause: renewals come every lease/3). */
    const renewedAt = (time: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`hostA did not renew its claim at ${time} (renewals seen: ${stamps.join(', ') || 'none'})`)), 10_000);
        const check = (): void => {
          if (!stamps.includes(time)) return void (stamped = check);
          clearTimeout(deadline);
          resolve();
        };
        check();
      });

    const task = (await a.source.snapshot()).ready[0]!;
    await a.source.claim!(task, info());
    // A lease and more goes by, three times: hostA, alive, renews it each time (at the clock's time), so
    // hostC is never offered it.
    for (let round = 0; round < 3; round += 1) {
      pass(lease + 100);
      await renewedAt(iso(clock.now));
      expect(ids((await c.source.snapshot()).ready)).not.toContain(task.id);
      expect(clock.now - Date.parse(holderOf(server, task.id).updated_at)).toBeLessThan(lease);
    }
    // hostA is killed: what it had sent bd lands, nothing of it runs any more, so nothing renews its claim.
    killed = true;
    await Promise.allSettled([...inFlight]);
    pass(lease + 200);
    const offered = (await c.source.snapshot()).ready.find((item) => item.id === task.id);
    expect(offered?.meta).toMatchObject({ heldBy: 'ralph-hostA-w1' });
    await c.source.claim!(offered!, info());
    expect(holderOf(server, task.id).assignee).toBe('ralph-hostC-w1');
    // hostA starts again: its recovery leaves the bead alone, it is hostC's now.
    const again = await onClock('hostA');
    expect(await again.source.recover()).toEqual([]);
    expect(holderOf(server, task.id)).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostC-w1' });
    for (const source of [c.source, a.source] as TaskSource[]) await source.settle?.({} as never, info());
  }, 15_000);
});
