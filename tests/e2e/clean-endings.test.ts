// How a run ends when nobody chose the moment, and what the next start then finds: a run refused by a live
// lock touches nothing of that run's; a clean failure or a signal puts the task in flight back as it was;
// an output that closes (`| head`, a tee that dies) ends the run as cleanly as a hang-up. ralph is started
// as users start it (node bin/ralph.mjs), in a temp repository, with the fake agent.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, agentPids, bdCalls, closeStep, FAST, makeSandbox, PROJECT, readBeads, scenario, seedBeads, standardEpic, waitFor, type RalphResult, type Sandbox } from './helpers.ts';
import { answer, FEATURE, prdProject, prdStories, report, specKitProject, tick } from './projects.ts';
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
  // The live run also takes a SIGPIPE while its agent works: it is no stop, only a failed write of ralph's own
  // output is (the signal cannot say which pipe closed).
  it('says only the refusal, and touches nothing of the live run (its task state in flight included); SIGPIPE to the live run is no stop', async () => {
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
      process.kill(Number(holder[0]), 'SIGPIPE');
      // Long enough for a handler to have stopped the run, had there been one.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      writeFileSync(release, '');
      await live.done;
    }
    const done = await live.done;
    expect(done.code, done.stderr).toBe(0);
    expect(agentCalls(sandbox)).toHaveLength(2);
    expect(existsSync(lockPath(sandbox))).toBe(false);
    expect(prdItems(sandbox).map((story) => story.passes)).toEqual([true, true]);
  });

  it('beads: the refused run asks bd nothing (the lock is looked at before the source is read)', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    const release = path.join(sandbox.root, 'release');
    const close = closeStep('ws-9w6.2') as { run: string[][] };
    scenario(sandbox, [{ ...close, waitFile: release }]);
    const live = start(sandbox, FAST);
    try {
      await waitFor(() => agentCalls(sandbox).length === 1, 30_000, 'the live run to start its agent');
      // The refused run's bd calls go to a log of its own, apart from the live run's.
      const refusedLog = path.join(sandbox.root, 'bd-refused.log');
      const refused = await start(sandbox, FAST, { FAKE_BD_LOG: refusedLog }).done;
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr.split('\n')[0]).toMatch(/^ralph: another ralph holds /);
      expect(existsSync(refusedLog) ? readFileSync(refusedLog, 'utf8') : '').toBe('');
      expect(bdCalls(sandbox).length).toBeGreaterThan(0);
    } finally {
      writeFileSync(release, '');
      await live.done;
    }
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

/**
 * ralph with stdout and stderr into one pipe (`2>&1 |`), read by a reader that closes it once it has `lines`
 * lines and `until()` holds, as `head -N` does a moment after its last line. ralph's own PID is the child's (exec).
 */
