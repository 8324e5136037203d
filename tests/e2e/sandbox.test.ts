// --sandbox bwrap end to end: what the agent (and a gate) may touch, the same run without the sandbox as
// the control, Ctrl+C through the sandbox, and the one-line errors of a sandbox that cannot be set up.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST, makeSandbox, runRalph, signalRalph, startRalph, waitFor, type Sandbox } from './helpers.ts';
import { commitAll, prdProject, report, SNARK } from './projects.ts';
import { needsTool } from '../support/needs-tool.ts';
import { processesWith } from '../support/processes.ts';

const lockPath = (sandbox: Sandbox): string => path.join(sandbox.repo, '.ralph.lock');
const bwrap = needsTool('bwrap', { apt: 'bubblewrap' });

let box: Sandbox;
const cleanups: Array<() => void> = [];
afterEach(() => {
  box?.cleanup();
  for (const cleanup of cleanups.splice(0)) cleanup();
});


/**
 * A PRD project whose fake agent keeps its bookkeeping in a folder the sandbox lets it write (the default
 * place, beside the repository in /tmp, is behind the sandbox's private /tmp), and whose gate tries to
 * write into HOME. Returns the environment token that marks the agent's processes.
 */
function project(sandbox: Sandbox, steps: unknown[]): { fake: string; token: string } {
  const fake = path.join(sandbox.root, 'fake');
  mkdirSync(fake);
  writeFileSync(path.join(fake, 'scenario.json'), JSON.stringify({ steps }));
  const token = randomUUID();
  Object.assign(sandbox.env, {
    FAKE_AGENT_LOG: path.join(fake, 'agent.log'),
    FAKE_AGENT_STATE: path.join(fake, 'agent.state'),
    FAKE_AGENT_PIDS: path.join(fake, 'agent.pids'),
    FAKE_AGENT_SCENARIO: path.join(fake, 'scenario.json'),
    RALPH_E2E_TOKEN: token,
  });
  prdProject(sandbox, { ...SNARK, userStories: [SNARK.userStories[0]] });
  const gate = `node -e "try { require('fs').writeFileSync(process.env.HOME + '/gate-probe', 'gate') } catch {}"`;
  writeFileSync(path.join(sandbox.repo, 'ralph.config.json'), JSON.stringify({ gate: [gate], sandboxWritable: [fake] }));
  commitAll(sandbox, 'sandbox project');
  return { fake, token };
}

interface Probe {
  ralph: string;
  ssh: string;
  etc: string;
  outside: string;
  inside: string;
  creds: string;
}

function probeTargets(sandbox: Sandbox): Probe {
  mkdirSync(path.join(sandbox.home, '.ssh'));
  writeFileSync(path.join(sandbox.home, '.ssh', 'authorized_keys'), 'original\n');
  mkdirSync(path.join(sandbox.home, '.aws'));
  writeFileSync(path.join(sandbox.home, '.aws', 'credentials'), 'aws_secret_access_key = probe-credential-value\n');
  const etc = `/etc/ralph-sandbox-probe-${randomUUID()}`;
  cleanups.push(() => rmSync(etc, { force: true }));
  return {
    ralph: path.join(sandbox.repo, '.ralph', 'agent-was-here'),
    ssh: path.join(sandbox.home, '.ssh', 'authorized_keys'),
    etc,
    outside: path.join(sandbox.root, 'next-to-the-repository.txt'),
    inside: path.join(sandbox.repo, 'inside.txt'),
    creds: path.join(sandbox.home, '.aws', 'credentials'),
  };
}

function probeStep(probe: Probe): Record<string, unknown> {
  return {
    probe: { write: [probe.ssh, probe.etc, probe.outside, probe.inside, probe.ralph], read: [probe.creds, '/proc/net/dev'], report: 'probe.json' },
    write: { 'app.txt': 'work\n' },
    lines: [report('completed')],
  };
}

const readProbe = (sandbox: Sandbox): Record<string, string> => JSON.parse(readFileSync(path.join(sandbox.repo, 'probe.json'), 'utf8')) as Record<string, string>;
const interfaces = (netDev: string): string[] => netDev.split('\n').slice(2).map((line) => line.split(':')[0]!.trim()).filter(Boolean);

