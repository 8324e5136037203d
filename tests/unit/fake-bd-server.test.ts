// The fake bd through its server (tests/fakes/bd-server.mjs + bd-client.bash) answers exactly what
// `node tests/fakes/bd` answers, leaves nothing behind, and falls back to node when it must.
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FAKE_BD, FAKE_BD_DIR, fakeBdEnv, readBdLog, readBeads, seedBeads, type SeedDb } from '../fakes/bd-seed.ts';
import { startBdServer, writeSandboxBd, type BdServer } from '../support/bd-server.ts';

let server: BdServer;
let dir: string;
let tmp: string;
let bin: string;

beforeAll(async () => {
  server = await startBdServer({ ...process.env });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-bd-server-'));
  tmp = path.join(dir, 'tmp');
  bin = path.join(dir, 'bin');
  fs.mkdirSync(tmp);
  fs.mkdirSync(bin);
  writeSandboxBd(bin);
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** One call of the sandbox `bd` (through the server unless told otherwise), in `cwd`. */
function viaClient(args: string[], cwd: string, env: Record<string, string | undefined> = {}, address: string | undefined = server.address): Answer {
  const result = spawnSync(path.join(bin, 'bd'), args, { cwd, env: fakeBdEnv({ TMPDIR: tmp, FAKE_BD_SERVER: address, FAKE_BD_NOW: '2026-01-02T03:04:05.000Z', ...env }), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function viaNode(args: string[], cwd: string, env: Record<string, string | undefined> = {}): Answer {
  const result = spawnSync(FAKE_BD, args, { cwd, env: fakeBdEnv({ TMPDIR: tmp, FAKE_BD_NOW: '2026-01-02T03:04:05.000Z', ...env }), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const SEED: SeedDb = {
  prefix: 'ws',
  issues: [
    { id: 'ws-ep', title: 'Epic', issue_type: 'epic', priority: 1 },
    { id: 'ws-ep.1', title: 'First — “quoted” ünïcode', parent: 'ws-ep', priority: 2 },
    { id: 'ws-ep.2', title: 'Second', parent: 'ws-ep', priority: 2, dependencies: ['ws-ep.1'] },
  ],
};

/** Two copies of one repo: the same calls go to each by one way, and must answer and end the same. */
function twins(): { client: string; node: string } {
  const client = path.join(dir, 'client', 'repo');
  const node = path.join(dir, 'node', 'repo');
  for (const root of [client, node]) {
    fs.mkdirSync(path.join(root, 'src'), { recursive: true });
    seedBeads(root, SEED);
  }
  return { client, node };
}

const CALLS: Array<{ args: string[]; env?: Record<string, string>; sub?: boolean }> = [
  { args: ['list', '--parent', 'ws-ep', '--all', '--limit', '0', '--json'] },
  { args: ['ready', '--parent', 'ws-ep', '--limit', '0', '--exclude-type', 'epic', '--json'] },
  { args: ['ready', '--parent', 'ws-ep', '--limit', '0', '--exclude-type', 'epic', '--json'], env: { FAKE_BD_VERSION: '0.50' } },
  { args: ['show', 'ws-ep.2', '--json'], sub: true },
  { args: ['show', 'MISSING', '--json'] },
  { args: ['update', 'ws-ep.1', '--claim', '--json'], env: { BD_ACTOR: 'w1' } },
  { args: ['close', 'ws-ep.1', '--reason', 'done', '--json'] },
  { args: ['ready', '--json'], env: { BD_JSON_ENVELOPE: '1' } },
  { args: ['create', 'A new one', '--parent', 'ws-ep', '--json'] },
  { args: ['close', 'ws-ep', '--json'] },
  { args: ['list', '--json'], env: { FAKE_BD_GARBAGE: 'list' } },
  { args: ['ready', '--json'], env: { FAKE_BD_FAIL: 'ready' } },
  { args: ['frobnicate'] },
  { args: ['--version'] },
  { args: ['version'], env: { FAKE_BD_VERSION: '2.0' } },
];

describe('the fake bd through its server', () => {
  it('answers every kind of call byte for byte as `node tests/fakes/bd` does, and leaves the same database', () => {
    const { client, node } = twins();
    for (const call of CALLS) {
      const at = (root: string) => (call.sub ? path.join(root, 'src') : root);
      const log = (root: string) => ({ FAKE_BD_LOG: path.join(root, '..', 'bd.log'), ...call.env });
      const expected = viaNode(call.args, at(node), log(node));
      const answered = viaClient(call.args, at(client), log(client));
      expect({ call: call.args, env: call.env, ...answered }).toEqual({ call: call.args, env: call.env, ...expected });
    }
    const strip = (db: ReturnType<typeof readBeads>) => JSON.stringify(db);
    expect(strip(readBeads(client))).toBe(strip(readBeads(node)));
    const logged = (root: string) => readBdLog(path.join(root, '..', 'bd.log')).map((entry) => [entry.argv, path.relative(root, entry.cwd)]);
    expect(logged(client)).toEqual(logged(node));
    // Every call but the one with a bad FAKE_BD_VERSION, which stops before the log.
    expect(logged(client)).toHaveLength(CALLS.length - 1);
    // The answer files are gone: nothing is left in the client's TMPDIR.
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('is really served: no node process is started for a call', () => {
    const { client } = twins();
    // With no node on PATH, only the server can answer (bash's builtins do the rest).
    const traced = spawnSync(path.join(bin, 'bd'), ['ready', '--json'], { cwd: client, env: { ...fakeBdEnv({ TMPDIR: tmp, FAKE_BD_SERVER: server.address }), PATH: '/nonexistent' }, encoding: 'utf8' });
    expect(traced.stderr).toBe('');
    expect(traced.status).toBe(0);
    expect(JSON.parse(traced.stdout).map((issue: { id: string }) => issue.id)).toEqual(['ws-ep', 'ws-ep.1']);
  });

  it('runs node instead with no server, an unreachable one, or FAKE_BD_DELAY_MS (a sleep needs its own process)', () => {
    const { client, node } = twins();
    const expected = viaNode(['ready', '--json'], node);
    expect(viaClient(['ready', '--json'], client, {}, undefined)).toEqual(expected);
    const closed = net.createServer();
    const port = new Promise<number>((resolve) => closed.listen(0, '127.0.0.1', () => resolve((closed.address() as net.AddressInfo).port)));
    return port.then((free) => {
      closed.close();
      expect(viaClient(['ready', '--json'], client, {}, `${free}:nothing`)).toEqual(expected);
      const started = Date.now();
      expect(viaClient(['ready', '--json'], client, { FAKE_BD_DELAY_MS: '300' })).toEqual(expected);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(fs.readdirSync(tmp)).toEqual([]);
    });
  });

  it('answers nothing to a request without its token, and writes nothing', () => {
    const { client } = twins();
    const [port] = server.address.split(':');
    const answered = viaClient(['close', 'ws-ep.1', '--json'], client, {}, `${port}:wrong`);
    expect(answered).toEqual({ status: 2, stdout: '', stderr: `fake bd: the bd server at 127.0.0.1:${port} gave no answer\n` });
    expect(readBeads(client).issues.find((issue) => issue.id === 'ws-ep.1')?.status ?? 'open').toBe('open');
  });

  it('fails a call loudly when the fake reads a variable the client does not send', async () => {
    const { client } = twins();
    const [port, token] = server.address.split(':');
    const out = path.join(tmp, 'fake-bd-1.out');
    const err = path.join(tmp, 'fake-bd-1.err');
    fs.writeFileSync(out, '');
    fs.writeFileSync(err, '');
    // Held open like the client holds them: the server removes their names once it wrote the answer.
    const errFd = fs.openSync(err, 'r');
    const fields = [token, out, err, client, '2', 'ready', '--json', '0'];
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(fields.map((field) => `${field}\0`).join('')));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const stderr = fs.readFileSync(errFd, 'utf8');
    fs.closeSync(errFd);
    expect(reply).toBe('2\0');
    expect(stderr).toContain('read $FAKE_BD_VERSION, which tests/fakes/bd-client.bash does not send');
    expect(fs.existsSync(out) || fs.existsSync(err)).toBe(false);
  });

  it('sends every variable the fake reads', () => {
    const source = fs.readFileSync(FAKE_BD, 'utf8');
    const read = new Set([...source.matchAll(/IO\.env\.([A-Z_][A-Z0-9_]*)/g)].map((match) => match[1]!));
    // Read by name through faultMatches(envName, …).
    for (const match of source.matchAll(/faultMatches\('([A-Z_]+)'/g)) read.add(match[1]!);
    expect(read.size).toBeGreaterThan(8);
    const client = fs.readFileSync(path.join(FAKE_BD_DIR, 'bd-client.bash'), 'utf8');
    const sent = new Set(/^fake_bd_names=\(([^)]*)\)/m.exec(client)![1]!.split(/\s+/).filter(Boolean));
    expect([...read].filter((name) => !sent.has(name))).toEqual([]);
  });
});
