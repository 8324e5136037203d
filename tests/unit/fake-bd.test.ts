import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAKE_BD, fakeBdEnv, readBdLog, readBeads, seedBeads, type SeedDb, type SeedIssue } from '../fakes/bd-seed.ts';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  json: () => any;
}

let dir: string;

function bd(args: string[], opts: { env?: Record<string, string | undefined>; cwd?: string } = {}): Run {
  const r = spawnSync(FAKE_BD, args, { cwd: opts.cwd ?? dir, env: fakeBdEnv(opts.env), encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}

const ids = (r: Run): string[] => (r.json() as Array<{ id: string }>).map((i) => i.id);
const seed = (s: SeedDb) => seedBeads(dir, s);
const many = (n: number, extra: Partial<SeedIssue> = {}): SeedIssue[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t-${(1000 + i).toString(36)}`, title: `Issue ${i}`, ...extra }));

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-bd-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('fake bd: basics', () => {
  it('fails outside an initialised repo', () => {
    const r = bd(['ready', '--json']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Error: no beads database found/);
  });

  it('finds .beads in an ancestor directory', () => {
    seed({ issues: [{ id: 't-abc', title: 'A' }] });
    const sub = path.join(dir, 'src', 'deep');
    fs.mkdirSync(sub, { recursive: true });
    const r = bd(['ready', '--json'], { cwd: sub });
    expect(r.status).toBe(0);
    expect(ids(r)).toEqual(['t-abc']);
  });

  it('prints a version line for `version` and `--version` without a database', () => {
    for (const args of [['version'], ['--version']]) {
      const r = bd(args);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^bd version \d+\.\d+\.\d+/);
    }
  });

  it('rejects unknown flags and commands like cobra', () => {
    seed({ issues: [] });
    let r = bd(['ready', '--json', '--foo']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('Error: unknown flag: --foo\n');
    r = bd(['ready', '--foo=bar', '--json']);
    expect(r.stderr).toBe('Error: unknown flag: --foo\n');
    r = bd(['frobnicate', '--json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^Error: unknown command "frobnicate" for "bd"/);
    r = bd(['ready', '--limit', 'x', '--json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^Error: invalid argument "x" for "-n, --limit" flag/);
    r = bd(['ready', '--json', '--parent']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('Error: flag needs an argument: --parent\n');
  });

  it('normalises a hand-written seed on the first call, even a read-only one', () => {
    seed({ prefix: 'rl', issues: [{ id: 'rl-ep', title: 'Epic', issue_type: 'epic' }, { id: 'rl-ep.1', title: 'Child', dependencies: [] }] });
    expect(bd(['show', 'rl-ep.1', '--json']).status).toBe(0);
    const [epic, child] = readBeads(dir).issues;
    expect(epic).toMatchObject({ status: 'open', priority: 2, issue_type: 'epic', created_at: '2025-01-01T00:00:00.000Z', dependencies: [] });
    expect(child).toMatchObject({ parent: 'rl-ep', created_at: '2025-01-01T00:01:00.000Z' });
    expect(child?.dependencies).toEqual([{ issue_id: 'rl-ep.1', depends_on_id: 'rl-ep', type: 'parent-child', created_at: '2025-01-01T00:01:00.000Z' }]);
  });

  it('reports an invalid seed clearly', () => {
    seed({ issues: [{ id: 't-1', title: 'x', status: 'done' as never }] });
    const r = bd(['ready', '--json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/invalid fake-db\.json: t-1: unknown status "done"/);
    seed({ issues: [{ id: 't-1', title: 'x', dependencies: ['t-missing'] }] });
    expect(bd(['ready', '--json']).stderr).toMatch(/dependency on unknown issue "t-missing"/);
  });
});

describe('fake bd: ready', () => {
  it('lists open, unblocked issues by priority then created_at', () => {
    seed({
      issues: [
        { id: 't-a', title: 'P2 older', priority: 2, created_at: '2025-01-01T00:00:00Z' },
        { id: 't-b', title: 'P1', priority: 1, created_at: '2025-01-03T00:00:00Z' },
        { id: 't-c', title: 'P2 newer', priority: 2, created_at: '2025-01-02T00:00:00Z' },
        { id: 't-d', title: 'P0 in progress', priority: 0, status: 'in_progress' },
        { id: 't-e', title: 'closed', priority: 0, status: 'closed' },
        { id: 't-f', title: 'deferred', status: 'deferred' },
        { id: 't-g', title: 'blocked by open t-a', priority: 0, dependencies: ['t-a'] },
        { id: 't-h', title: 'blocked by closed t-e', priority: 0, dependencies: ['t-e'] },
        { id: 't-i', title: 'related is not a blocker', priority: 3, dependencies: [{ depends_on_id: 't-a', type: 'related' }] },
      ],
    });
    const r = bd(['ready', '--json']);
    expect(r.status).toBe(0);
    expect(ids(r)).toEqual(['t-h', 't-b', 't-a', 't-c', 't-i']);
    const first = r.json()[0];
    expect(first).toMatchObject({ id: 't-h', status: 'open', priority: 0, issue_type: 'task' });
    expect(first.dependencies).toEqual([
      { issue_id: 't-h', depends_on_id: 't-e', type: 'blocks', created_at: first.created_at },
    ]);
  });

  it('prints [] when nothing is ready and keeps priority 0 in the JSON', () => {
    seed({ issues: [{ id: 't-a', title: 'x', status: 'closed' }] });
    expect(bd(['ready', '--json']).stdout.trim()).toBe('[]');
    seed({ issues: [{ id: 't-a', title: 'x', priority: 0 }] });
    expect(bd(['ready', '--json']).json()[0].priority).toBe(0);
  });

  it('includes epics unless --exclude-type epic', () => {
    seed({ issues: [{ id: 't-ep', title: 'Epic', issue_type: 'epic', priority: 1 }, { id: 't-ep.1', title: 'Child' }] });
    expect(ids(bd(['ready', '--json']))).toEqual(['t-ep', 't-ep.1']);
    expect(ids(bd(['ready', '--json', '--exclude-type', 'epic']))).toEqual(['t-ep.1']);
    expect(ids(bd(['ready', '--json', '--exclude-type=epic']))).toEqual(['t-ep.1']);
  });

  it('--parent covers all descendants but not the parent or other trees', () => {
    seed({
      issues: [
        { id: 't-ep', title: 'Epic', issue_type: 'epic' },
        { id: 't-ep.1', title: 'Child' },
        { id: 't-ep.1.1', title: 'Grandchild' },
        { id: 't-x', title: 'Child via parent field', parent: 't-ep' },
        { id: 't-other', title: 'Other epic', issue_type: 'epic' },
        { id: 't-other.1', title: 'Other child' },
      ],
    });
    expect(ids(bd(['ready', '--json', '--parent', 't-ep']))).toEqual(['t-ep.1', 't-ep.1.1', 't-x']);
    expect(ids(bd(['ready', '--parent=t-other', '--json']))).toEqual(['t-other.1']);
    expect(bd(['ready', '--json', '--parent', 't-none']).json()).toEqual([]);
  });

  it('treats children of a blocked parent as blocked (real bd propagates blocks)', () => {
    seed({
      issues: [
        { id: 't-first', title: 'First' },
        { id: 't-ep', title: 'Epic', issue_type: 'epic', dependencies: ['t-first'] },
        { id: 't-ep.1', title: 'Child' },
      ],
    });
    expect(ids(bd(['ready', '--json']))).toEqual(['t-first']);
    expect(bd(['close', 't-first', '--json']).status).toBe(0);
    expect(ids(bd(['ready', '--json']))).toEqual(['t-ep', 't-ep.1']);
  });

  it('limits: default 100, --limit N, --limit 0 unlimited', () => {
    seed({ issues: many(120) });
    expect(ids(bd(['ready', '--json']))).toHaveLength(100);
    expect(ids(bd(['ready', '--json', '--limit', '3']))).toEqual(['t-rs', 't-rt', 't-ru']);
    expect(ids(bd(['ready', '--json', '-n', '2']))).toHaveLength(2);
    expect(ids(bd(['ready', '--json', '--limit=0']))).toHaveLength(120);
  });
});

describe('fake bd: list', () => {
  beforeEach(() => {
    seed({
      issues: [
        { id: 't-ep', title: 'Epic', issue_type: 'epic' },
        { id: 't-ep.1', title: 'Open child' },
        { id: 't-ep.2', title: 'Closed child', status: 'closed' },
        { id: 't-ep.2.1', title: 'Grandchild' },
        { id: 't-wip', title: 'In progress', status: 'in_progress', issue_type: 'bug' },
      ],
    });
  });

  it('leaves closed issues out unless --all or --status says otherwise', () => {
    expect(ids(bd(['list', '--json'])).sort()).toEqual(['t-ep', 't-ep.1', 't-ep.2.1', 't-wip']);
    expect(ids(bd(['list', '--json', '--all']))).toContain('t-ep.2');
    expect(ids(bd(['list', '--json', '--status', 'closed']))).toEqual(['t-ep.2']);
    expect(ids(bd(['list', '--json', '--status=in_progress,closed'])).sort()).toEqual(['t-ep.2', 't-wip']);
  });

  it('--parent lists direct children only; --type filters', () => {
    expect(ids(bd(['list', '--json', '--parent', 't-ep'])).sort()).toEqual(['t-ep.1']);
    expect(ids(bd(['list', '--json', '--parent', 't-ep', '--all'])).sort()).toEqual(['t-ep.1', 't-ep.2']);
    expect(ids(bd(['list', '--json', '--type', 'bug']))).toEqual(['t-wip']);
  });

  it('default limit 50, 20 with CLAUDE_CODE or BD_AGENT_MODE=1, --limit 0 unlimited', () => {
    seed({ issues: many(60) });
    expect(ids(bd(['list', '--json']))).toHaveLength(50);
    expect(ids(bd(['list', '--json'], { env: { CLAUDE_CODE: '1' } }))).toHaveLength(20);
    expect(ids(bd(['list', '--json'], { env: { BD_AGENT_MODE: '1' } }))).toHaveLength(20);
    expect(ids(bd(['list', '--json', '--limit', '0'], { env: { CLAUDE_CODE: '1' } }))).toHaveLength(60);
    expect(ids(bd(['list', '--json', '--limit', '5']))).toHaveLength(5);
  });
});

describe('fake bd: show', () => {
  beforeEach(() => {
    seed({ issues: [{ id: 't-a', title: 'A', description: 'Do A' }, { id: 't-b', title: 'B', dependencies: ['t-a'] }] });
  });

  it('returns an array even for one id', () => {
    const r = bd(['show', 't-a', '--json']);
    expect(r.status).toBe(0);
    const arr = r.json();
    expect(Array.isArray(arr)).toBe(true);
    expect(arr).toHaveLength(1);
    expect(arr[0]).toMatchObject({ id: 't-a', title: 'A', description: 'Do A', status: 'open', priority: 2, issue_type: 'task' });
    expect(arr[0]).not.toHaveProperty('parent');
    expect(ids(bd(['show', 't-b', 't-a', '--json']))).toEqual(['t-b', 't-a']);
  });

  it('not found: error JSON on stdout, exit 1', () => {
    const r = bd(['show', 't-zzz', '--json']);
    expect(r.status).toBe(1);
    expect(r.json()).toEqual({ error: 'no issue found matching "t-zzz"', schema_version: 1 });
  });
});

describe('fake bd: update', () => {
  beforeEach(() => {
    seed({
      issues: [
        { id: 't-a', title: 'A' },
        { id: 't-b', title: 'B', status: 'in_progress', assignee: 'someone' },
        { id: 't-c', title: 'C', status: 'closed' },
      ],
    });
  });

  it('--status sets the status and prints the updated issues', () => {
    const r = bd(['update', 't-a', '--status', 'in_progress', '--json']);
    expect(r.status).toBe(0);
    const [issue] = r.json();
    expect(issue).toMatchObject({ id: 't-a', status: 'in_progress' });
    expect(issue.started_at).toBeTruthy();
    expect(readBeads(dir).issues.find((i) => i.id === 't-a')?.status).toBe('in_progress');
    expect(bd(['update', 't-a', '--status', 'done', '--json']).status).toBe(1);
  });

  it('--claim takes an open unassigned issue for BD_ACTOR (default "agent")', () => {
    const r = bd(['update', 't-a', '--claim', '--json'], { env: { BD_ACTOR: 'ralph' } });
    expect(r.status).toBe(0);
    expect(r.json()[0]).toMatchObject({ id: 't-a', status: 'in_progress', assignee: 'ralph' });
    // Someone else cannot take it any more.
    const again = bd(['update', 't-a', '--claim', '--json']);
    expect(again.status).toBe(1);
    expect(again.json()).toEqual({ error: 'cannot claim t-a: issue already claimed by ralph', schema_version: 1 });
    expect(readBeads(dir).issues.find((i) => i.id === 't-a')?.assignee).toBe('ralph');
  });

  it('--claim is refused for a claimed or closed issue; default actor is "agent"', () => {
    expect(bd(['update', 't-b', '--claim', '--json']).status).toBe(1);
    const closed = bd(['update', 't-c', '--claim', '--json']);
    expect(closed.status).toBe(1);
    expect(closed.json().error).toMatch(/not claimable/);
    expect(bd(['update', 't-a', '--claim', '--json']).json()[0].assignee).toBe('agent');
  });

  it('errors when the issue is missing or nothing is asked for', () => {
    const missing = bd(['update', 't-nope', '--status', 'open', '--json']);
    expect(missing.status).toBe(1);
    expect(missing.json()).toEqual({ error: 'no issue found matching "t-nope"', schema_version: 1 });
    const nothing = bd(['update', 't-a', '--json']);
    expect(nothing.status).toBe(1);
    expect(nothing.json().error).toBe('no updates specified');
  });
});

describe('fake bd: close', () => {
  beforeEach(() => {
    seed({
      issues: [
        { id: 't-ep', title: 'Epic', issue_type: 'epic' },
        { id: 't-ep.1', title: 'Child 1' },
        { id: 't-ep.2', title: 'Child 2', status: 'closed' },
        { id: 't-x', title: 'Blocked', dependencies: ['t-ep.1'] },
      ],
    });
  });

  it('closes with a reason and prints the closed issues', () => {
    const r = bd(['close', 't-ep.1', '--reason', 'done it', '--json']);
    expect(r.status).toBe(0);
    const [issue] = r.json();
    expect(issue).toMatchObject({ id: 't-ep.1', status: 'closed', close_reason: 'done it' });
    expect(issue.closed_at).toBeTruthy();
  });

  it('refuses an epic with open children unless --force', () => {
    const r = bd(['close', 't-ep', '--reason', 'all done', '--json']);
    expect(r.status).toBe(1);
    expect(r.json()).toEqual({
      error: 'cannot close t-ep: 1 open child issue(s); close children first or use --force to override',
      schema_version: 1,
    });
    expect(readBeads(dir).issues.find((i) => i.id === 't-ep')?.status).toBe('open');
    const forced = bd(['close', 't-ep', '--reason', 'all done', '--force', '--json']);
    expect(forced.status).toBe(0);
    expect(forced.json()[0]).toMatchObject({ id: 't-ep', status: 'closed' });
    expect(forced.stderr).toMatch(/warning: closing t-ep with 1 open child/);
  });

  it('closes a blocker, what it blocked, and the epic in one call, in argument order', () => {
    const r = bd(['close', 't-ep.1', 't-x', 't-ep', '--reason', 'done', '--json']);
    expect(r.status).toBe(0);
    expect(ids(r)).toEqual(['t-ep.1', 't-x', 't-ep']);
    expect(r.json()[0]).not.toHaveProperty('dependencies');
  });

  it('refuses an issue with an open blocker', () => {
    const r = bd(['close', 't-x', '--json']);
    expect(r.status).toBe(1);
    expect(r.json().error).toBe('cannot close blocked issue: t-x is blocked by [t-ep.1]');
    expect(r.stderr).toMatch(/use --force to override/);
  });

  it('reports partial failures: closed ones on stdout, exit 1', () => {
    const r = bd(['close', 't-ep', 't-ep.1', 't-nope', '--json']);
    expect(r.status).toBe(1);
    expect(ids(r)).toEqual(['t-ep.1']);
    expect(r.stderr).toMatch(/no issue found matching "t-nope"/);
  });
});

describe('fake bd: create, dep, init', () => {
  it('init + create + dep add seed a repo; children get <epic>.N ids', () => {
    expect(bd(['init', '--prefix', 'rl', '--quiet']).status).toBe(0);
    expect(fs.existsSync(path.join(dir, '.beads'))).toBe(true);
    const epic = bd(['create', 'The epic', '-t', 'epic', '-p', '1', '--json']).json();
    expect(epic.id).toMatch(/^rl-[0-9a-z]{3,8}$/);
    expect(epic).toMatchObject({ title: 'The epic', issue_type: 'epic', priority: 1, status: 'open', schema_version: 1 });
    const c1 = bd(['create', 'First', '--parent', epic.id, '-p', 'P2', '--description', 'desc', '--json']).json();
    const c2 = bd(['create', 'Second', `--parent=${epic.id}`, '--json']).json();
    expect([c1.id, c2.id]).toEqual([`${epic.id}.1`, `${epic.id}.2`]);
    expect(c1).toMatchObject({ parent: epic.id, description: 'desc' });
    expect(c1.dependencies).toEqual([expect.objectContaining({ issue_id: c1.id, depends_on_id: epic.id, type: 'parent-child' })]);
    const dep = bd(['dep', 'add', c1.id, c2.id, '--json']);
    expect(dep.status).toBe(0);
    expect(dep.json()).toMatchObject({ status: 'added', issue_id: c1.id, depends_on_id: c2.id, type: 'blocks' });
    expect(ids(bd(['ready', '--json', '--parent', epic.id]))).toEqual([c2.id]);
  });
});

describe('fake bd: envelope, log, faults', () => {
  beforeEach(() => {
    seed({ issues: [{ id: 't-a', title: 'A' }] });
  });

  it('BD_JSON_ENVELOPE=1 wraps payloads and errors', () => {
    const env = { BD_JSON_ENVELOPE: '1' };
    const r = bd(['ready', '--json'], { env });
    expect(r.json()).toEqual({ schema_version: 1, data: [expect.objectContaining({ id: 't-a' })] });
    const e = bd(['show', 't-nope', '--json'], { env });
    expect(e.status).toBe(1);
    expect(e.json()).toEqual({ schema_version: 1, data: { error: 'no issue found matching "t-nope"' } });
  });

  it('appends one JSON line per invocation to FAKE_BD_LOG, failures included', () => {
    const log = path.join(dir, 'logs', 'bd.log');
    bd(['ready', '--json', '--limit', '1'], { env: { FAKE_BD_LOG: log } });
    bd(['show', 't-nope', '--json'], { env: { FAKE_BD_LOG: log } });
    bd(['bogus'], { env: { FAKE_BD_LOG: log } });
    const entries = readBdLog(log);
    expect(entries.map((e) => e.argv)).toEqual([['ready', '--json', '--limit', '1'], ['show', 't-nope', '--json'], ['bogus']]);
    expect(entries[0]?.cwd).toBe(fs.realpathSync(dir));
    expect(Number.isNaN(Date.parse(entries[0]?.time ?? ''))).toBe(false);
  });

  it('FAKE_BD_FAIL makes one subcommand fail with "database is locked"', () => {
    const env = { FAKE_BD_FAIL: 'ready' };
    const r = bd(['ready', '--json'], { env });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('Error: database is locked\n');
    expect(bd(['show', 't-a', '--json'], { env }).status).toBe(0);
  });

  it('FAKE_BD_FAIL=cmd:N fails only the first N calls', () => {
    const env = { FAKE_BD_FAIL: 'ready:2' };
    expect(bd(['ready', '--json'], { env }).status).toBe(1);
    expect(bd(['ready', '--json'], { env }).status).toBe(1);
    expect(bd(['ready', '--json'], { env }).status).toBe(0);
  });

  it('FAKE_BD_GARBAGE prints invalid JSON with exit 0 and changes nothing', () => {
    const env = { FAKE_BD_GARBAGE: 'close' };
    const r = bd(['close', 't-a', '--json'], { env });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('{"id": "broken');
    expect(() => JSON.parse(r.stdout)).toThrow();
    expect(bd(['show', 't-a', '--json']).json()[0].status).toBe('open');
  });
});
