import { describe, expect, it } from 'vitest';
import { claude } from '../../../lib/agents/claude.ts';
import { codex } from '../../../lib/agents/codex.ts';
import type { PathKind } from '../../../lib/sandbox/bwrap.ts';
import { bwrapArgs, expandHome, packageRoot, planFor, Sandbox, sandboxProblems, sandboxSettings, type SandboxSettings } from '../../../lib/sandbox/index.ts';
import { wrapCommand } from '../../../lib/sandbox/bwrap.ts';

/** A fake file system: path → kind. */
function fs(entries: Record<string, PathKind>): (file: string) => PathKind | undefined {
  return (file) => entries[file];
}

const settings = (extra: Partial<SandboxSettings> = {}): SandboxSettings => ({ network: true, hide: [], writable: [], ...extra });

const host = {
  '/home/u': 'dir',
  '/home/u/.ssh': 'dir',
  '/home/u/.aws': 'dir',
  '/home/u/.netrc': 'file',
  '/home/u/.claude': 'dir',
  '/home/u/.claude.json': 'file',
  '/home/u/.secret-notes': 'file',
  '/work/repo': 'dir',
  '/work/repo/.ralph': 'dir',
  '/work/repo/.ralph/worktrees/w1': 'dir',
  '/run/user/1000/ssh-agent.sock': 'other',
} as const;

const context = (extra: object = {}) => ({ settings: settings(), root: '/work/repo', home: '/home/u', env: { PATH: '/usr/bin:/bin', SSH_AUTH_SOCK: '/run/user/1000/ssh-agent.sock' }, agent: claude, kindOf: fs(host), ...extra });

describe('planFor', () => {
  it('makes the repository and the agent state writable, .ralph/ read-only, and hides credentials that exist', () => {
    const plan = planFor(context(), '/work/repo');
    expect(plan.writable).toEqual(['/work/repo', '/home/u/.claude', '/home/u/.claude.json']);
    expect(plan.readOnly).toEqual(['/work/repo/.ralph']);
    expect(plan.writableAfter).toEqual([]);
    expect(plan.hidden).toEqual([
      { path: '/home/u/.ssh', kind: 'dir' },
      { path: '/home/u/.aws', kind: 'dir' },
      { path: '/home/u/.netrc', kind: 'file' },
      { path: '/run/user/1000/ssh-agent.sock', kind: 'other' },
    ]);
    expect(plan.underTmp).toEqual([]);
  });

  it("gives a worker's worktree under .ralph/ back its write access, after .ralph/ turned read-only", () => {
    const plan = planFor(context(), '/work/repo/.ralph/worktrees/w1');
    expect(plan.writableAfter).toEqual(['/work/repo/.ralph/worktrees/w1']);
  });

  it("lets a worker write its worktree and the git folder it commits into, not the repository's working tree", () => {
    const plan = planFor(context({ kindOf: fs({ ...host, '/work/repo/.git': 'dir' }) }), '/work/repo/.ralph/worktrees/w1');
    expect(plan.writable).toEqual(['/work/repo/.git', '/home/u/.claude', '/home/u/.claude.json']);
    expect(plan.writable).not.toContain('/work/repo');
    expect(plan.writableAfter).toEqual(['/work/repo/.ralph/worktrees/w1']);
    // The agent working in the repository itself still writes the repository.
    expect(planFor(context({ kindOf: fs({ ...host, '/work/repo/.git': 'dir' }) }), '/work/repo').writable[0]).toBe('/work/repo');
  });

  it('adds configured hidden and writable paths, ~ meaning HOME', () => {
    const plan = planFor(context({ settings: settings({ hide: ['~/.secret-notes'], writable: ['~/.claude'] }) }), '/work/repo');
    expect(plan.hidden.map((item) => item.path)).toContain('/home/u/.secret-notes');
    expect(plan.writable).toEqual(['/work/repo', '/home/u/.claude', '/home/u/.claude.json']);
  });

  it('brings back HOME and PATH folders that the private /tmp would hide', () => {
    const kinds = fs({ ...host, '/tmp/t/home': 'dir', '/tmp/t/bin': 'dir', '/tmp/t/repo': 'dir', '/tmp/t/home/.ssh': 'dir' });
    const plan = planFor(context({ root: '/tmp/t/repo', home: '/tmp/t/home', env: { PATH: '/tmp/t/bin:/usr/bin:/tmp/missing' }, kindOf: kinds }), '/tmp/t/repo');
    expect(plan.underTmp).toEqual(['/tmp/t/bin', '/tmp/t/home']);
    expect(plan.writable).toEqual(['/tmp/t/repo']);
    expect(plan.hidden).toEqual([{ path: '/tmp/t/home/.ssh', kind: 'dir' }]);
  });

  it('brings back what the private /dev hides too: a repository, HOME and PATH folders in /dev/shm', () => {
    const kinds = fs({ ...host, '/dev/shm/t/home': 'dir', '/dev/shm/t/bin': 'dir', '/dev/shm/t/repo': 'dir' });
    const plan = planFor(context({ root: '/dev/shm/t/repo', home: '/dev/shm/t/home', env: { PATH: '/dev/shm/t/bin:/usr/bin:/dev' }, kindOf: kinds }), '/dev/shm/t/repo');
    expect(plan.underTmp).toEqual(['/dev/shm/t/bin', '/dev/shm/t/home']);
    expect(plan.writable).toEqual(['/dev/shm/t/repo']);
  });

  it('binds the shared git folder of a worktree checkout, and a state folder moved by its variable', () => {
    const kinds = fs({ ...host, '/work/main/.git': 'dir', '/data/claude': 'dir' });
    const plan = planFor(context({ gitCommonDir: '/work/main/.git', env: { PATH: '/usr/bin', CLAUDE_CONFIG_DIR: '/data/claude' }, kindOf: kinds }), '/work/repo');
    // Parents before children: by length, which keeps this order for unrelated paths.
    expect(plan.writable).toEqual(['/work/repo', '/data/claude', '/work/main/.git', '/home/u/.claude', '/home/u/.claude.json']);
  });
});