function startPiped(box: Sandbox, args: string[], lines: number, until: () => boolean) {
  const child = spawn('sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, BIN, ...args], { cwd: box.repo, env: box.env, stdio: ['ignore', 'pipe', 'ignore'] });
  let seen = '';
  const read = new Promise<string>((resolve) => {
    const check = setInterval(() => {
      if (seen.split('\n').length > lines && until()) {
        clearInterval(check);
        child.stdout!.destroy();
        resolve(seen.split('\n').slice(0, lines).join('\n'));
      }
    }, 20);
    child.on('exit', () => clearInterval(check));
  });
  child.stdout!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { pid: child.pid!, done, read };
}

const statusFile = (box: Sandbox) => JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'status.json'), 'utf8')) as Record<string, unknown>;
const prdItems = (box: Sandbox) => (JSON.parse(readFileSync(path.join(box.repo, 'prd.json'), 'utf8')) as { userStories: Array<{ id: string; passes: boolean; status?: string }> }).userStories;
const reports = (box: Sandbox): string[] => {
  const dir = path.join(box.repo, '.ralph', 'reports');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('the output closes while the agent works', () => {
  it('ralph … 2>&1 | head -3: exit 141, the agent tree stopped, the lock released, status and report written; the next start finishes the work', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prdStories(2));
    const started = path.join(sandbox.root, 'started');
    scenario(sandbox, [
      // The agent writes half its work, starts a grandchild that ignores SIGTERM, and works on.
      { write: { 'work-1.txt': 'half\n' }, touch: started, grandchild: true, hang: true },
      { write: { 'work-1.txt': 'done\n' }, lines: [report()] },
      { write: { 'work-2.txt': 'done\n' }, lines: [report()] },
    ]);
    // Three lines (the run, its logs, iteration 1), then the reader goes away while the agent works; ralph's
    // next line (the heartbeat) fails.
    const run = startPiped(sandbox, ['--heartbeat', '1s', ...FAST], 3, () => agentPids(sandbox).length === 2);
    const shown = await run.read;
    expect(shown).toMatch(/iteration 1\/10: US-001 Story 1$/);
    const ended = await run.done;
    expect(ended.code).toBe(141);
    expect(existsSync(lockPath(sandbox))).toBe(false);
    expect(statusFile(sandbox)).toMatchObject({ state: 'finished', status: 'interrupted', exitCode: 141, message: "ralph's stderr closed (EPIPE: the reader of the pipe went away); the agent was stopped" });
    expect(reports(sandbox).some((file) => file.endsWith('.md'))).toBe(true);
    await waitFor(() => agentPids(sandbox).every((pid) => !pidAliveNow(pid)), 5000, 'the agent and its grandchild to be gone');
    expect(prdItems(sandbox).find((story) => story.id === 'US-001')?.status).not.toBe('in_iteration');

    const next = await start(sandbox, FAST).done;
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toMatch(/left in_iteration|interrupted run|warning:/);
    expect(next.stderr).toContain(`uncommitted work of iteration 1 on US-001, which did not finish (1 path: work-1.txt), is ralph's, not yours: US-001 runs again with it, and ralph's next commit takes it`);
    expect(prdItems(sandbox).map((story) => story.passes)).toEqual([true, true]);
    expect(readFileSync(path.join(sandbox.repo, 'work-1.txt'), 'utf8')).toBe('done\n');
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: sandbox.repo, encoding: 'utf8' })).toBe('');
  });
});

describe('stderr redirected to a full disk (2>/dev/full)', () => {
  it('the first line that cannot be written ends the run with 141, the state saying why; nothing left running', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prdStories(1));
    scenario(sandbox, [{ write: { 'work-1.txt': 'done\n' }, lines: [report()] }]);
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [BIN, ...FAST], { cwd: sandbox.repo, env: sandbox.env, stdio: ['ignore', 'ignore', full] });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    closeSync(full);
    expect(code).toBe(141);
    expect(statusFile(sandbox)).toMatchObject({ state: 'finished', status: 'interrupted', exitCode: 141, message: "ralph's stderr closed (ENOSPC); the agent was stopped" });
    expect(existsSync(lockPath(sandbox))).toBe(false);
    expect(prdItems(sandbox).filter((story) => story.status === 'in_iteration')).toEqual([]);
  });
});

