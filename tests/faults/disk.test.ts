// Every failure path ends cleanly: a disk that fills up mid-run (a small tmpfs), a read-only repository (a
// read-only bind mount), a file where .ralph/ should be. One line naming what failed and where, exit 1, no
// stack trace, the lock released, the agent stopped, the state on disk saying failed, nothing lost.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mountNamespaces } from '../support/mounts.ts';
import { agentPids, expectLockGone, FAST, makeSandbox, pidAlive, prdProject, readPrdJson, report, RALPH, runRalph, scenario, TSX, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const mounts = mountNamespaces();
/** No stack trace, no unhandled error: what the user sees of a failure. */
const STACK = /^\s+at |Unhandled|node:internal|\.ts:\d+:\d+/m;

/**
 * Runs ralph inside a private mount namespace after `setup` (shell, in the repo) made the fault; `after`
 * (shell) runs there once ralph exited, its output kept, since the mounts vanish with the namespace.
 */
function runInNamespace(box: Sandbox, setup: string, args: string[], after = ''): Promise<{ code: number | null; stdout: string; stderr: string; after: string }> {
  const afterFile = path.join(box.root, 'after.txt');
  // After the setup the shell enters the folder again by its path, so it sees what was mounted there.
  const script = `set -e; cd "$1"; ${setup}; cd "$1"; shift; set +e; "$@"; code=$?; { ${after || 'true'}; } > ${JSON.stringify(afterFile)} 2>&1; exit $code`;
  const child = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', box.repo, TSX, RALPH, ...args], { cwd: box.repo, env: box.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, after: existsSync(afterFile) ? readFileSync(afterFile, 'utf8') : '' })));
}

describe('a disk that fills up during a run', () => {
  it.skipIf(mounts.skip)(mounts.title('ends with one line naming the file, exit 1, the lock released, the agent stopped and status.json saying failed'), async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    // A chatty agent: 3 MB of output into a .ralph/ of 256 KB.
    scenario(sandbox, [{ bytes: 3_000_000, lineBytes: 2000, lines: [report('completed')] }]);
    const result = await runInNamespace(sandbox, 'mkdir -p .ralph && mount -t tmpfs -o size=256k tmpfs .ralph', ['--json', '--quiet', ...FAST], 'cat .ralph/status.json; echo; echo "agents: $(ls .ralph/agents | wc -l)"');
    expect(result.code, result.stderr).toBe(1);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('ralph: '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^ralph: the disk is full: cannot write ${sandbox.repo.replace(/[/.]/g, '\\$&')}/\\.ralph/logs/[^/]+/iteration-1\\.(jsonl|stderr\\.log) \\(ENOSPC\\)$`));
    expect(result.stderr).toContain('hint: free some space and start ralph again (it resumes)');
    expect(result.stderr).not.toMatch(STACK);
    // --json still gives one object, with what is left counted from the source.
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', exitCode: 1, tasksRemaining: 2, message: expect.stringMatching(/^the disk is full: cannot write /) });
    // status.json (rewritten in place, there being no room for a temp file) says the run failed.
    const status = JSON.parse(result.after.slice(0, result.after.indexOf('\nagents:')));
    expect(status).toMatchObject({ state: 'finished', status: 'failed', exitCode: 1 });
    expect(result.after).toContain('agents: 0');
    expectLockGone(sandbox);
    for (const pid of agentPids(sandbox)) expect(pidAlive(pid), `agent ${pid} still alive`).toBe(false);
    // Nothing lost: the task is open again for the next run, which works once there is room.
    expect(readPrdJson(sandbox).userStories.map((story) => story.status ?? story.passes)).not.toContain('completed');
  });
});

describe('a disk already full when the run starts', () => {
  it.skipIf(mounts.skip)(mounts.title('one line naming the file it could not write, and no lock left behind'), async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    // The repository on a small tmpfs of its own, filled to the last byte (dd is bounded: were the mount
    // missing, it could not fill a real disk).
    const full = `cp -a . ../copy && mount -t tmpfs -o size=1m tmpfs . && cd "$1" && cp -a ../copy/. . && rm -rf ../copy && (dd if=/dev/zero of=filler bs=4k count=512 2>/dev/null || true)`;
    const result = await runInNamespace(sandbox, full, ['--json', ...FAST], 'ls -a; df -k . | tail -1');
    expect(result.code, result.stderr).toBe(1);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('ralph: '));
    expect(errors).toHaveLength(1);
    // ralph's own words, or git's when git is the first to need room (its index lock).
    expect(errors[0]).toMatch(/^ralph: (the disk is full: cannot (write|create the folder|replace) \S+ \(ENOSPC\)|git status failed: fatal: .*(Out of diskspace|No space left on device))$/);
    expect(result.stderr).not.toMatch(STACK);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', exitCode: 1 });
    // Inside the namespace, after the run: neither the lock file nor its folder is left.
    expect(result.after).not.toMatch(/\.ralph\.lock/);
  });
});

describe('a read-only repository', () => {
  it.skipIf(mounts.skip)(mounts.title('the dry run and the run both refuse it before anything is written, naming it'), async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const readOnly = 'mount --bind . . && mount -o remount,bind,ro .';
    const plan = await runInNamespace(sandbox, readOnly, ['--dry-run']);
    expect(plan.code, plan.stdout).toBe(1);
    expect(plan.stdout).toContain(`✗ ${sandbox.repo} is not writable (read-only file system): ralph writes its lock, its state in .ralph/ and the agent its work there`);
    expect(plan.stdout).toContain(`✗ ${sandbox.repo}/.git/objects is not writable (read-only file system): commits (the agent's and ralph's) are written there`);
    expect(plan.stdout).toMatch(/a real run could not start: 2 problem\(s\)$/m);
    const run = await runInNamespace(sandbox, readOnly, FAST);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`ralph: ✗ ${sandbox.repo} is not writable (read-only file system)`);
    expect(run.stderr).not.toMatch(STACK);
  });
});

describe('a file named .ralph', () => {
  it('the dry run and the run refuse with one line, and leave the file as it was', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const file = path.join(sandbox.repo, '.ralph');
    writeFileSync(file, 'my notes\n');
    const plan = await runRalph(sandbox, ['--dry-run']);
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain(`✗ ${file} is not a folder: ralph keeps its state (logs, status, reports) in the folder .ralph/; move the file away`);
    const run = await runRalph(sandbox, ['--json', ...FAST]);
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n').filter(Boolean)).toEqual([`ralph: ✗ ${file} is not a folder: ralph keeps its state (logs, status, reports) in the folder .ralph/; move the file away`]);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'failed', tasksRemaining: 2, problems: [expect.stringContaining('is not a folder')] });
    expect(readFileSync(file, 'utf8')).toBe('my notes\n');
    expect(statSync(file).isFile()).toBe(true);
    expectLockGone(sandbox);
  });
});
