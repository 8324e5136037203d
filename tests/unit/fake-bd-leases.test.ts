// The fake bd playing beads 1.2.2 and the lease line (beads' main, 1.3.0) as recorded in
// ../shared/recordings/bd/bd-1.2-and-main-leases.md: leases, heartbeat, reclaim, who may close, `bd human`,
// comments, the actor's variables and what a migrated database refuses. A double that accepts what the real
// tool refuses hides ralph's bugs, so the refusals are checked word for word where they were recorded.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FAKE_BD, fakeBdClient, serverEnv, FAKE_BD_VERSIONS, fakeBdEnv, readBeads, seedBeads, type FakeBdVersion } from '../fakes/bd-seed.ts';
import { tempDir } from '../support/temp.ts';

let dir: string;
const T0 = '2026-11-27T20:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

function bd(version: FakeBdVersion, args: string[], env: Record<string, string | undefined> = {}, cwd = dir) {
  const r = spawnSync(fakeBdClient(), args, { cwd, env: fakeBdEnv({ ...serverEnv(), FAKE_BD_VERSION: version, FAKE_BD_NOW: T0, ...env }), encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}
const issue = (id: string) => readBeads(dir).issues.find((item) => item.id === id) as unknown as Record<string, unknown>;

beforeEach(() => {
  dir = tempDir('fake-bd-leases-');
  seedBeads(dir, {
    prefix: 'M',
    issues: [
      { id: 'M-e', title: 'Feature: demo', issue_type: 'epic' },
      { id: 'M-e.1', title: 't1', parent: 'M-e' },
      { id: 'M-e.2', title: 't2', parent: 'M-e' },
      { id: 'M-q', title: 'Q: which DB?', labels: ['human'] },
    ],
  });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('fake bd main (the lease line)', () => {
  it('a claim carries a 5-minute lease; another actor is refused; the holder again changes nothing; --set-metadata does not renew', () => {
    const claim = bd('main', ['update', 'M-e.1', '--claim', '--json'], { BEADS_ACTOR: 'alice' }).json()[0];
    expect(claim).toMatchObject({ status: 'in_progress', assignee: 'alice', lease_expires_at: at(5), heartbeat_at: T0 });
    const other = bd('main', ['update', 'M-e.1', '--claim', '--json'], { BEADS_ACTOR: 'bob' });
    expect([other.status, other.stdout]).toEqual([1, '']);
    expect(other.stderr).toBe('Error updating M-e.1: issue already claimed by alice\n{"error":"1 of 1 issues failed to update","failed":[{"id":"M-e.1","error":"updating issue: issue already claimed by alice"}],"schema_version":1}\n');
    expect(bd('main', ['update', 'M-e.1', '--claim', '--json'], { BEADS_ACTOR: 'alice', FAKE_BD_NOW: at(2) }).json()[0].lease_expires_at).toBe(at(5));
    bd('main', ['update', 'M-e.1', '--set-metadata', 'ralph_renewed_at=x', '--json'], { BEADS_ACTOR: 'alice', FAKE_BD_NOW: at(3) });
    expect(issue('M-e.1')).toMatchObject({ lease_expires_at: at(5), metadata: { ralph_renewed_at: 'x' } });
  });

  it('bd heartbeat renews the holder\'s lease only (recorded answers)', () => {
    bd('main', ['update', 'M-e.1', '--claim'], { BEADS_ACTOR: 'alice' });
    const stranger = bd('main', ['heartbeat', 'M-e.1', '--json'], { BEADS_ACTOR: 'bob', FAKE_BD_NOW: at(1) });
    expect([stranger.status, stranger.json()]).toEqual([1, { error: 'heartbeat M-e.1: issue already claimed by alice', schema_version: 1 }]);
    const beat = bd('main', ['heartbeat', 'M-e.1', '--json'], { BEADS_ACTOR: 'alice', FAKE_BD_NOW: at(1) });
    expect([beat.status, beat.json()]).toEqual([0, { id: 'M-e.1', owner: 'alice', schema_version: 1, status: 'heartbeat' }]);
    expect(issue('M-e.1')).toMatchObject({ lease_expires_at: at(6), heartbeat_at: at(1) });
  });

  it('an expired claim stays in_progress and assigned, out of bd ready, refused to others; only bd reclaim frees it, scoped as asked', () => {
    bd('main', ['update', 'M-e.1', '--claim'], { BEADS_ACTOR: 'alice' });
    const later = { FAKE_BD_NOW: at(6), BEADS_ACTOR: 'bob' };
    expect(bd('main', ['ready', '--parent', 'M-e', '--json'], later).json().map((item: { id: string }) => item.id)).toEqual(['M-e.2']);
    expect(bd('main', ['update', 'M-e.1', '--claim', '--json'], later).status).toBe(1);
    // The default grace is twice the lease: nothing yet.
    expect(bd('main', ['reclaim', '--json'], later).json()).toEqual({ count: 0, reclaimed: null, schema_version: 1, scoped: false });
    expect(bd('main', ['reclaim', '--older-than', '0s', '--assignee', 'carol', '--json'], later).json()).toEqual({ count: 0, reclaimed: null, schema_version: 1, scoped: true });
    expect(bd('main', ['reclaim', '--older-than', '0s', '--assignee', 'alice', '--id', 'M-e.1', '--json'], later).json()).toEqual({ count: 1, reclaimed: [{ id: 'M-e.1', previous_owner: 'alice' }], schema_version: 1, scoped: true });
    expect(bd('main', ['show', 'M-e.1', '--json']).json()[0]).toMatchObject({ status: 'open' });
    expect(bd('main', ['show', 'M-e.1', '--json']).json()[0]).not.toHaveProperty('assignee');
    const late = bd('main', ['heartbeat', 'M-e.1', '--json'], { BEADS_ACTOR: 'alice', FAKE_BD_NOW: at(7) });
    expect([late.status, late.json().error]).toEqual([1, 'heartbeat M-e.1: issue not claimable: M-e.1 status open']);
    // A live lease is never reclaimed, whatever --older-than says.
    bd('main', ['update', 'M-e.2', '--claim'], { BEADS_ACTOR: 'alice' });
    expect(bd('main', ['reclaim', '--older-than', '0s', '--json'], { FAKE_BD_NOW: at(1) }).json().count).toBe(0);
    expect(bd('main', ['reclaim', '--assignee', '', '--json']).status).toBe(1);
  });

  it('only the assignee closes or re-statuses an in_progress bead (recorded close refusal); --force overrides', () => {
    bd('main', ['update', 'M-e.1', '--claim'], { BEADS_ACTOR: 'ralph-w3' });
    const close = bd('main', ['close', 'M-e.1', '--json'], { BEADS_ACTOR: 'dev' });
    expect([close.status, close.stdout, close.stderr]).toEqual([1, '', 'cannot close M-e.1: assignee is "ralph-w3", actor is "dev"; reclaim or use --force to override\n']);
    expect(bd('main', ['update', 'M-e.1', '--status', 'open', '--assignee', '', '--json'], { BEADS_ACTOR: 'dev' }).status).toBe(1);
    expect(issue('M-e.1')).toMatchObject({ status: 'in_progress', assignee: 'ralph-w3' });
    // The holder gives it back (status, assignee and lease go), or an --actor naming it.
    expect(bd('main', ['update', 'M-e.1', '--status', 'open', '--assignee', '', '--actor', 'ralph-w3', '--json']).json()[0]).toMatchObject({ status: 'open' });
    expect(issue('M-e.1').lease_expires_at).toBeUndefined();
    bd('main', ['update', 'M-e.1', '--claim'], { BEADS_ACTOR: 'ralph-w3' });
    expect(bd('main', ['close', 'M-e.1', '--json'], { BD_ACTOR: 'ralph-w3' }).status).toBe(0);
    bd('main', ['update', 'M-e.2', '--claim'], { BEADS_ACTOR: 'ralph-w1' });
    expect(bd('main', ['close', 'M-e.2', '--force', '--json'], { BEADS_ACTOR: 'dev' }).status).toBe(0);
  });

  it('BEADS_ACTOR wins over BD_ACTOR; 0.50 knows only BD_ACTOR', () => {
    expect(bd('main', ['update', 'M-e.1', '--claim', '--json'], { BEADS_ACTOR: 'new', BD_ACTOR: 'old' }).json()[0].assignee).toBe('new');
    expect(bd('0.50', ['update', 'M-e.2', '--claim', '--json'], { BEADS_ACTOR: 'new', BD_ACTOR: 'old' }).json()[0].assignee).toBe('old');
  });

  it('bd human respond answers with a comment and closes the question (recorded)', () => {
    const respond = bd('main', ['human', 'respond', 'M-q', '--response', 'Use sqlite.', '--json'], { BEADS_ACTOR: 'human-carol' });
    expect([respond.status, respond.stdout]).toEqual([0, '✔ Bead M-q closed with response.\n']);
    expect(bd('main', ['show', 'M-q', '--json']).json()[0]).toMatchObject({ status: 'closed', close_reason: 'Responded' });
    expect(bd('main', ['comments', 'M-q', '--json']).json()).toEqual([expect.objectContaining({ author: 'human-carol', text: 'Response: Use sqlite.' })]);
  });
});

describe('fake bd 1.2 (1.2.2: no leases)', () => {
  it('claims never expire and anyone may close; heartbeat, reclaim and migrate are unknown commands (recorded)', () => {
    bd('1.2', ['update', 'M-e.1', '--claim'], { BD_ACTOR: 'alice' });
    expect(issue('M-e.1').lease_expires_at).toBeUndefined();
    for (const command of ['heartbeat', 'reclaim']) {
      const refused = bd('1.2', [command, 'M-e.1']);
      expect([refused.status, refused.stdout, refused.stderr]).toEqual([1, '', `Error: unknown command "${command}" for "bd"\nRun 'bd --help' for usage.\n`]);
    }
    expect(bd('1.2', ['update', 'M-e.1', '--claim', '--json'], { BD_ACTOR: 'bob', FAKE_BD_NOW: at(60) }).stderr).toBe('Error claiming M-e.1: issue already claimed by alice\n');
    expect(bd('1.2', ['close', 'M-e.1', '--reason', 'closed by B', '--json'], { BD_ACTOR: 'bob' }).json()[0]).toMatchObject({ status: 'closed', assignee: 'alice' });
  });

  it('bd human respond fails with "storage is nil"; the documented way by hand works (recorded)', () => {
    const respond = bd('1.2', ['human', 'respond', 'M-q', '--response', 'Use sqlite.', '--json']);
    expect([respond.status, respond.json()]).toEqual([1, { error: 'resolving issue ID M-q: cannot resolve issue ID "M-q": storage is nil', schema_version: 1 }]);
    expect(bd('1.2', ['comments', 'add', 'M-q', 'Use sqlite.', '--json'], { BD_ACTOR: 'human-carol' }).json()).toMatchObject({ issue_id: 'M-q', author: 'human-carol', text: 'Use sqlite.' });
    expect(bd('1.2', ['close', 'M-q', '--reason', 'Responded', '--json']).json()[0]).toMatchObject({ status: 'closed', close_reason: 'Responded' });
    expect(bd('1.2', ['human', 'list', '--json']).json()).toEqual([expect.objectContaining({ id: 'M-q', status: 'closed' })]);
  });
});

describe.each(FAKE_BD_VERSIONS)('fake bd %s: what --help lists, what ready offers', (version) => {
  it('lists heartbeat and reclaim on the lease line only, human from 1.2 on', () => {
    const help = bd(version, ['--help']).stdout;
    expect(/^ {2}heartbeat {2,}/m.test(help)).toBe(version === 'main');
    expect(/^ {2}reclaim {2,}/m.test(help)).toBe(version === 'main');
    expect(/^ {2}human {2,}/m.test(help)).toBe(version === '1.2' || version === 'main');
  });

  it('bd ready without --parent offers the epic itself and open human questions (recorded on 1.2 and main)', () => {
    const ids = bd(version, ['ready', '--json']).json().map((item: { id: string }) => item.id);
    expect(ids).toEqual(expect.arrayContaining(['M-e', 'M-q', 'M-e.1']));
    const labelled = bd(version, ['ready', '--json']).json().find((item: { id: string }) => item.id === 'M-q');
    expect(labelled.labels).toEqual(['human']);
  });
});

describe('fake bd: a database a newer bd migrated', () => {
  it('main migrates an embedded database on first open; 1.2 then reads it but cannot write', () => {
    bd('1.2', ['update', 'M-e.1', '--status', 'in_progress']);
    expect(readBeads(dir)).toMatchObject({ schema: 53 });
    bd('main', ['show', 'M-e.1']);
    expect(readBeads(dir)).toMatchObject({ schema: 66 });
    expect(bd('1.2', ['show', 'M-e.1', '--json']).status).toBe(0);
    const write = bd('1.2', ['update', 'M-e.1', '--status', 'open', '--json']);
    expect([write.status, write.stdout, write.stderr]).toEqual([1, '', 'Error: schema version mismatch: database is at v66, binary knows up to v53\n']);
  });

  it('1.0.5 after 1.2.2: reads work, a write fails as recorded', () => {
    bd('1.2', ['show', 'M-e.1']);
    const write = bd('1.x', ['create', 'made by 1.0.5 after 1.2.2', '--json']);
    expect([write.status, write.stdout]).toEqual([1, '']);
    expect(JSON.parse(write.stderr)).toEqual({ error: "failed to record event for the new issue: record event in events: Error 1105: Field 'id' doesn't have a default value", schema_version: 1 });
    expect(bd('1.x', ['list', '--json']).status).toBe(0);
  });

  it('main leaves a shared server\'s older database to bd migrate schema: reads work, writes wait', () => {
    const servers = path.join(dir, 'servers');
    const db = path.join(servers, '127.0.0.1_3307', 'ws');
    fs.mkdirSync(db, { recursive: true });
    fs.copyFileSync(path.join(dir, '.beads', 'fake-db.json'), path.join(db, 'fake-db.json'));
    const clone = path.join(dir, 'clone');
    fs.mkdirSync(path.join(clone, '.beads'), { recursive: true });
    fs.writeFileSync(path.join(clone, '.beads', 'metadata.json'), JSON.stringify({ dolt_mode: 'server', dolt_server_port: 3307, dolt_database: 'ws' }));
    const env = { FAKE_BD_SERVERS: servers };
    bd('1.2', ['show', 'M-e.1'], env, clone);
    expect(bd('main', ['show', 'M-e.1', '--json'], env, clone).status).toBe(0);
    const write = bd('main', ['update', 'M-e.1', '--claim', '--json'], env, clone);
    expect([write.status, write.stderr]).toEqual([1, "Error: database schema is v53, this bd needs v66: a shared server is migrated only with consent: run 'bd migrate schema' once every client is upgraded (or set BD_ALLOW_REMOTE_MIGRATE=1)\n"]);
    expect(bd('main', ['migrate', 'schema'], env, clone).status).toBe(0);
    expect(bd('main', ['update', 'M-e.1', '--claim', '--json'], env, clone).status).toBe(0);
  });
});
