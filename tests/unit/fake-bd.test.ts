import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAKE_BD, fakeBdClient, serverEnv, FAKE_BD_VERSIONS, fakeBdEnv, readBdLog, readBeads, seedBeads, type FakeBdVersion, type SeedDb, type SeedIssue } from '../fakes/bd-seed.ts';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  json: () => any;
}

let dir: string;

function bd(args: string[], opts: { env?: Record<string, string | undefined>; cwd?: string; version?: FakeBdVersion } = {}): Run {
  const env = { FAKE_BD_VERSION: opts.version, ...opts.env };
  const r = spawnSync(fakeBdClient(), args, { cwd: opts.cwd ?? dir, env: fakeBdEnv({ ...serverEnv(), ...env }), encoding: 'utf8' });
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

  it('prints a version line for `version` and `--version` without a database, per FAKE_BD_VERSION', () => {
    for (const args of [['version'], ['--version']]) {
      const r = bd(args);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^bd version 1\.0\.5 /);
    }
    expect(bd(['version'], { version: '0.50' }).stdout).toMatch(/^bd version 0\.50\.3 /);
    expect(bd(['version'], { version: '1.2' }).stdout).toMatch(/^bd version 1\.2\.2 \(fake/);
    // The recorded build of beads' main (the lease line) calls itself 1.2.2 too.
    expect(bd(['version'], { version: 'main' }).stdout).toMatch(/^bd version 1\.2\.2 \(5ac8d3e, fake/);
    const bad = bd(['version'], { env: { FAKE_BD_VERSION: '2.0' } });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('fake bd: FAKE_BD_VERSION must be 0.50, 1.x, 1.2 or main, not "2.0"\n');
  });

  it('rejects unknown flags and commands like cobra, usage after the error', () => {
    seed({ issues: [] });
    let r = bd(['ready', '--json', '--foo']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Error: unknown flag: --foo\nUsage:\n  bd ready \[flags\]\n\nFlags:\n.*--parent string\n/s);
    expect(r.stderr).toMatch(/\nGlobal Flags:\n.*--json\n/s);
    r = bd(['ready', '--foo=bar', '--json']);
    expect(r.stderr.split('\n')[0]).toBe('Error: unknown flag: --foo');
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
    // Real bd prints ready items with counts only: no dependencies, no parent.
    expect(first).toMatchObject({ id: 't-h', status: 'open', priority: 0, issue_type: 'task', dependency_count: 1, dependent_count: 0, comment_count: 0 });
    expect(first).not.toHaveProperty('dependencies');
    expect(first).not.toHaveProperty('parent');
  });

  it('prints [] when nothing is ready and keeps priority 0 in the JSON', () => {
    seed({ issues: [{ id: 't-a', title: 'x', status: 'closed' }] });
    expect(bd(['ready', '--json']).stdout.trim()).toBe('[]');
    seed({ issues: [{ id: 't-a', title: 'x', priority: 0 }] });
    expect(bd(['ready', '--json']).json()[0].priority).toBe(0);
  });

  it('includes epics unless --exclude-type epic (1.x)', () => {
    seed({ issues: [{ id: 't-ep', title: 'Epic', issue_type: 'epic', priority: 1 }, { id: 't-ep.1', title: 'Child' }] });
    expect(ids(bd(['ready', '--json']))).toEqual(['t-ep', 't-ep.1']);
    expect(ids(bd(['ready', '--json', '--exclude-type', 'epic']))).toEqual(['t-ep.1']);
    expect(ids(bd(['ready', '--json', '--exclude-type=epic']))).toEqual(['t-ep.1']);
  });

  it('0.50 has no --exclude-type: unknown flag with usage on stderr, exit 1, nothing on stdout', () => {
    seed({ issues: [{ id: 't-ep', title: 'Epic', issue_type: 'epic', priority: 1 }, { id: 't-ep.1', title: 'Child' }] });
    const r = bd(['ready', '--parent', 't-ep', '--limit', '0', '--exclude-type', 'epic', '--json'], { version: '0.50' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Error: unknown flag: --exclude-type\nUsage:\n  bd ready \[flags\]\n/);
    expect(ids(bd(['ready', '--json'], { version: '0.50' }))).toEqual(['t-ep', 't-ep.1']);
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

  it('limits: default 10 as real bd, --limit N, --limit 0 unlimited', () => {
    seed({ issues: many(120) });
    expect(ids(bd(['ready', '--json']))).toHaveLength(10);
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

  it('prints items without a parent; 0.50 lists the dependency rows, 1.x leaves them out', () => {
    for (const version of FAKE_BD_VERSIONS) {
      const child = bd(['list', '--json', '--parent', 't-ep'], { version }).json()[0];
      expect(child).toMatchObject({ id: 't-ep.1', dependency_count: 1, dependent_count: 0, comment_count: 0 });
      expect(child).not.toHaveProperty('parent');
      if (version === '0.50') expect(child.dependencies).toEqual([expect.objectContaining({ issue_id: 't-ep.1', depends_on_id: 't-ep', type: 'parent-child', created_by: 'agent' })]);
      else expect(child).not.toHaveProperty('dependencies');
    }
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

describe.each(FAKE_BD_VERSIONS)('fake bd %s: show', (version) => {
  beforeEach(() => {
    seed({ issues: [{ id: 't-ep', title: 'Epic', issue_type: 'epic' }, { id: 't-a', title: 'A', description: 'Do A', parent: 't-ep' }, { id: 't-b', title: 'B', dependencies: ['t-a'] }] });
  });

  it('returns an array even for one id, dependencies and dependents as whole issues, and the parent', () => {
    const r = bd(['show', 't-a', '--json'], { version });
    expect(r.status).toBe(0);
    const arr = r.json();
    expect(Array.isArray(arr)).toBe(true);
    expect(arr).toHaveLength(1);
    expect(arr[0]).toMatchObject({ id: 't-a', title: 'A', description: 'Do A', status: 'open', priority: 2, issue_type: 'task', parent: 't-ep' });
    expect(arr[0].dependencies).toEqual([expect.objectContaining({ id: 't-ep', title: 'Epic', status: 'open', issue_type: 'epic', dependency_type: 'parent-child' })]);
    expect(arr[0].dependents).toEqual([expect.objectContaining({ id: 't-b', title: 'B', status: 'open', dependency_type: 'blocks' })]);
    expect(ids(bd(['show', 't-b', 't-a', '--json'], { version }))).toEqual(['t-b', 't-a']);
  });

  it('not found: the plural error on stdout, the id on stderr, exit 1', () => {
    const r = bd(['show', 't-zzz', '--json'], { version });
    expect(r.status).toBe(1);
    expect(r.json()).toEqual(version === '0.50' ? { error: 'no issues found matching the provided IDs' } : { error: 'no issues found matching the provided IDs', schema_version: 1 });
    expect(r.stderr).toBe('Error fetching t-zzz: no issue found matching "t-zzz"\n');
  });
});

describe.each(FAKE_BD_VERSIONS)('fake bd %s: update', (version) => {
  beforeEach(() => {
    seed({
      issues: [
        { id: 't-a', title: 'A' },
        { id: 't-b', title: 'B', status: 'in_progress', assignee: 'someone' },
        { id: 't-c', title: 'C', status: 'closed' },
      ],
    });
  });

  it('--status sets the status and prints the updated issues (no dependencies or parent; started_at on the lease line, as recorded)', () => {
    const r = bd(['update', 't-a', '--status', 'in_progress', '--json'], { version });
    expect(r.status).toBe(0);
    const [issue] = r.json();
    expect(issue).toMatchObject({ id: 't-a', status: 'in_progress' });
    for (const key of ['dependencies', 'parent']) expect(issue).not.toHaveProperty(key);
    if (version === 'main') expect(issue.started_at).toMatch(/^\d{4}-/);
    else expect(issue).not.toHaveProperty('started_at');
    expect(readBeads(dir).issues.find((i) => i.id === 't-a')?.status).toBe('in_progress');
  });

  it('an unknown status: 0.50 says so on stderr and exits 0, 1.x prints a JSON error and exits 1', () => {
    const r = bd(['update', 't-a', '--status', 'bogus', '--json'], { version });
    if (version === '0.50') {
      expect([r.status, r.stdout]).toEqual([0, '']);
      expect(r.stderr).toBe('Error updating t-a: validate field update: invalid status: bogus\n');
    } else {
      expect(r.status).toBe(1);
      expect(r.json()).toEqual({ error: expect.stringMatching(/^invalid status "bogus" \(built-in: open, in_progress, blocked, deferred, closed, pinned, hooked; or configure custom statuses/), schema_version: 1 });
    }
    expect(bd(['show', 't-a', '--json'], { version }).json()[0].status).toBe('open');
  });

  it('a missing issue: nothing on stdout, the id on stderr; 0.50 exits 0, 1.x exits 1', () => {
    const missing = bd(['update', 't-nope', '--status', 'open', '--json'], { version });
    expect(missing.status).toBe(version === '0.50' ? 0 : 1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe(`Error resolving t-nope: no issue found matching "t-nope"\n${version === 'main' ? '{"error":"1 of 1 issues failed to update","failed":[{"id":"t-nope","error":"Error resolving t-nope: no issue found matching \\"t-nope\\""}],"schema_version":1}\n' : ''}`);
  });

  it('--claim takes an open unassigned issue for BD_ACTOR (default "agent"), refuses a claimed one (recorded text)', () => {
    const r = bd(['update', 't-a', '--claim', '--json'], { env: { BD_ACTOR: 'ralph' }, version });
    expect(r.status).toBe(0);
    expect(r.json()[0]).toMatchObject({ id: 't-a', status: 'in_progress', assignee: 'ralph' });
    const again = bd(['update', 't-a', '--claim', '--json'], { version });
    expect(again.stdout).toBe('');
    // The lease line words it as an update, with a JSON summary of the failures under --json (recorded).
    expect(again.stderr).toBe(version === 'main'
      ? 'Error updating t-a: issue already claimed by ralph\n{"error":"1 of 1 issues failed to update","failed":[{"id":"t-a","error":"updating issue: issue already claimed by ralph"}],"schema_version":1}\n'
      : 'Error claiming t-a: issue already claimed by ralph\n');
    expect(again.status).toBe(version === '0.50' ? 0 : 1);
    expect(readBeads(dir).issues.find((i) => i.id === 't-a')?.assignee).toBe('ralph');
    // 1.x claims open issues only; 0.50 asks for no assignee, whatever the status (its UPDATE … WHERE).
    const closed = bd(['update', 't-c', '--claim', '--json'], { version });
    if (version === '0.50') expect(closed.json()[0]).toMatchObject({ status: 'in_progress', assignee: 'agent' });
    else if (version === 'main') expect([closed.status, closed.stderr.split('\n')[0]]).toEqual([1, 'Error updating t-c: issue not claimable: t-c status closed']);
    else expect([closed.status, closed.stderr]).toEqual([1, 'Error claiming t-c: issue not claimable: status closed\n']);
  });

  it('errors when nothing is asked for', () => {
    const nothing = bd(['update', 't-a', '--json'], { version });
    expect(nothing.status).toBe(1);
    expect(nothing.json().error).toBe('no updates specified');
  });
});

describe.each(FAKE_BD_VERSIONS)('fake bd %s: close', (version) => {
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
    const r = bd(['close', 't-ep.1', '--reason', 'done it', '--json'], { version });
    expect(r.status).toBe(0);
    const [issue] = r.json();
    expect(issue).toMatchObject({ id: 't-ep.1', status: 'closed', close_reason: 'done it' });
    expect(issue.closed_at).toBeTruthy();
    expect(issue).not.toHaveProperty('dependencies');
  });

  it('an epic with open children: 0.50 closes it, 1.x refuses on stderr unless --force', () => {
    const r = bd(['close', 't-ep', '--reason', 'all done', '--json'], { version });
    if (version === '0.50') {
      expect(r.status).toBe(0);
      expect(r.json()[0]).toMatchObject({ id: 't-ep', status: 'closed' });
      return;
    }
    expect([r.status, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe('cannot close epic t-ep: 1 open child issue(s); close children first or use --force to override\n');
    expect(readBeads(dir).issues.find((i) => i.id === 't-ep')?.status).toBe('open');
    const forced = bd(['close', 't-ep', '--reason', 'all done', '--force', '--json'], { version });
    expect(forced.status).toBe(0);
    expect(forced.json()[0]).toMatchObject({ id: 't-ep', status: 'closed' });
    expect(forced.stderr).toMatch(/warning: closing t-ep with 1 open child/);
  });

  it('closes a blocker, what it blocked, and the epic in one call, in argument order', () => {
    const r = bd(['close', 't-ep.1', 't-x', 't-ep', '--reason', 'done', '--json'], { version });
    expect(r.status).toBe(0);
    expect(ids(r)).toEqual(['t-ep.1', 't-x', 't-ep']);
  });

  it('an issue with an open blocker: refused on stderr only; 0.50 exits 0, 1.x exits 1', () => {
    const r = bd(['close', 't-x', '--json'], { version });
    expect(r.status).toBe(version === '0.50' ? 0 : 1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('cannot close t-x: blocked by open issues [t-ep.1] (use --force to override)\n');
  });

  it('partial failures: the closed ones on stdout, each refusal on stderr, exit 0', () => {
    const r = bd(['close', 't-ep.1', 't-nope', '--json'], { version });
    expect(r.status).toBe(0);
    expect(ids(r)).toEqual(['t-ep.1']);
    expect(r.stderr).toBe('Error resolving t-nope: no issue found matching "t-nope"\n');
  });
});

describe.each(FAKE_BD_VERSIONS)('fake bd %s: create, dep, init', (version) => {
  it('init (real flags) + create + dep add seed a repo; children get <epic>.N ids', () => {
    expect(bd(['init', '--backend', 'sqlite', '--prefix', 'rl', '--skip-hooks', '--skip-merge-driver', '--quiet'], { version }).status).toBe(0);
    expect(fs.existsSync(path.join(dir, '.beads'))).toBe(true);
    const created = bd(['create', 'The epic', '-t', 'epic', '-p', '1', '--json'], { version });
    expect(created.stderr).toMatch(/^⚠ Creating issue without description\./);
    const epic = created.json();
    expect(epic.id).toMatch(/^rl-[0-9a-z]{3,8}$/);
    expect(epic).toMatchObject({ title: 'The epic', issue_type: 'epic', priority: 1, status: 'open', owner: 'agent', created_by: 'agent' });
    expect(epic).not.toHaveProperty('schema_version');
    const first = bd(['create', 'First', '--parent', epic.id, '-p', 'P2', '--description', 'desc', '--json'], { version });
    expect(first.stderr).toBe('');
    const c1 = first.json();
    const c2 = bd(['create', 'Second', `--parent=${epic.id}`, '--json'], { version }).json();
    expect([c1.id, c2.id]).toEqual([`${epic.id}.1`, `${epic.id}.2`]);
    expect(c1).toMatchObject({ description: 'desc' });
    for (const key of ['parent', 'dependencies']) expect(c1).not.toHaveProperty(key);
    const dep = bd(['dep', 'add', c1.id, c2.id, '--json'], { version });
    expect(dep.status).toBe(0);
    expect(dep.json()).toEqual({ depends_on_id: c2.id, issue_id: c1.id, status: 'added', type: 'blocks' });
    expect(ids(bd(['ready', '--json', '--parent', epic.id], { version }))).toEqual([c2.id]);
    expect(bd(['show', c1.id, '--json'], { version }).json()[0]).toMatchObject({ parent: epic.id });
  });
});

describe('fake bd: envelope, log, faults', () => {
  beforeEach(() => {
    seed({ issues: [{ id: 't-a', title: 'A' }] });
  });

  it('BD_JSON_ENVELOPE=1 wraps payloads and errors in 1.x; 0.50 ignores it', () => {
    const env = { BD_JSON_ENVELOPE: '1' };
    const r = bd(['ready', '--json'], { env });
    expect(r.json()).toEqual({ schema_version: 1, data: [expect.objectContaining({ id: 't-a' })] });
    const e = bd(['show', 't-nope', '--json'], { env });
    expect(e.status).toBe(1);
    expect(e.json()).toEqual({ schema_version: 1, data: { error: 'no issues found matching the provided IDs' } });
    expect(bd(['ready', '--json'], { env, version: '0.50' }).json()).toEqual([expect.objectContaining({ id: 't-a' })]);
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
