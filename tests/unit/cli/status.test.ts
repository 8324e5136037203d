import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgv } from '../../../lib/cli/argv.ts';
import { statusCommand, type StatusReport } from '../../../lib/cli/status.ts';
import { execCommand, type Deps, type Output } from '../../../lib/deps.ts';
import { StatusFileSink } from '../../../lib/progress/status-file.ts';
import { recordAnswer, recordAsked } from '../../../lib/questions/store.ts';
import { sessionStart, summary, T0, task } from '../progress/fixtures.ts';
import { stopProcess, unrelatedProcess } from '../../support/processes.ts';
import { tempDir } from '../../support/temp.ts';

const NOW = T0 + 65_000;
const temp = () => tempDir('ralph-status-cmd-');
const collect = (isTTY = false): Output & { text: string } => {
  const out = { text: '', isTTY, write: (chunk: string) => (out.text += chunk) };
  return out;
};

function deps(root: string, options: { tty?: boolean; sleep?: Deps['sleep'] } = {}): Deps & { stdout: { text: string }; stderr: { text: string } } {
  return {
    cwd: root,
    env: { PATH: process.env.PATH, NO_COLOR: '1' },
    now: () => NOW,
    sleep: options.sleep ?? (async () => undefined),
    random: () => 0.5,
    stdout: collect(options.tty),
    stderr: collect(),
    exec: execCommand,
  };
}

/** status.json as a run with `pid` leaves it: in iteration 1, backing off. */
function writeRunState(root: string, pid: number, finished = false): void {
  const sink = new StatusFileSink(root, { host: 'box' });
  sink.emit({ ...sessionStart, pid }, T0);
  sink.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0 + 1000);
  sink.emit({ type: 'backoff', iteration: 1, attempt: 1, delayMs: 30_000, until: T0 + 90_000, reason: 'transient failure' }, T0 + 60_000);
  if (finished) sink.emit({ type: 'session_end', summary: summary() }, T0 + 61_000);
  sink.close();
}

const writeLock = (root: string, pid: number, startedAt = '2026-11-22T02:00:00.000Z') => writeFileSync(path.join(root, '.ralph.lock'), `${pid}\n${startedAt}\n001-ralph-automation\n`);

let holder: ChildProcess | undefined;
afterEach(() => {
  holder?.kill('SIGKILL');
  holder = undefined;
});