describe('--sandbox bwrap', () => {
  it.skipIf(bwrap.skip)(bwrap.title('keeps the agent and the gates out of HOME, /etc, credentials and the rest of the disk; the work in the repository lands'), async () => {
    box = makeSandbox();
    const { token } = project(box, []);
    const probe = probeTargets(box);
    writeFileSync(path.join(box.root, 'fake', 'scenario.json'), JSON.stringify({ steps: [probeStep(probe)] }));
    const result = await runRalph(box, ['--sandbox', 'bwrap', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', completedCount: 1 });

    const seen = readProbe(box);
    expect(seen[`write:${probe.ssh}`]).toBe('EROFS');
    expect(seen[`write:${probe.etc}`]).toBe('EROFS');
    expect(seen[`read:${probe.creds}`]).toBe('ENOENT');
    expect(seen[`write:${probe.inside}`]).toBe('ok');
    // ralph's own state (logs, status, lock files) is read-only to the agent.
    expect(seen[`write:${probe.ralph}`]).toBe('EROFS');
    // The repository is under /tmp here, so "next to it" is the sandbox's own private /tmp: the write may
    // succeed in there, and must not reach the disk.
    expect(existsSync(probe.outside)).toBe(false);
    expect(readFileSync(probe.ssh, 'utf8')).toBe('original\n');
    expect(existsSync(probe.etc)).toBe(false);
    expect(existsSync(path.join(box.home, 'gate-probe'))).toBe(false);
    expect(readFileSync(probe.inside, 'utf8')).toBe('written by the agent\n');
    expect(readFileSync(path.join(box.repo, 'app.txt'), 'utf8')).toBe('work\n');
    const hostInterfaces = interfaces(readFileSync('/proc/net/dev', 'utf8'));
    expect(interfaces(seen['read:/proc/net/dev']!.slice(3))).toEqual(hostInterfaces);
    expect(processesWith(token)).toEqual([]);
  });

  it('the control: the same agent and gate without --sandbox do write there (so the test above can fail)', async () => {
    box = makeSandbox();
    project(box, []);
    const probe = probeTargets(box);
    writeFileSync(path.join(box.root, 'fake', 'scenario.json'), JSON.stringify({ steps: [probeStep(probe)] }));
    const result = await runRalph(box, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const seen = readProbe(box);
    expect(seen[`write:${probe.ssh}`]).toBe('ok');
    expect(seen[`write:${probe.outside}`]).toBe('ok');
    expect(seen[`read:${probe.creds}`]).toContain('probe-credential-value');
    expect(readFileSync(probe.ssh, 'utf8')).toBe('original\nwritten by the agent\n');
    expect(existsSync(probe.outside)).toBe(true);
    expect(existsSync(path.join(box.home, 'gate-probe'))).toBe(true);
    // /etc is writable only as root: the sandboxed run above refused it either way.
    if (process.getuid?.() === 0) expect(existsSync(probe.etc)).toBe(true);
  });

  it.skipIf(bwrap.skip)(bwrap.title("--parallel 2: each worker's worktree (inside the read-only .ralph/) is writable to its agent"), async () => {
    box = makeSandbox();
    project(box, [
      { write: { 'a.txt': 'a\n' }, lines: [report('completed')] },
      { write: { 'b.txt': 'b\n' }, lines: [report('completed')] },
    ]);
    prdProject(box, SNARK, 'node -e 0');
    const config = JSON.parse(readFileSync(path.join(box.repo, 'ralph.config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(path.join(box.repo, 'ralph.config.json'), JSON.stringify({ ...config, sandboxWritable: [path.join(box.root, 'fake')] }));
    commitAll(box, 'two stories');
    const result = await runRalph(box, ['--sandbox', 'bwrap', '--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', completedCount: 2 });
    expect(readFileSync(path.join(box.repo, 'a.txt'), 'utf8') + readFileSync(path.join(box.repo, 'b.txt'), 'utf8')).toBe('a\nb\n');
  });

  it.skipIf(bwrap.skip)(bwrap.title('--sandbox-network off leaves the agent only the loopback interface'), async () => {
    box = makeSandbox();
    project(box, []);
    const probe = probeTargets(box);
    writeFileSync(path.join(box.root, 'fake', 'scenario.json'), JSON.stringify({ steps: [probeStep(probe)] }));
    const result = await runRalph(box, ['--sandbox', 'bwrap', '--sandbox-network', 'off', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(interfaces(readProbe(box)['read:/proc/net/dev']!.slice(3))).toEqual(['lo']);
  });

  it.skipIf(bwrap.skip)(bwrap.title('Ctrl+C ends the sandboxed agent tree, releases the lock, exits 130, and the log holds what the agent wrote'), async () => {
    box = makeSandbox();
    const { fake, token } = project(box, [{ replay: 'claude-ok.jsonl', hang: true, ignoreTerm: true, grandchild: true }]);
    const run = startRalph(box, ['--sandbox', 'bwrap', '--json', ...FAST]);
    // Two PIDs written (agent and grandchild; their numbers are the sandbox's own, so only counted here).
    await waitFor(() => existsSync(path.join(fake, 'agent.pids')) && readFileSync(path.join(fake, 'agent.pids'), 'utf8').trim().split('\n').length >= 2, 30_000, 'agent and grandchild');
    await waitFor(() => existsSync(lockPath(box)), 5000, 'lock');
    const logs = path.join(box.repo, '.ralph', 'logs');
    // The log is opened asynchronously while the agent starts: under load the agent's PIDs can be written
    // before the file exists, so a missing file reads as nothing yet (a check that throws ends waitFor).
    const log = (): string => {
      const file = path.join(logs, (existsSync(logs) ? readdirSync(logs)[0] : undefined) ?? '-', 'iteration-1.jsonl');
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    };
    const recording = readFileSync(path.join(__dirname, '..', 'fixtures', 'recordings', 'claude-ok.jsonl'), 'utf8');
    await waitFor(() => log() === recording, 10_000, 'the replayed output in the log');
    expect(processesWith(token).length).toBeGreaterThanOrEqual(2);
    signalRalph(box, 'SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'interrupted' });
    expect(existsSync(lockPath(box))).toBe(false);
    await waitFor(() => processesWith(token).length === 0, 5000, 'no process of the agent left');
    expect(log()).toBe(recording);
  });
});

describe('--sandbox bwrap that cannot be set up: exit 1 before anything changes', () => {
  it('bwrap missing: names the Debian package', async () => {
    box = makeSandbox();
    project(box, []);
    // Only git and node on PATH besides the fakes: no bwrap (node may live in /usr/bin beside it).
    const tools = path.join(box.root, 'tools');
    mkdirSync(tools);
    symlinkSync('/usr/bin/git', path.join(tools, 'git'));
    symlinkSync(process.execPath, path.join(tools, 'node'));
    const result = await runRalph(box, ['--sandbox', 'bwrap', ...FAST], { PATH: `${box.bin}${path.delimiter}${tools}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--sandbox bwrap: 'bwrap' not found on PATH: install the Debian package bubblewrap (apt-get install bubblewrap)");
    expect(existsSync(path.join(box.repo, '.ralph'))).toBe(false);
    expect(existsSync(box.env.FAKE_AGENT_LOG!)).toBe(false);
  });

  it('a configured path that does not exist: one line naming it', async () => {
    box = makeSandbox();
    project(box, []);
    const result = await runRalph(box, ['--sandbox', 'bwrap', '--sandbox-hide', '~/no-such-secrets'], { RALPH_SANDBOX_WRITABLE: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`sandbox-hide: ${path.join(box.home, 'no-such-secrets')} does not exist`);
    expect(existsSync(path.join(box.repo, '.ralph'))).toBe(false);
  });

  it('RALPH_SANDBOX=bwrap in the environment turns it on like the flag', async () => {
    box = makeSandbox();
    project(box, []);
    const result = await runRalph(box, ['--dry-run', '--sandbox-hide', '/nonexistent-ralph-path'], { RALPH_SANDBOX: 'bwrap' });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('sandbox-hide: /nonexistent-ralph-path does not exist');
  });
});
