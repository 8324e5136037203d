// ralph's claims on the lease line (beads' main, 1.3) and on the bd versions before it: what bd can do is
// read from `bd --help`, a worker's agent runs as its actor, renewals are bd heartbeats, a dead host's
// expired lease is taken over by a reclaim scoped to it, and a run gives back what it holds.
import { describe, expect, it, vi } from 'vitest';
import { Bd, bdUpgradeHint, parseBdHelp, type BdIssue } from '../../../../lib/sources/beads/bd.ts';
import { createBeadsSource } from '../../../../lib/sources/beads/source.ts';
import { expiredClaim, renewClaim } from '../../../../lib/sources/beads/lease.ts';
import { releaseHeldNow, releasesNow } from '../../../../lib/sources/beads/claims.ts';
import { answerText, isHumanQuestion, questionTitle } from '../../../../lib/sources/beads/questions.ts';
import type { IterationResult } from '../../../../lib/sources/types.ts';
import { FAKE_BD_VERSIONS, type FakeBdVersion, type SeedIssue } from '../../../fakes/bd-seed.ts';
import { beadsProject } from './bd-helpers.ts';
import { sharedServer } from './bd-hosts.ts';

const info = (worker?: number) => ({ iteration: 1, maxIterations: 9, sessionId: 's', ...(worker === undefined ? {} : { worker }) });
const result = (id: string, kind: IterationResult['kind']): IterationResult => ({ iteration: 1, task: { id, title: id, status: 'in_progress' }, kind, reason: '', tasksDone: [], filesChanged: [], claimedComplete: false, agentText: '', durationMs: 1 });