describe('ralph status', () => {
  it('describes a live run: holder alive, state, iteration, task, countdown', async () => {
    const root = temp();
    holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const pid = holder.pid!;
    // Taken after the holder started, as a real lock is (one taken before names a reused PID).
    const startedAt = new Date().toISOString();
    writeLock(root, pid, startedAt);
    writeRunState(root, pid);

    const json = deps(root);
    expect(await statusCommand(parseArgv(['status', '--json']), json)).toBe(0);
    const report = JSON.parse(json.stdout.text) as StatusReport;
    expect(report).toMatchObject({
      root,
      run: 'alive',
      alive: true,
      pid,
      current: true,
      state: 'backing_off',
      sessionId: '20261122-020000',
      iteration: 1,
      maxIterations: 50,
      task: { id: task.id, title: task.title },
      elapsedMs: 65_000,
      waitUntil: new Date(T0 + 90_000).toISOString(),
      lastEventAgeMs: 5000,
      costUsd: 0,
      lock: { pid, startedAt, branch: '001-ralph-automation', reason: null },
      // The live run's source is asked for counts; one that cannot answer is reported, not fatal.
      tasks: { error: expect.stringContaining('beads is not initialised') },
    });
    expect(report.status).toMatchObject({ pid, host: 'box', state: 'backing_off' });
    expect(json.stdout.text.trim().split('\n')).toHaveLength(1);

    const text = deps(root);
    expect(await statusCommand(parseArgv(['status']), text)).toBe(0);
    expect(text.stdout.text).toContain(`ralph is running: PID ${pid} on box, branch 001-ralph-automation, session 20261122-020000, beads (epic ws-9w6 "Feature: ralph-automation"), agent claude`);
    expect(text.stdout.text).toMatch(/state: +backing off until \d\d:\d\d:\d\d \(25s\)/);
    expect(text.stdout.text).toMatch(/iteration: +1\/50, attempt 2/);
    expect(text.stdout.text).toMatch(/task: +ws-9w6\.2 Task 1: build part 1/);
    expect(text.stdout.text).toMatch(/elapsed: +1m 05s/);
    expect(text.stdout.text).toMatch(/last event: +5\.0s ago/);
    expect(text.stdout.text).not.toMatch(/\u001b\[/);
  });

  it('notices a dead lock holder', async () => {
    const root = temp();
    writeLock(root, 999999);
    writeRunState(root, 999999);
    const json = deps(root);
    expect(await statusCommand(parseArgv(['status', '--json']), json)).toBe(0);
    expect(JSON.parse(json.stdout.text)).toMatchObject({ run: 'stale', alive: false, pid: 999999, current: true, state: 'backing_off', iteration: 1 });

    const text = deps(root);
    expect(await statusCommand(parseArgv(['status']), text)).toBe(0);
    expect(text.stdout.text).toContain('ralph is not running: .ralph.lock names PID 999999, started 2026-11-22T02:00:00.000Z, branch 001-ralph-automation, which is gone (killed?); the next run reclaims the lock');
    expect(text.stdout.text).toContain('last known state of session 20261122-020000');
  });

  it('says why a lock is stale when its PID now belongs to a process started after the lock was taken', async () => {
    const root = temp();
    // The run that took the lock at 02:00 is gone; its PID now belongs to a process started later.
    const pid = unrelatedProcess();
    writeLock(root, pid);
    writeRunState(root, pid);
    const reason = new RegExp(`^PID ${pid} now belongs to a process started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, after the lock was taken$`);
    const json = deps(root);
    expect(await statusCommand(parseArgv(['status', '--json']), json)).toBe(0);
    expect(JSON.parse(json.stdout.text)).toMatchObject({ run: 'stale', alive: false, pid, lock: { pid, reason: expect.stringMatching(reason) } });

    const text = deps(root);
    expect(await statusCommand(parseArgv(['status']), text)).toBe(0);
    const first = text.stdout.text.split('\n')[0]!;
    expect(first).toMatch(new RegExp(`^ralph is not running: \\.ralph\\.lock names PID ${pid}, started 2026-11-22T02:00:00\\.000Z, branch 001-ralph-automation, but PID ${pid} now belongs to a process started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, after the lock was taken; the next run reclaims the lock$`));
    expect(text.stdout.text).toContain('last known state of session 20261122-020000');
  });

  it('a stopped run (Ctrl+Z) is still running, and its lock line says why', async () => {
    const root = temp();
    const pid = unrelatedProcess();
    writeLock(root, pid, new Date().toISOString());
    writeRunState(root, pid);
    // Its heartbeat ten minutes old at the time status looks (NOW).
    mkdirSync(path.join(root, '.ralph.lock.d'));
    const old = new Date(NOW - 10 * 60_000);
    utimesSync(path.join(root, '.ralph.lock.d'), old, old);
    await stopProcess(pid);
    const text = deps(root);
    expect(await statusCommand(parseArgv(['status']), text)).toBe(0);
    expect(text.stdout.text).toContain(`ralph is running: PID ${pid} on box, branch 001-ralph-automation`);
    expect(text.stdout.text).toContain(`\n  lock:       PID ${pid} is stopped (Ctrl+Z?), and a suspended run keeps its lock\n`);
    const json = deps(root);
    expect(await statusCommand(parseArgv(['status', '--json']), json)).toBe(0);
    expect(JSON.parse(json.stdout.text)).toMatchObject({ run: 'alive', pid, lock: { heartbeatAgeMs: 600_000 } });
  });

  it('says when no run is going on, with the last run and the task counts', async () => {
    const root = temp();
    writeRunState(root, 999999, true);
    copyFileSync(path.join(__dirname, '..', '..', 'fixtures', 'prd', 'snarktank.json'), path.join(root, 'prd.json'));
    const json = deps(root);
    expect(await statusCommand(parseArgv(['status', '--json']), json)).toBe(0);
    const report = JSON.parse(json.stdout.text) as StatusReport;
    expect(report).toMatchObject({ run: 'none', alive: false, pid: null, lock: null, current: false, state: 'finished' });
    expect(report.tasks).toMatchObject({ source: 'prd' });
    const tasks = report.tasks as { total: number; done: number; remaining: number };
    expect(tasks.total).toBeGreaterThan(0);
    expect(tasks.done + tasks.remaining).toBe(tasks.total);

    const text = deps(root);
    expect(await statusCommand(parseArgv(['status']), text)).toBe(0);
    expect(text.stdout.text).toMatch(/^no ralph run in progress\nlast run: session 20261122-020000, .*, ended 4\.0s ago:/);
    expect(text.stdout.text).toMatch(/state: +finished: completed \(exit 0\)/);
    expect(text.stdout.text).toMatch(/tasks \(prd, .*\): \d+ done, \d+ remaining \(\d+ ready\), \d+ in all/);
  });

  it('lists the questions waiting for an answer, and the answered ones, in text and --json; the task counts say how many wait', async () => {
    const root = temp();
    copyFileSync(path.join(__dirname, '..', '..', 'fixtures', 'prd', 'snarktank.json'), path.join(root, 'prd.json'));
    const first = (JSON.parse(readFileSync(path.join(root, 'prd.json'), 'utf8')) as { userStories: Array<{ id: string; title: string; passes: boolean }> }).userStories.find((story) => !story.passes)!;
    recordAsked(root, { source: 'prd', scope: 'prd.json', taskId: first.id, taskTitle: first.title, question: 'UTC or local time?', iteration: 2, askedAt: new Date(NOW - 60_000).toISOString() });
    recordAsked(root, { source: 'prd', scope: 'prd.json', taskId: 'US-OLD', taskTitle: 'old', question: 'Which port?', iteration: 1, askedAt: new Date(NOW - 120_000).toISOString() });
    recordAnswer(root, { source: 'prd', scope: 'prd.json', taskId: 'US-OLD' }, '8080', new Date(NOW).toISOString());
    const text = deps(root);
    expect(await statusCommand(parseArgv(['status']), text)).toBe(0);
    expect(text.stdout.text).toMatch(/tasks \(prd, .*\): \d+ done, \d+ remaining \(\d+ ready, 1 waiting for an answer\), \d+ in all/);
    expect(text.stdout.text).toContain(`waiting for answers (ralph answer ${first.id} "…"):\n  ${first.id} (iteration 2, 1m 00s ago): UTC or local time?\nanswered, for the next iteration on the task:\n  US-OLD: "Which port?" → "8080"\n`);
    const json = deps(root);
    expect(await statusCommand(parseArgv(['status', '--json']), json)).toBe(0);
    expect((JSON.parse(json.stdout.text) as StatusReport).questions.map((item) => [item.taskId, item.answer])).toEqual([
      [first.id, undefined],
      ['US-OLD', '8080'],
    ]);
  });

  it('tolerates a task source it cannot read', async () => {
    const root = temp();
    copyFileSync(path.join(__dirname, '..', '..', 'fixtures', 'prd', 'malformed.json'), path.join(root, 'prd.json'));
    const json = deps(root);
    expect(await statusCommand(parseArgv(['status', '--json']), json)).toBe(0);
    expect(JSON.parse(json.stdout.text)).toMatchObject({ run: 'none', status: null, tasks: { error: expect.stringContaining('prd.json') } });
  });

  it('exits 1 outside a ralph repo', async () => {
    const root = temp();
    const d = deps(root);
    expect(await statusCommand(parseArgv(['status']), d)).toBe(1);
    expect(d.stderr.text).toMatch(/^ralph: no ralph state or task source in /);
    expect(d.stdout.text).toBe('');
  });

  it('--watch refreshes until the signal aborts (clear and redraw on a TTY)', async () => {
    const root = temp();
    mkdirSync(path.join(root, '.ralph'));
    const controller = new AbortController();
    let sleeps = 0;
    const d = deps(root, {
      tty: true,
      sleep: async (ms, signal) => {
        expect(ms).toBe(1000);
        expect(signal).toBe(controller.signal);
        sleeps += 1;
        if (sleeps === 3) {
          controller.abort('SIGINT');
          throw new Error('aborted');
        }
      },
    });
    expect(await statusCommand(parseArgv(['status', '--watch']), d, controller.signal)).toBe(0);
    expect(d.stdout.text.split('\u001b[H\u001b[2J')).toHaveLength(4);
    expect(d.stdout.text).toContain('no ralph run in progress');
  });

  it('--watch off a TTY prints one block per refresh', async () => {
    const root = temp();
    mkdirSync(path.join(root, '.ralph'));
    const controller = new AbortController();
    let sleeps = 0;
    const d = deps(root, {
      sleep: async () => {
        sleeps += 1;
        if (sleeps === 2) controller.abort();
      },
    });
    expect(await statusCommand(parseArgv(['status', '--watch']), d, controller.signal)).toBe(0);
    expect(d.stdout.text).not.toMatch(/\u001b/);
    expect(d.stdout.text.match(/^--- \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/gm)).toHaveLength(2);
  });
});
