// The fake bd's claims and its server mode: what ralph's --remote relies on, as real bd does it
// (../shared/recordings/bd, "Server mode" and the claims of bd-0.50.3.md and bd-1.0.5.md).
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FAKE_BD, fakeBdEnv, seedBeads, type FakeBdVersion } from '../fakes/bd-seed.ts';
import { tempDir } from '../support/temp.ts';

let dir: string;
let servers: string;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function bd(cwd: string, args: string[], env: Record<string, string | undefined> = {}): Run & { json: () => any } {
  const r = spawnSync(FAKE_BD, [...args, '--json'], { cwd, env: fakeBdEnv({ FAKE_BD_SERVERS: servers, ...env }), encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}

/** The same call, started at once in each clone; every answer. */
function race(cwds: string[], args: (cwd: string, index: number) => string[]): Promise<Run[]> {
  return Promise.all(
    cwds.map(
      (cwd, index) =>
        new Promise<Run>((resolve) => {
          const child = spawn(FAKE_BD, [...args(cwd, index), '--json'], { cwd, env: fakeBdEnv({ FAKE_BD_SERVERS: servers }) });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (status) => resolve({ status, stdout, stderr }));
        }),
    ),
  );
}

/** A clone whose .beads/metadata.json names the server 127.0.0.1:<port> and database `ws`. */
function clone(name: string, port = 3307): string {
  const root = path.join(dir, name);
  fs.mkdirSync(path.join(root, '.beads'), { recursive: true });
  fs.writeFileSync(path.join(root, '.beads', 'metadata.json'), JSON.stringify({ database: 'dolt', backend: 'dolt', dolt_mode: 'server', dolt_server_host: '127.0.0.1', dolt_server_port: port, dolt_database: 'ws' }));
  return root;
}

beforeEach(() => {
  dir = tempDir('fake-bd-claims-');
  servers = path.join(dir, 'servers');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each(['0.50', '1.x'] as FakeBdVersion[])('fake bd %s: claims', (version) => {
  beforeEach(() => {
    seedBeads(dir, { issues: [{ id: 't-a', title: 'A' }, { id: 't-b', title: 'B', status: 'in_progress', assignee: 'w1', updated_at: '2025-02-01T00:00:00.000Z' }] });
  });
  const run = (args: string[]) => bd(dir, args, { FAKE_BD_VERSION: version });

  it('the same actor again: 1.x succeeds and changes nothing, not even updated_at; 0.50 refuses (recorded)', () => {
    const again = run(['update', 't-b', '--claim', '--actor', 'w1']);
    if (version === '0.50') expect([again.status, again.stdout, again.stderr]).toEqual([0, '', 'Error claiming t-b: issue already claimed by w1\n']);
    else expect(again.json()[0]).toMatchObject({ status: 'in_progress', assignee: 'w1', updated_at: '2025-02-01T00:00:00.000Z' });
  });

  it('a refused claim skips the other updates of the call; a granted one applies them', () => {
    const refused = run(['update', 't-b', '--claim', '--actor', 'w2', '--status', 'open', '--assignee', '']);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe('Error claiming t-b: issue already claimed by w1\n');
    expect(run(['show', 't-b']).json()[0]).toMatchObject({ status: 'in_progress', assignee: 'w1' });
    const granted = run(['update', 't-a', '--claim', '--actor', 'w2', '--set-metadata', 'ralph_renewed_at=2025-03-01T00:00:00Z']);
    expect(granted.json()[0]).toMatchObject({ status: 'in_progress', assignee: 'w2', metadata: { ralph_renewed_at: '2025-03-01T00:00:00Z' } });
  });

  it('--set-metadata keeps types, stamps updated_at, and refuses a key real bd refuses', () => {
    const set = run(['update', 't-b', '--set-metadata', 'n=3', '--set-metadata', 'ok=true', '--set-metadata', 'note=x y']).json()[0];
    expect(set.metadata).toEqual({ n: 3, ok: true, note: 'x y' });
    expect(Date.parse(set.updated_at)).toBeGreaterThan(Date.parse('2025-02-01T00:00:00.000Z'));
    expect(run(['update', 't-b', '--unset-metadata', 'n']).json()[0].metadata).toEqual({ ok: true, note: 'x y' });
    const bad = run(['update', 't-b', '--set-metadata', 'bad-key=1']);
    expect(bad.status).toBe(1);
    expect(bad.json().error).toBe('invalid metadata key "bad-key": must match [a-zA-Z_][a-zA-Z0-9_.]*');
  });
});

describe('fake bd: server mode', () => {
  it('bd init --server makes the database on the server and writes metadata.json; other clones then share it', () => {
    fs.mkdirSync(path.join(servers, '127.0.0.1_3307'), { recursive: true });
    const first = path.join(dir, 'hostA');
    fs.mkdirSync(first);
    expect(bd(first, ['init', '--server', '--server-host', '127.0.0.1', '--server-port', '3307', '--prefix', 'my-ws']).status).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(first, '.beads', 'metadata.json'), 'utf8'))).toMatchObject({ dolt_mode: 'server', dolt_server_host: '127.0.0.1', dolt_server_port: 3307, dolt_database: 'my_ws' });
    expect(fs.existsSync(path.join(first, '.beads', 'fake-db.json'))).toBe(false);
    const second = path.join(dir, 'hostB');
    fs.mkdirSync(path.join(second, '.beads'), { recursive: true });
    fs.copyFileSync(path.join(first, '.beads', 'metadata.json'), path.join(second, '.beads', 'metadata.json'));
    const created = bd(first, ['create', 'Shared', '-d', 'x']).json();
    expect(bd(second, ['show', created.id]).json()[0]).toMatchObject({ id: created.id, title: 'Shared' });
  });

  it('a server nobody started, or a database it does not hold, is refused; an embedded clone keeps its own database', () => {
    const a = clone('hostA');
    const down = bd(a, ['ready']);
    expect([down.status, down.stdout]).toEqual([1, '']);
    expect(down.stderr).toBe('Error: failed to open database: dial tcp 127.0.0.1:3307: connect: connection refused\n');
    fs.mkdirSync(path.join(servers, '127.0.0.1_3307'), { recursive: true });
    expect(bd(a, ['ready']).stderr).toMatch(/database "ws" not found on the dolt server at 127\.0\.0\.1:3307/);
    seedBeads(path.join(dir, 'embedded'), { issues: [{ id: 'e-1', title: 'Own' }] });
    expect(bd(path.join(dir, 'embedded'), ['ready']).json().map((issue: { id: string }) => issue.id)).toEqual(['e-1']);
  });

  it('BEADS_DOLT_SERVER_* override metadata.json, as real bd', () => {
    fs.mkdirSync(path.join(servers, '127.0.0.1_3307'), { recursive: true });
    const maker = path.join(dir, 'maker');
    fs.mkdirSync(maker);
    bd(maker, ['init', '--server', '--server-port', '3307', '--database', 'other', '--prefix', 'o']);
    bd(maker, ['create', 'Other', '-d', 'x']);
    const a = clone('hostA', 4000);
    expect(bd(a, ['ready'], { BEADS_DOLT_SERVER_PORT: '3307', BEADS_DOLT_SERVER_DATABASE: 'other' }).json()[0].title).toBe('Other');
  });

  it('two clones race to claim one bead: exactly one wins; the loser exits 1, nothing on stdout, one line on stderr', async () => {
    fs.mkdirSync(path.join(servers, '127.0.0.1_3307', 'ws'), { recursive: true });
    seedBeads(path.join(dir, 'seed'), { issues: [{ id: 'ws-1', title: 'Contested' }] });
    fs.copyFileSync(path.join(dir, 'seed', '.beads', 'fake-db.json'), path.join(servers, '127.0.0.1_3307', 'ws', 'fake-db.json'));
    const hosts = ['hostA', 'hostB', 'hostC', 'hostD'].map((name) => clone(name));
    for (let trial = 0; trial < 3; trial++) {
      if (trial > 0) bd(hosts[0]!, ['update', 'ws-1', '--status', 'open', '--assignee', '']);
      const answers = await race(hosts, (_cwd, index) => ['update', 'ws-1', '--claim', '--actor', `host${index}`]);
      const winners = answers.filter((answer) => answer.status === 0);
      expect(winners).toHaveLength(1);
      const holder = JSON.parse(winners[0]!.stdout)[0].assignee as string;
      for (const loser of answers.filter((answer) => answer.status !== 0)) {
        expect([loser.status, loser.stdout, loser.stderr]).toEqual([1, '', `Error claiming ws-1: issue already claimed by ${holder}\n`]);
      }
      expect(bd(hosts[3]!, ['show', 'ws-1']).json()[0].assignee).toBe(holder);
    }
  });
});