function pidAliveNow(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const RECORDINGS = path.join(PROJECT, 'tests', 'fixtures', 'recordings');
/** claude hitting its 5-hour limit, the reset an hour away: past --max-wait 1s, a clean exit 1. */
function usageLimitStep(): Record<string, unknown> {
  const recorded = readFileSync(path.join(RECORDINGS, 'claude-oauth-unified5h.jsonl'), 'utf8').split('\n').filter(Boolean);
  const rateLimit = recorded.find((line) => line.includes('"rate_limit_event"'))!.replace(/"resetsAt":\d+/, '"resetsAt":__RESET_EPOCH__');
  return { lines: [rateLimit, recorded.find((line) => line.includes('"type":"result"'))!], resetInSeconds: 3600, exit: 1 };
}

const SPECKIT_TASKS = ['# Tasks: Demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create the project', '- [ ] T002 Write greet()', ''].join('\n');
const tracking = (box: Sandbox) => JSON.parse(readFileSync(path.join(box.repo, FEATURE, 'ralph-tasks.json'), 'utf8')) as { current?: unknown; running?: unknown[] };

interface SourceCase {
  setup(box: Sandbox): void;
  /** What the agent does in the iteration that does not finish, before the ending comes. */
  begin: Record<string, unknown>;
  /** The next run's agent: finishes every task. */
  finish: Array<Record<string, unknown>>;
  inFlight(box: Sandbox): unknown[];
  done(box: Sandbox): boolean;
}

const SOURCES: Record<'prd' | 'speckit' | 'beads', SourceCase> = {
  prd: {
    setup: (box) => prdProject(box, prdStories(2)),
    begin: { write: { 'work-1.txt': 'half\n' } },
    finish: [{ write: { 'work-1.txt': 'done\n' }, lines: [report()] }, { write: { 'work-2.txt': 'done\n' }, lines: [report()] }],
    inFlight: (box) => prdItems(box).filter((story) => story.status === 'in_iteration'),
    // Every story's work in a commit of ralph's, the unfinished iteration's included: nothing left in the tree.
    done: (box) => prdItems(box).every((story) => story.passes) && execFileSync('git', ['status', '--porcelain'], { cwd: box.repo, encoding: 'utf8' }) === '',
  },
  speckit: {
    setup: (box) => specKitProject(box, SPECKIT_TASKS),
    begin: {},
    finish: [{ edit: [tick('T001')], lines: [answer('Did T001.')] }, { edit: [tick('T002')], lines: [answer('Did T002.')] }],
    inFlight: (box) => [tracking(box).current, ...(tracking(box).running ?? [])].filter(Boolean),
    done: (box) => !readFileSync(path.join(box.repo, FEATURE, 'tasks.md'), 'utf8').includes('- [ ]'),
  },
  beads: {
    setup: (box) => seedBeads(box, standardEpic(2)),
    // /sp:next claims the bead it works on.
    begin: { run: [['bd', 'update', 'ws-9w6.2', '--status', 'in_progress', '--json']] },
    finish: [closeStep('ws-9w6.2'), closeStep('ws-9w6.3')],
    inFlight: (box) => readBeads(box).filter((issue) => issue.status === 'in_progress'),
    done: (box) => readBeads(box).filter((issue) => issue.id.startsWith('ws-9w6.') && issue.id !== 'ws-9w6.1').every((issue) => issue.status === 'closed'),
  },
};
/** What a start says after a crash: a clean ending must leave nothing for it. */
const CRASH_GREETING = /left in_iteration|did not finish \(interrupted run\)|left in_progress by an interrupted run/;

type Ending = { name: string; code: number; args?: string[]; signal?: NodeJS.Signals; step?: () => Record<string, unknown> };
const USAGE: Ending = { name: 'a usage limit past --max-wait', code: 1, args: ['--max-wait', '1s'], step: usageLimitStep };
const ENDINGS: Array<[keyof typeof SOURCES, Ending]> = [
  ['prd', USAGE],
  ['prd', { name: 'SIGINT', code: 130, signal: 'SIGINT' }],
  ['prd', { name: 'SIGTERM', code: 143, signal: 'SIGTERM' }],
  ['prd', { name: 'SIGHUP', code: 129, signal: 'SIGHUP' }],
  ['prd', { name: 'SIGTERM with --parallel 2', code: 143, signal: 'SIGTERM', args: ['--parallel', '2'] }],
  ['speckit', USAGE],
  ['speckit', { name: 'SIGTERM', code: 143, signal: 'SIGTERM' }],
  ['beads', USAGE],
  ['beads', { name: 'SIGHUP', code: 129, signal: 'SIGHUP' }],
];

describe('a clean ending puts the task in flight back: the next start is a plain one', () => {
  it.each(ENDINGS.map(([name, ending]) => [name, ending.name, ending] as const))('%s: %s', async (name, _title, ending) => {
    const source = SOURCES[name];
    sandbox = makeSandbox();
    source.setup(sandbox);
    const started = path.join(sandbox.root, 'started');
    const hold = ending.signal ? { touch: started, awaitFiles: [path.join(sandbox.root, 'never')] } : {};
    const first = { ...source.begin, ...hold, ...(ending.step?.() ?? {}) };
    // --parallel 2: both workers' agents hold until signalled.
    scenario(sandbox, ending.args?.includes('--parallel') ? [first, first, ...source.finish] : [first, ...source.finish]);
    const run = start(sandbox, [...(ending.args ?? []), ...FAST]);
    if (ending.signal) {
      const agents = ending.args?.includes('--parallel') ? 2 : 1;
      await waitFor(() => existsSync(started) && agentCalls(sandbox).length === agents, 30_000, 'the agents to start working');
      process.kill(Number(readFileSync(lockPath(sandbox), 'utf8').split('\n')[0]), ending.signal);
    }
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(ending.code);
    expect(source.inFlight(sandbox)).toEqual([]);
    expect(existsSync(lockPath(sandbox))).toBe(false);

    const next = await start(sandbox, FAST).done;
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toMatch(CRASH_GREETING);
    // PRD (ralph commits): not even a warning; the task state the ending wrote went into a commit of its own.
    if (name === 'prd') expect(next.stderr).not.toMatch(/warning:/);
    expect(source.done(sandbox)).toBe(true);
  });
});