describe('pure parts', () => {
  it.each([
    ['cobra list', 'Available Commands:\n  close       Close\n  heartbeat   Renew\n  reclaim     Revert\n  human       Help\n\nFlags:\n  -h, --help   help', { heartbeat: true, reclaim: true, human: true }],
    ['groups of newer bd', 'Working With Issues:\n  update           Update\n\nMaintenance:\n  reclaim          Revert expired claims\n', { heartbeat: false, reclaim: true, human: false }],
    ['flags and usage are no commands', 'Usage:\n  bd heartbeat [flags]\n\nFlags:\n      --heartbeat   x\n', { heartbeat: false, reclaim: false, human: false }],
    ['nothing', '', { heartbeat: false, reclaim: false, human: false }],
  ])('parseBdHelp: %s', (_name, text, expected) => expect(parseBdHelp(text)).toEqual(expected));

  it('expiredClaim judges by bd\'s own lease where bd keeps one, however old the last write', () => {
    const now = Date.parse('2026-11-27T21:00:00Z');
    const claim = (lease: string): BdIssue => ({ id: 'x', title: 'x', status: 'in_progress', priority: 2, assignee: 'ralph-hostB-w1', updated_at: '2020-01-01T00:00:00Z', lease_expires_at: lease });
    expect(expiredClaim(claim('2026-11-27T21:01:00Z'), 'hostA', now, 600_000)).toBe(false);
    expect(expiredClaim(claim('2026-11-27T20:59:00Z'), 'hostA', now, 600_000)).toBe(true);
  });

  it('question beads: a title ralph finds again, the answer from the last comment, human labels', () => {
    expect(questionTitle('ws-1', '404  or\n410?')).toBe('Question on ws-1: 404 or 410?');
    expect(questionTitle('ws-1', 'x'.repeat(300))).toHaveLength(200);
    expect(answerText({ id: 'q' }, [{ text: 'first' }, { text: 'Response: Use sqlite.' }])).toBe('Use sqlite.');
    expect(answerText({ id: 'q', close_reason: 'Dismissed: not needed' }, [])).toBe('(closed in beads without an answer: Dismissed: not needed; go on with your best judgement)');
    expect([isHumanQuestion({ labels: ['human'] }), isHumanQuestion({ labels: ['ui'] }), isHumanQuestion({})]).toEqual([true, false, false]);
  });

  it('releasesNow: a forced exit gives back each bead bd still shows held by the worker this run claimed it for', () => {
    const held = new Map([['a', 'ralph-w1'], ['b', 'ralph-w2'], ['c', 'ralph-w1'], ['d', 'ralph-h-w1']]);
    const shown: BdIssue[] = [
      { id: 'a', title: 'a', status: 'in_progress', priority: 2, assignee: 'ralph-w1' },
      { id: 'b', title: 'b', status: 'in_progress', priority: 2, assignee: 'ralph-w3' },
      { id: 'c', title: 'c', status: 'closed', priority: 2, assignee: 'ralph-w1' },
      { id: 'd', title: 'd', status: 'in_progress', priority: 2, assignee: 'ralph-h-w1' },
      { id: 'e', title: 'e', status: 'in_progress', priority: 2, assignee: 'ralph-w1' },
    ];
    expect(releasesNow(held, shown, false)).toEqual([
      ['update', 'a', '--status', 'open', '--assignee', '', '--actor', 'ralph-w1'],
      ['update', 'd', '--status', 'open', '--assignee', '', '--actor', 'ralph-h-w1'],
    ]);
    // --remote: only while the holder still holds it, by bd's compare-and-set claim.
    expect(releasesNow(held, shown.slice(3, 4), true)).toEqual([['update', 'd', '--claim', '--actor', 'ralph-h-w1', '--status', 'open', '--assignee', '']]);
  });

  it('releaseHeldNow: bd show, then one update per bead still held, each given what is left of the time; none past it', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const held = new Map([['a', 'ralph-w1'], ['b', 'ralph-w2'], ['c', 'ralph-w3']]);
      const shown = [...held].map(([id, holder]) => ({ id, title: id, status: 'in_progress', priority: 2, assignee: holder }));
      const calls: Array<[string, number]> = [];
      // Each bd call takes 40 ms of the 100 given.
      releaseHeldNow((args, timeoutMs) => {
        calls.push([args.slice(0, 2).join(' '), timeoutMs]);
        vi.setSystemTime(Date.now() + 40);
        return args[0] === 'show' ? JSON.stringify(shown) : '[]';
      }, held, false, 100);
      expect(calls).toEqual([['show a', 100], ['update a', 60], ['update b', 20]]);
      // bd not answering the show: nothing more asked.
      calls.length = 0;
      releaseHeldNow((args, timeoutMs) => (calls.push([args.slice(0, 2).join(' '), timeoutMs]), undefined), held, false, 100);
      expect(calls).toEqual([['show a', 100]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('bdUpgradeHint names a migrated database, and only that', () => {
    expect(bdUpgradeHint('Error: schema version mismatch: database is at v66, binary knows up to v53')).toMatch(/a newer bd migrated this beads database/);
    expect(bdUpgradeHint("record event in events: Error 1105: Field 'id' doesn't have a default value")).toMatch(/a newer bd migrated/);
    expect(bdUpgradeHint("run 'bd migrate schema' once every client is upgraded")).toMatch(/then run bd migrate schema once/);
    expect(bdUpgradeHint('issue already claimed by alice')).toBe('');
  });
});

describe.each(FAKE_BD_VERSIONS)('a worker\'s claim, bd %s', (version: FakeBdVersion) => {
  it('the agent runs as the worker\'s actor; a failed iteration gives the bead back; the end of the run gives back what is left', async () => {
    const project = beadsProject(version, [{ id: 'ws-ep.5', title: 'Task D' }]);
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    expect(source.agentEnv?.(info())).toEqual({});
    expect(source.agentEnv?.(info(2))).toEqual({ BEADS_ACTOR: 'ralph-w2', BD_ACTOR: 'ralph-w2' });
    const [first, second] = (await source.snapshot()).ready;
    await source.claim?.(first!, info(1));
    await source.claim?.(second!, info(2));
    // Iteration of worker 1 failed: the bead is open again at once; worker 2's is still held.
    await source.snapshot('progress');
    await source.settle?.(result(first!.id, 'no_change'), info(1));
    const stored = (id: string) => (project.other('show', id) as BdIssue[])[0]!;
    expect(stored(first!.id)).toMatchObject({ status: 'open' });
    expect(stored(first!.id).assignee).toBeUndefined();
    expect(stored(second!.id)).toMatchObject({ status: 'in_progress', assignee: 'ralph-w2' });
    expect(project.calls).toContainEqual(['update', first!.id, '--status', 'open', '--assignee', '', '--actor', 'ralph-w1']);
    expect(await source.release?.()).toEqual([`gave back the bead this run still held in beads: ${second!.id} (ralph-w2); open again for the next run`]);
    expect(stored(second!.id)).toMatchObject({ status: 'open' });
    // Nothing held any more: nothing to say.
    expect(await source.release?.()).toEqual([]);
  });

  it('a forced exit gives back at once what its workers still hold, never a bead its agent closed', async () => {
    const project = beadsProject(version, [{ id: 'ws-ep.5', title: 'Task D' }]);
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    const [first, second] = (await source.snapshot()).ready;
    await source.claim?.(first!, info(1));
    await source.claim?.(second!, info(2));
    project.other('close', second!.id, '--reason', 'done', '--actor', 'ralph-w2');
    source.releaseNow?.(3_000);
    const stored = (id: string) => (project.other('show', id) as BdIssue[])[0]!;
    expect(stored(first!.id)).toMatchObject({ status: 'open' });
    expect(stored(first!.id).assignee).toBeUndefined();
    expect(stored(second!.id)).toMatchObject({ status: 'closed' });
  });

  it('a run that claimed nothing asks bd nothing at its end', async () => {
    const project = beadsProject(version);
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    project.calls.length = 0;
    expect(await source.release?.()).toEqual([]);
    expect(project.calls).toEqual([]);
  });
});

describe('the lease line (bd main) with --remote', () => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const future = new Date(Date.now() + 240_000).toISOString();
  const recent = new Date().toISOString();
  // A dead host's claim whose lease ran out a minute ago, and a live one written long ago but renewed by heartbeat.
  const dead: SeedIssue = { id: 'ws-ep.5', title: 'Dead host\'s', status: 'in_progress', assignee: 'ralph-hostB-w1', updated_at: recent, lease_expires_at: past };
  const live: SeedIssue = { id: 'ws-ep.6', title: 'Live host\'s', status: 'in_progress', assignee: 'ralph-hostC-w1', updated_at: '2020-01-01T00:00:00.000Z', lease_expires_at: future };

  it('offers a dead host\'s expired lease, never a live one, and takes it over with one reclaim scoped to that bead and holder', async () => {
    const server = sharedServer('main', [dead, live]);
    const project = server.clone('hostA');
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    const ready = (await source.snapshot()).ready;
    expect(ready.map((task) => task.id)).toEqual(['ws-ep.2', 'ws-ep.5']);
    project.calls.length = 0;
    await source.claim?.(ready[1]!, info(1));
    expect(project.calls).toEqual([
      ['--help'],
      ['show', 'ws-ep.5'],
      ['reclaim', '--id', 'ws-ep.5', '--assignee', 'ralph-hostB-w1', '--older-than', '0s'],
      ['update', 'ws-ep.5', '--claim', '--actor', 'ralph-hostA-w1'],
      ['show', 'ws-ep.5'],
      ['show', 'ws-ep.5'],
    ]);
    expect(server.issues().find((issue) => issue.id === 'ws-ep.5')).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostA-w1' });
    expect(project.ctx.warnings).toContain('took over ws-ep.5 from ralph-hostB-w1: its lease in beads ran out (bd reclaim)');
    expect(server.issues().find((issue) => issue.id === 'ws-ep.6')).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostC-w1' });
    await source.release?.();
  });

  it('renews by bd heartbeat, which moves bd\'s lease; a lost claim is said as lost', async () => {
    const server = sharedServer('main', [{ id: 'ws-ep.7', title: 'Mine', status: 'in_progress', assignee: 'ralph-hostA-w1', lease_expires_at: future }]);
    const project = server.clone('hostA');
    const bd = new Bd(project.ctx.deps, project.root);
    expect(await renewClaim(bd, 'ws-ep.7', 'ralph-hostA-w1', Date.now(), true)).toEqual({ kind: 'held' });
    const renewed = server.issues().find((issue) => issue.id === 'ws-ep.7') as unknown as { lease_expires_at: string; metadata?: unknown };
    expect(Date.parse(renewed.lease_expires_at)).toBeGreaterThan(Date.now() + 250_000);
    expect(renewed.metadata).toBeUndefined();
    expect(await renewClaim(bd, 'ws-ep.7', 'ralph-hostA-w2', Date.now(), true)).toEqual({ kind: 'lost', holder: 'ralph-hostA-w1', status: 'in_progress' });
  });
});

describe('claims on a database other clones share (server mode)', () => {
  it('a run without --remote takes back the claims of its kind, never a --remote host\'s', async () => {
    const server = sharedServer('main', [
      { id: 'ws-ep.5', title: 'Left by a one-machine run', status: 'in_progress', assignee: 'ralph-w1' },
      { id: 'ws-ep.6', title: 'A live host\'s', status: 'in_progress', assignee: 'ralph-hostB-w1', lease_expires_at: new Date(Date.now() + 240_000).toISOString() },
    ]);
    const source = createBeadsSource(server.clone(undefined).ctx);
    expect(await source.check()).toEqual([]);
    expect(await source.recover()).toEqual(['ws-ep.5 "Left by a one-machine run" was left in_progress by an interrupted run; put back to open']);
    expect(server.issues().find((issue) => issue.id === 'ws-ep.6')).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostB-w1' });
  });

  it('--remote: the end of a run gives back this host\'s claims, guarded by bd\'s compare-and-set claim', async () => {
    const server = sharedServer('main');
    const project = server.clone('hostA');
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    const task = (await source.snapshot()).ready[0]!;
    await source.claim?.(task, info(1));
    expect(await source.release?.()).toEqual([`gave back the bead this run still held in beads: ${task.id} (ralph-hostA-w1); open again for the next run`]);
    expect(project.calls).toContainEqual(['update', task.id, '--claim', '--actor', 'ralph-hostA-w1', '--status', 'open', '--assignee', '']);
    expect(server.issues().find((issue) => issue.id === task.id)).toMatchObject({ status: 'open' });
  });
});
