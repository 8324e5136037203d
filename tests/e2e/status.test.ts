import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StatusFileSink } from '../../lib/progress/status-file.ts';
import { agentCalls, closeStep, FAKES, makeSandbox, runRalph, scenario, seedBeads, signalRalph, standardEpic, startRalph, waitFor, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const RECORDINGS = path.join(FAKES, '..', 'fixtures', 'recordings');
const lockPath = (box: Sandbox) => path.join(box.repo, '.ralph.lock');
const statusFile = (box: Sandbox) => path.join(box.repo, '.ralph', 'status.json');

type Status = Record<string, unknown> & { state: string; pid: number; iteration: number; waitUntil: string | null; task: { id: string } | null; attempt: number; lastFailure: { kind: string } | null };

function readStatus(box: Sandbox): Status | undefined {
  try {
    return JSON.parse(readFileSync(statusFile(box), 'utf8')) as Status;
  } catch {
    return undefined;
  }
}

/** Polls status.json until `check` holds; returns the status that satisfied it. */
async function waitForStatus(box: Sandbox, check: (status: Status) => boolean, what: string, timeoutMs = 20_000): Promise<Status> {
  let seen: Status | undefined;
  await waitFor(() => {
    const status = readStatus(box);
    if (status && check(status)) seen = status;
    return seen !== undefined;
  }, timeoutMs, what);
  return seen!;
}

/** Full jitter draws from Math.random: pinned near 1, a 2s backoff really lasts about 2s. */
const PINNED_RANDOM = { NODE_OPTIONS: '--import=data:text/javascript,Math.random=()=>0.999' };

describe('ralph status, end to end', () => {
  it('reports a live run from another process: alive, pid, iteration, task, counts', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    scenario(sandbox, [{ replay: 'claude-ok.jsonl', hang: true, marker: 'AGENT-STARTED' }]);
    const run = startRalph(sandbox, ['--kill-grace', '500ms']);
    let lockPid = 0;
    try {
      const live = await waitForStatus(sandbox, (status) => status.state === 'running' && status.task !== null, 'status.json to show the run');
      lockPid = Number(readFileSync(lockPath(sandbox), 'utf8').split('\n')[0]);
      expect(live).toMatchObject({ pid: lockPid, iteration: 1, maxIterations: 50, mode: 'beads', agent: 'claude', branch: '001-ralph-automation', task: { id: 'ws-9w6.2', title: 'Task 1: build part 1' } });

      const json = await runRalph(sandbox, ['status', '--json']);
      expect(json.code, json.stderr).toBe(0);
      const report = JSON.parse(json.stdout) as Record<string, unknown>;
      expect(report).toMatchObject({
        run: 'alive',
        alive: true,
        pid: lockPid,
        current: true,
        state: 'running',
        iteration: 1,
        maxIterations: 50,
        task: { id: 'ws-9w6.2', title: 'Task 1: build part 1' },
        lock: { pid: lockPid, branch: '001-ralph-automation' },
        tasks: { source: 'beads', done: 1, remaining: 2 },
      });
      expect(typeof report.elapsedMs).toBe('number');

      const text = await runRalph(sandbox, ['status']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain(`ralph is running: PID ${lockPid}`);
      expect(text.stdout).toMatch(/task: +ws-9w6\.2 Task 1: build part 1/);
      expect(text.stdout).toMatch(/tasks \(beads, epic ws-9w6 "Feature: ralph-automation"\): 1 done, 2 remaining/);
      expect(text.stdout).not.toMatch(/\u001b\[/);
    } finally {
      if (existsSync(lockPath(sandbox))) signalRalph(sandbox, 'SIGINT');
      else run.child.kill('SIGINT');
    }
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(readStatus(sandbox)).toMatchObject({ state: 'finished', status: 'interrupted', exitCode: 130 });
    const after = await runRalph(sandbox, ['status', '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({ run: 'none', alive: false, state: 'finished' });
    // The typed event log of the run.
    const events = readFileSync(path.join(sandbox.repo, '.ralph', 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; at: string });
    expect(events[0]).toMatchObject({ type: 'session_start', pid: lockPid });
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['session_start', 'iteration_start', 'agent', 'session_end']));
    expect(events.every((event) => /^\d{4}-\d\d-\d\dT/.test(event.at))).toBe(true);
  });

  it('notices a dead lock holder', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    writeFileSync(lockPath(sandbox), '999999\n2026-11-21T23:00:00.000Z\n001-ralph-automation\n');
    const sink = new StatusFileSink(sandbox.repo, { host: 'gone-host' });
    const start = Date.now() - 60_000;
    sink.emit({ type: 'session_start', sessionId: '20261121-230000', source: 'beads', target: 'epic ws-9w6', agent: 'claude', maxIterations: 50, branch: '001-ralph-automation', pid: 999999, logDir: '/x' }, start);
    sink.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task: { id: 'ws-9w6.2', title: 'Task 1: build part 1', status: 'open' } }, start + 1000);
    sink.close();

    const json = await runRalph(sandbox, ['status', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ run: 'stale', alive: false, pid: 999999, current: true, state: 'running', iteration: 1, task: { id: 'ws-9w6.2' } });
    const text = await runRalph(sandbox, ['status']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('ralph is not running: .ralph.lock names PID 999999, started 2026-11-21T23:00:00.000Z, branch 001-ralph-automation, which is gone');
    // status only reads: the stale lock is still there for the next run to reclaim.
    expect(existsSync(lockPath(sandbox))).toBe(true);
  });

  it('exits 1 outside a ralph repo', async () => {
    sandbox = makeSandbox();
    const result = await runRalph(sandbox, ['status']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no ralph state or task source in /);
  });

  it('status.json shows backing_off with waitUntil during a backoff', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'claude-429.jsonl', exit: 1 }, closeStep('ws-9w6.2')]);
    const run = startRalph(sandbox, ['--retry-delay', '2s', '--retry-max-delay', '2s', '--kill-grace', '500ms'], PINNED_RANDOM);
    const backing = await waitForStatus(sandbox, (status) => status.state === 'backing_off', 'status.json to show the backoff');
    const until = Date.parse(backing.waitUntil ?? '');
    // About 2 s after the backoff began (its event in events.jsonl), not after the test happened to look:
    // status.json says backing_off until the next agent prints, which a loaded machine can make late.
    // Whole lines only: the last one may be half written while the run goes on.
    const backoffEvent = () =>
      readFileSync(path.join(sandbox.repo, '.ralph', 'events.jsonl'), 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line) as { type: string; at: string; until?: number }).find((event) => event.type === 'backoff');
    // status.json is written just before events.jsonl: wait for the line.
    await waitFor(() => backoffEvent() !== undefined, 5000, 'the backoff in events.jsonl');
    const backoff = backoffEvent();
    expect(backoff?.until).toBe(until);
    expect(until).toBeGreaterThan(Date.parse(backoff!.at) + 1500);
    expect(until).toBeLessThanOrEqual(Date.now() + 2500);
    expect(backing).toMatchObject({ iteration: 1, attempt: 2, waitReason: 'transient failure', task: { id: 'ws-9w6.2' }, lastFailure: { kind: 'transient' } });
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox)).toHaveLength(2);
    expect(readStatus(sandbox)).toMatchObject({ state: 'finished', status: 'completed', exitCode: 0, waitUntil: null, counts: { iterations: 1, passed: 1, tasksCompleted: 1 } });
  });

  // A live wait is checked during a reset minutes away (then the run is stopped), and the end of a wait in a
  // second run with a short one: a wait of a few seconds could end, under load, before a second ralph had
  // started to read the status (seen with 8 s on the shared machine).
  const usageLimit = (resetInSeconds: number) => {
    const recorded = readFileSync(path.join(RECORDINGS, 'claude-oauth-unified5h.jsonl'), 'utf8').split('\n').filter(Boolean);
    const rateLimit = recorded.find((line) => line.includes('"rate_limit_event"'))!.replace(/"resetsAt":\d+/, '"resetsAt":__RESET_EPOCH__');
    const resultLine = recorded.find((line) => line.includes('"type":"result"'))!;
    return { lines: [rateLimit, resultLine], resetInSeconds, exit: 1 };
  };

  it('status.json and ralph status show waiting_usage_reset during a usage-limit wait', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [usageLimit(300), closeStep('ws-9w6.2')]);
    const run = startRalph(sandbox, ['--kill-grace', '500ms']);
    const waiting = await waitForStatus(sandbox, (status) => status.state === 'waiting_usage_reset', 'status.json to show the usage wait');
    const until = Date.parse(waiting.waitUntil ?? '');
    // The announced reset (5 minutes away) plus ralph's small margin.
    expect(until).toBeGreaterThan(Date.now() + 60_000);
    expect(until).toBeLessThan(Date.now() + 400_000);
    // A usage wait spends no attempt.
    expect(waiting).toMatchObject({ iteration: 1, attempt: 1, lastFailure: { kind: 'usage_limit' }, waitReason: expect.stringContaining('usage limit') });

    const json = await runRalph(sandbox, ['status', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ alive: true, state: 'waiting_usage_reset', waitUntil: waiting.waitUntil });

    signalRalph(sandbox, 'SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(agentCalls(sandbox)).toHaveLength(1);
    expect(readStatus(sandbox)).toMatchObject({ state: 'finished', status: 'interrupted', waitUntil: null });
  });

  it('after a usage-limit wait the run goes on, and status.json no longer names a wait', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [usageLimit(2), closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, ['--kill-grace', '500ms']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/usage limit: waiting until/);
    expect(agentCalls(sandbox)).toHaveLength(2);
    expect(readStatus(sandbox)).toMatchObject({ state: 'finished', status: 'completed', waitUntil: null });
  });

  it('--on-exit runs the hook with the run’s status in its environment', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const out = path.join(sandbox.root, 'hook.json');
    const probe = `require('fs').writeFileSync('${out}',JSON.stringify({s:process.env.RALPH_STATUS,c:process.env.RALPH_EXIT_CODE,r:process.env.RALPH_REPORT,id:process.env.RALPH_SESSION}))`;
    const result = await runRalph(sandbox, ['--json', '--on-exit', `node -e "${probe}" && echo hook-ran`, '--kill-grace', '500ms']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { sessionId: string };
    const seen = JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
    expect(seen).toMatchObject({ s: 'completed', c: '0', id: summary.sessionId });
    expect(typeof seen.r).toBe('string');
    // The hook's output goes to stderr; stdout keeps only the JSON summary.
    expect(result.stderr).toContain('hook-ran');
  });
});