describe('Sandbox', () => {
  it("makes the state of the CLI that runs writable: the worker's by default, a reviewer's for its run", () => {
    const sandbox = new Sandbox(context({ kindOf: fs({ ...host, '/home/u/.codex': 'dir' }) }), '/usr/bin/bwrap');
    expect(sandbox.plan('/work/repo').writable).toEqual(['/work/repo', '/home/u/.claude', '/home/u/.claude.json']);
    expect(sandbox.plan('/work/repo', codex).writable).toEqual(['/work/repo', '/home/u/.codex']);
    const wrapped = sandbox.wrap({ bin: 'codex', args: ['exec'] }, '/work/repo', codex);
    expect(wrapped.bin).toBe('/usr/bin/bwrap');
    expect(wrapped.args).toContain('/home/u/.codex');
    expect(wrapped.args).not.toContain('/home/u/.claude');
  });
});

describe('packageRoot', () => {
  it("finds the agent script's package above it under /tmp, so the private /tmp does not hide its files", () => {
    const kinds = fs({ '/tmp/x/ralph/package.json': 'file', '/tmp/x/ralph/tests/fakes': 'dir' });
    expect(packageRoot('/tmp/x/ralph/tests/fakes', kinds)).toBe('/tmp/x/ralph');
  });

  it('keeps the folder itself when no package.json is above it, and never looks outside /tmp', () => {
    expect(packageRoot('/tmp/x/bin', fs({}))).toBe('/tmp/x/bin');
    expect(packageRoot('/opt/cli/bin', fs({ '/opt/cli/package.json': 'file' }))).toBe('/opt/cli/bin');
  });
});

