// --remote in beads mode: which setups share one database, whose claims a host names as its own, and what
// a host puts back when it starts (only its own claims).
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { parseBdVersion } from '../../../../lib/sources/beads/bd.ts';
import { createBeadsSource } from '../../../../lib/sources/beads/source.ts';
import { beadsDirOf, loopbackWarning, olderThan, readBeadsSetup, remoteStateOf } from '../../../../lib/sources/beads/remote.ts';
import { parseActor, workerActor, workerPrompt } from '../../../../lib/sources/beads/workers.ts';
import { tempDir } from '../../../support/temp.ts';
import { projectAt } from './bd-helpers.ts';
import { sharedServer } from './bd-hosts.ts';
import { seedBeads } from '../../../fakes/bd-seed.ts';

function beadsDir(meta?: object): string {
  const dir = path.join(tempDir('ralph-setup-'), '.beads');
  fs.mkdirSync(dir);
  if (meta) fs.writeFileSync(path.join(dir, 'metadata.json'), JSON.stringify(meta));
  return dir;
}

const SERVER = { database: 'dolt', backend: 'dolt', dolt_mode: 'server', dolt_server_host: '10.0.0.5', dolt_server_port: 3307, dolt_database: 'ws' };

describe('remoteState: a database every host shares, or one line saying what is missing', () => {
  it('beads 1.x in server mode (metadata.json, or BEADS_DOLT_SERVER_MODE=1 as bd reads it) shares one database', () => {
    expect(readBeadsSetup(beadsDir(SERVER), {})).toEqual({ kind: 'server', host: '10.0.0.5', port: 3307, database: 'ws' });
    expect(remoteStateOf(readBeadsSetup(beadsDir(SERVER), {}), '1.0.5')).toBe('database');
    expect(remoteStateOf(readBeadsSetup(beadsDir({ dolt_mode: 'Server' }), {}))).toBe('database');
    const fromEnv = readBeadsSetup(beadsDir({ dolt_mode: 'embedded' }), { BEADS_DOLT_SERVER_MODE: '1', BEADS_DOLT_SERVER_HOST: 'db.lan', BEADS_DOLT_SERVER_PORT: '4000' });
    expect(fromEnv).toEqual({ kind: 'server', host: 'db.lan', port: 4000, database: 'beads' });
  });

  it.each([
    ['embedded 1.x', { database: 'dolt', backend: 'dolt', dolt_mode: 'embedded' }, undefined, /\.beads\/ here is dolt_mode "embedded", this clone's own$/],
    ['no metadata.json (bd defaults to embedded)', undefined, undefined, /\.beads\/ here is an embedded database \(no dolt_mode in \.beads\/metadata\.json\), this clone's own$/],
    ['0.5x SQLite', { database: 'beads.db', backend: 'sqlite' }, undefined, /\.beads\/ here is beads 0\.5x SQLite, a file on this machine only/],
    ['a server, but bd 0.50.3', SERVER, '0.50.3', /bd here is 0\.50\.3, whose claims cannot be renewed or taken over safely/],
    ['a server, but bd 1.0.3 (no compare-and-set on status)', SERVER, '1.0.3', /bd here is 1\.0\.3/],
  ])('%s: refused', (_name, meta, version, why) => {
    const state = remoteStateOf(readBeadsSetup(beadsDir(meta), {}), version);
    expect(state).toEqual({ problem: expect.stringMatching(why) });
    const problem = (state as { problem: string }).problem;
    expect(problem).toMatch(/^--remote with beads needs a bd database every host shares: beads 1\.0\.4 or later in server mode \(bd init --server …; README "Beads on several machines"\); /);
    expect(problem).not.toContain('\n');
  });

  it('an unreadable metadata.json is named', () => {
    const dir = beadsDir();
    fs.writeFileSync(path.join(dir, 'metadata.json'), '{ not json');
    expect(remoteStateOf(readBeadsSetup(dir, {}))).toEqual({ problem: expect.stringContaining(`cannot read ${path.join(dir, 'metadata.json')}`) });
  });

  it('versions: bd version --json or its text line; older-than by number, not by text', () => {
    expect(parseBdVersion('{"version": "1.0.5", "build": "x"}')).toBe('1.0.5');
    expect(parseBdVersion('bd version 0.50.3 (dev: abc)\n')).toBe('0.50.3');
    expect(parseBdVersion('garbage')).toBeUndefined();
    expect([olderThan('1.0.3', '1.0.4'), olderThan('1.0.10', '1.0.4'), olderThan('1.1', '1.0.4'), olderThan('0.63.3', '1.0.4'), olderThan('1.0.4', '1.0.4')]).toEqual([true, false, false, true, false]);
  });

  it('BEADS_DIR names the .beads/ bd uses; a loopback server gets a warning (every host needs the same server)', () => {
    expect(beadsDirOf('/repo', { BEADS_DIR: 'elsewhere/.beads' })).toBe('/repo/elsewhere/.beads');
    expect(loopbackWarning({ kind: 'server', host: '127.0.0.1', port: 3307, database: 'ws' })).toMatch(/^bd's dolt server is 127\.0\.0\.1:3307/);
    expect(loopbackWarning({ kind: 'server', host: '10.0.0.5', port: 3307, database: 'ws' })).toBeUndefined();
  });

  it('the source asks bd its version in check() with --remote, so a 0.50 bd on a server is refused', async () => {
    for (const [version, expected] of [['1.x', 'database'], ['0.50', { problem: expect.stringContaining('bd here is 0.50.3') }]] as const) {
      const server = sharedServer(version);
      const host = server.clone('hostA-1f3c');
      const source = createBeadsSource(host.ctx);
      expect(await source.check()).toEqual([]);
      expect(source.remoteState?.()).toEqual(expected);
      expect(host.calls[0]).toEqual(['version']);
      expect(host.ctx.warnings).toEqual([expect.stringMatching(/^bd's dolt server is 127\.0\.0\.1:3307/)]);
    }
  });
});

describe('claim actors carry the host', () => {
  it('ralph-wN on one machine, ralph-<host>-wN with --remote; read back either way, people are nobody\'s worker', () => {
    expect(workerActor(2)).toBe('ralph-w2');
    expect(workerActor(2, 'hostA-1f3c')).toBe('ralph-hostA-1f3c-w2');
    expect(parseActor('ralph-hostA-1f3c-w2')).toEqual({ host: 'hostA-1f3c', worker: 2 });
    expect(parseActor('ralph-w12')).toEqual({ worker: 12 });
    expect([parseActor('alice'), parseActor('ralph'), parseActor('ralph-hostA'), parseActor(undefined)]).toEqual([undefined, undefined, undefined, undefined]);
    expect(workerPrompt('/sp:next', { id: 'ws-1', title: 'T', status: 'open' }, 1, 'hostA')).toContain('(assignee ralph-hostA-w1)');
  });

  it('with --remote even a single agent works under worker 1\'s name: claimed for it, and the prompt names the bead', async () => {
    const server = sharedServer('1.x');
    const host = server.clone('hostA');
    const source = createBeadsSource(host.ctx);
    expect(await source.check()).toEqual([]);
    const task = (await source.snapshot()).ready[0]!;
    const info = { iteration: 1, maxIterations: 9, sessionId: 's' };
    await source.claim?.(task, info);
    expect(server.issues().find((issue) => issue.id === task.id)).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostA-w1' });
    expect(await source.prompt(task, info)).toMatch(/^\/sp:next ws-ep\.2\n\nWork on bead ws-ep\.2 "Task A" only: ralph claimed it for you \(assignee ralph-hostA-w1\)/);
    await source.settle?.({} as never, info);
  });
});

describe('a clean ending on one host of several', () => {
  it('abandon(): the worker\'s own claimed bead goes back to open and unassigned; another worker\'s stays claimed', async () => {
    const server = sharedServer('1.x', [{ id: 'ws-ep.5', title: 'Task D' }]);
    const host = server.clone('hostA');
    const source = createBeadsSource(host.ctx);
    expect(await source.check()).toEqual([]);
    const [first, second] = (await source.snapshot()).ready;
    const one = { iteration: 1, maxIterations: 9, sessionId: 's', worker: 1 };
    const two = { iteration: 2, maxIterations: 9, sessionId: 's', worker: 2 };
    await source.claim?.(first!, one);
    expect(second).toBeDefined();
    await source.claim?.(second!, two);
    expect(await source.abandon!(first!, one, 'interrupted by SIGTERM')).toBe(`${first!.id} "${first!.title}" was left in_progress by iteration 1, which did not finish (interrupted by SIGTERM); put back to open`);
    const byId = new Map(server.issues().map((issue) => [issue.id, issue]));
    expect([byId.get(first!.id)?.status, byId.get(first!.id)?.assignee]).toEqual(['open', undefined]);
    expect(byId.get(second!.id)).toMatchObject({ status: 'in_progress', assignee: 'ralph-hostA-w2' });
  });
});

describe('recovery at start puts back only this host\'s claims', () => {
  const held = [
    { id: 'ws-ep.5', title: 'Mine', status: 'in_progress' as const, assignee: 'ralph-hostA-w1' },
    { id: 'ws-ep.6', title: 'Another host\'s', status: 'in_progress' as const, assignee: 'ralph-hostB-w1' },
    { id: 'ws-ep.7', title: 'A person\'s', status: 'in_progress' as const, assignee: 'alice' },
    { id: 'ws-ep.8', title: 'A one-machine run\'s', status: 'in_progress' as const, assignee: 'ralph-w1' },
    { id: 'ws-ep.9', title: 'Mine, worker 2', status: 'in_progress' as const, assignee: 'ralph-hostA-w2' },
  ];

  it('--remote: this host\'s beads back to open and unassigned, everyone else\'s untouched', async () => {
    const server = sharedServer('1.x', held);
    const host = server.clone('hostA');
    const source = createBeadsSource(host.ctx);
    expect(await source.check()).toEqual([]);
    expect((await source.recover()).sort()).toEqual([
      'ws-ep.5 "Mine" was left in_progress by an interrupted run; put back to open',
      'ws-ep.9 "Mine, worker 2" was left in_progress by an interrupted run; put back to open',
    ]);
    const byId = new Map(server.issues().map((issue) => [issue.id, issue]));
    expect([byId.get('ws-ep.5'), byId.get('ws-ep.9')].map((issue) => [issue?.status, issue?.assignee])).toEqual([['open', undefined], ['open', undefined]]);
    for (const id of ['ws-ep.6', 'ws-ep.7', 'ws-ep.8']) expect(byId.get(id)?.status).toBe('in_progress');
    expect(byId.get('ws-ep.6')?.assignee).toBe('ralph-hostB-w1');
  });

  it('one machine: every in_progress bead back to open as before; a ralph worker\'s name is dropped, a person\'s kept', async () => {
    const root = tempDir('ralph-one-');
    seedBeads(root, { prefix: 'ws', issues: [{ id: 'ws-ep', title: 'Feature: demo', issue_type: 'epic' }, { id: 'ws-ep.1', title: '[sp:02-clarify] Clarify', status: 'closed' }, ...held] });
    const project = projectAt(root, '1.x');
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    expect(await source.recover()).toHaveLength(5);
    const after = project.other('list', '--all', '--limit', '0') as Array<{ id: string; status: string; assignee?: string }>;
    expect(after.filter((issue) => issue.status === 'in_progress')).toEqual([]);
    expect(after.filter((issue) => issue.assignee).map((issue) => [issue.id, issue.assignee])).toEqual([['ws-ep.7', 'alice']]);
  });
});
