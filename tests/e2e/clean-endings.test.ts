// How a run ends when nobody chose the moment, and what the next start then finds: a run refused by a live
// lock touches nothing of that run's; a clean failure or a signal puts the task in flight back as it was;
// an output that closes (`| head`, a tee that dies) ends the run as cleanly as a hang-up. ralph is started
// as users start it (node bin/ralph.mjs), in a temp repository, with the fake agent.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, FAST, makeSandbox, PROJECT, scenario, waitFor, type RalphResult, type Sandbox } from './helpers.ts';
import { prdProject, prdStories, report } from './projects.ts';
import { main } from '../../lib/cli/main.ts';
import { abortableSleep, execCommand, type Deps } from '../../lib/deps.ts';
import { unrelatedProcess } from '../support/processes.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const BIN = path.join(PROJECT, 'bin', 'ralph.mjs');
const lockPath = (box: Sandbox): string => path.join(box.repo, '.ralph.lock');

/** Starts `node bin/ralph.mjs ARGS` in the sandbox repo, both streams into pipes read to the end. */
function start(box: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): { done: Promise<RalphResult>; output: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: box.repo, env: { ...box.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<RalphResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { done, output: () => stderr };
}

/** Every file of the repository and of .git as bytes (hashed), with the index's mtime: what a run may have touched. */
function fingerprint(box: Sandbox): Record<string, string> {
  const seen: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (full.includes(`${path.sep}.ralph${path.sep}logs`)) continue; // the live run's agent log grows by itself
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) seen[path.relative(box.repo, full)] = `${createHash('sha256').update(readFileSync(full)).digest('hex')} ${statSync(full).mtimeMs}`;
    }
  };
  walk(box.repo);
  return seen;
}

describe('a run refused by a live lock', () => {
  it('says only the refusal, and touches nothing of the live run (its task state in flight included)', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prdStories(2));
    const release = path.join(sandbox.root, 'release');
    scenario(sandbox, [{ waitFile: release, write: { 'app.txt': 'one\n' }, lines: [report()] }, { write: { 'app.txt': 'one\ntwo\n' }, lines: [report()] }]);
    const live = start(sandbox, FAST);
    try {
      await waitFor(() => agentCalls(sandbox).length === 1, 30_000, 'the live run to start its agent');
      // The live run's state in flight: US-001 in_iteration in prd.json, uncommitted.
      expect(execFileSync('git', ['status', '--porcelain'], { cwd: sandbox.repo, encoding: 'utf8' })).toContain('prd.json');
      const before = fingerprint(sandbox);
      const refused = await start(sandbox, FAST).done;
      expect(refused.code, refused.stderr).toBe(1);
      const holder = readFileSync(lockPath(sandbox), 'utf8').split('\n');
      const lines = refused.stderr.split('\n');
      expect(lines[0]).toBe(`ralph: another ralph holds ${lockPath(sandbox)} (PID ${holder[0]}, started ${holder[1]}, branch 001-ralph-automation)`);
      expect(refused.stderr).not.toContain('warning');
      expect(fingerprint(sandbox)).toEqual(before);
    } finally {
      writeFileSync(release, '');
      await live.done;
    }
    const done = await live.done;
    expect(done.code, done.stderr).toBe(0);
    expect(agentCalls(sandbox)).toHaveLength(2);
    expect(existsSync(lockPath(sandbox))).toBe(false);
  });

  it('refused only after the heartbeat was watched (another run started meanwhile): still nothing but the refusal, and no git status of the live tree', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prdStories(2));
    // A detached HEAD makes the run warn before it takes the lock; the live run's prd.json is in flight.
    execFileSync('git', ['checkout', '-q', '--detach'], { cwd: sandbox.repo, env: sandbox.env });
    const prd = path.join(sandbox.repo, 'prd.json');
    writeFileSync(prd, readFileSync(prd, 'utf8').replace('"passes": false', '"passes": false, "status": "in_iteration"'));
    // A lock whose holder started after the lock's time but beats: the first look cannot refuse it, the watch does.
    const holder = unrelatedProcess();
    const taken = new Date(Date.now() - 60_000).toISOString();
    writeFileSync(path.join(sandbox.repo, '.ralph.lock'), `${holder}\n${taken}\nmain\n`);
    const beat = (): void => {
      mkdirSync(`${lockPath(sandbox)}.d`, { recursive: true });
      const now = new Date();
      utimesSync(`${lockPath(sandbox)}.d`, now, now);
    };
    beat();
    const before = fingerprint(sandbox);
    const err: string[] = [];
    const deps: Deps = {
      cwd: sandbox.repo,
      env: sandbox.env,
      now: () => Date.now(),
      // The watch's 7 s pass at once, and the holder beats meanwhile.
      sleep: (ms, signal) => (ms === 7000 ? (beat(), abortableSleep(0, signal)) : abortableSleep(ms, signal)),
      random: Math.random,
      stdout: { write: () => true },
      stderr: { write: (text: string) => err.push(text) },
      exec: execCommand,
    };
    const code = await main(['--no-commit', ...FAST], new AbortController().signal, deps);
    const said = err.join('').split('\n').filter(Boolean);
    expect(code, said.join('\n')).toBe(1);
    expect(said[0]).toMatch(/warning: .*\.ralph\.lock: PID \d+ now belongs to a process started .*, but its heartbeat is fresh; watching the heartbeat for 7s$/);
    expect(said[1]).toBe(`ralph: another ralph holds ${lockPath(sandbox)} (PID ${holder}, started ${taken}, branch main)`);
    expect(said.join('\n')).not.toMatch(/HEAD is detached|task state/);
    const after = fingerprint(sandbox);
    delete after['.ralph.lock.d'];
    delete before['.ralph.lock.d'];
    expect(after).toEqual(before);
  });
});