describe('bwrapArgs', () => {
  const plan = { network: true, underTmp: ['/tmp/t/bin'], writable: ['/work/repo'], readOnly: ['/work/repo/.ralph'], writableAfter: [], hidden: [{ path: '/home/u/.ssh', kind: 'dir' as const }, { path: '/home/u/.netrc', kind: 'file' as const }] };

  it('mounts in order: read-only root, own /dev /proc /tmp, binds, hidden last; new PID namespace, no capabilities', () => {
    expect(bwrapArgs(plan, '/work/repo')).toEqual([
      '--unshare-pid', '--cap-drop', 'ALL',
      '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp',
      '--ro-bind', '/tmp/t/bin', '/tmp/t/bin',
      '--bind', '/work/repo', '/work/repo',
      '--ro-bind', '/work/repo/.ralph', '/work/repo/.ralph',
      '--tmpfs', '/home/u/.ssh', '--remount-ro', '/home/u/.ssh',
      '--ro-bind', '/dev/null', '/home/u/.netrc',
      '--chdir', '/work/repo',
    ]);
  });

  it('takes the network away with --sandbox-network off', () => {
    expect(bwrapArgs({ ...plan, network: false }, '/work/repo').slice(0, 4)).toEqual(['--unshare-pid', '--cap-drop', 'ALL', '--unshare-net']);
  });

  it('wraps a command after --, keeping its stdin, with a private TMPDIR and no ssh agent', () => {
    const wrapped = wrapCommand(plan, '/work/repo', { bin: 'claude', args: ['-p'], stdin: 'prompt', env: { CLAUDECODE: undefined } }, '/usr/bin/bwrap');
    expect(wrapped.bin).toBe('/usr/bin/bwrap');
    expect(wrapped.args.slice(-4)).toEqual(['/work/repo', '--', 'claude', '-p']);
    expect(wrapped.stdin).toBe('prompt');
    expect(wrapped.env).toEqual({ CLAUDECODE: undefined, TMPDIR: '/tmp', IS_SANDBOX: '1', SSH_AUTH_SOCK: undefined });
  });
});

describe('settings and problems', () => {
  const config = (values: Record<string, unknown>) => ({ extra: new Map(Object.entries(values)) as never });

  it('reads --sandbox, --sandbox-network and the lists', () => {
    expect(sandboxSettings(config({}))).toBeUndefined();
    expect(sandboxSettings(config({ sandbox: 'none' }))).toBeUndefined();
    expect(sandboxSettings(config({ sandbox: 'bwrap', 'sandbox-network': 'off', 'sandbox-hide': ['~/x'] }))).toEqual({ network: false, hide: ['~/x'], writable: [] });
  });

  it('is Linux-only, for now', () => {
    expect(sandboxProblems(settings(), { platform: 'darwin', env: {}, home: '/h', root: '/r', kindOf: () => 'dir' })).toEqual([
      '--sandbox bwrap: the sandbox is Linux-only for now (this machine runs darwin); run without --sandbox',
    ]);
  });

  it('names the Debian package when bwrap is missing, and each configured path that does not exist', () => {
    const problems = sandboxProblems(settings({ hide: ['~/nope', '/etc/passwd'], writable: ['cache'] }), { platform: 'linux', env: { PATH: '/nonexistent' }, home: '/h', root: '/r', kindOf: (file) => (file === '/etc/passwd' ? 'file' : undefined) });
    expect(problems).toEqual([
      "--sandbox bwrap: 'bwrap' not found on PATH: install the Debian package bubblewrap (apt-get install bubblewrap)",
      'sandbox-hide: /h/nope does not exist',
      'sandbox-writable: /r/cache does not exist',
    ]);
  });

  it('expands ~', () => {
    expect(expandHome('~', '/h', '/r')).toBe('/h');
    expect(expandHome('~/a/b', '/h', '/r')).toBe('/h/a/b');
    expect(expandHome('a/b', '/h', '/r')).toBe('/r/a/b');
    expect(expandHome('/x', '/h', '/r')).toBe('/x');
  });
});
