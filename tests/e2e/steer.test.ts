// Steering a running loop from another terminal: ralph stop (after the iteration, or --now), ralph pause
// and unpause, and the safety of the control channel (stale and foreign requests are never obeyed).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, agentPids, closeStep, FAKES, FAST, makeSandbox, pidAlive, readBeads, runRalph, scenario, seedBeads, standardEpic, startRalph, waitFor, type Sandbox } from './helpers.ts';
import { events, startWebhook, type Webhook } from './webhook.ts';
import { prdProject, report } from './projects.ts';

let sandbox: Sandbox | undefined;
let hook: Webhook | undefined;
afterEach(async () => {
  await hook?.close();
  hook = undefined;
  sandbox?.cleanup();
  sandbox = undefined;
});

type Status = { state: string; pid: number; iteration: number; pausedSince: string | null; stopRequestedAt: string | null; task: { id: string } | null };

function readStatus(box: Sandbox): Status | undefined {
  try {
    return JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'status.json'), 'utf8')) as Status;
  } catch {
    return undefined;
  }
}

async function waitForStatus(box: Sandbox, check: (status: Status) => boolean, what: string): Promise<Status> {
  let seen: Status | undefined;
  await waitFor(() => {
    const status = readStatus(box);
    if (status && check(status)) seen = status;
    return seen !== undefined;
  }, 20_000, what);
  return seen!;
}

const lockFile = (box: Sandbox): string => path.join(box.repo, '.ralph.lock');
const release = (box: Sandbox, name: string): string => path.join(box.root, name);
/** An agent run that hits claude's five-hour limit, resetting `seconds` from now (a recorded event). */
function usageLimitStep(seconds: number): Record<string, unknown> {
  const recorded = readFileSync(path.join(FAKES, '..', 'fixtures', 'recordings', 'claude-oauth-unified5h.jsonl'), 'utf8').split('\n').filter(Boolean);
  const rateLimit = recorded.find((line) => line.includes('"rate_limit_event"'))!.replace(/"resetsAt":\d+/, '"resetsAt":__RESET_EPOCH__');
  const resultLine = recorded.find((line) => line.includes('"type":"result"'))!;
  return { lines: [rateLimit, resultLine], resetInSeconds: seconds, exit: 1 };
}

const gitLog = (box: Sandbox): string => execFileSync('git', ['log', '--format=%s'], { cwd: box.repo, encoding: 'utf8' });

describe('ralph stop', () => {
  it('lets the current iteration finish and be committed, then ends with 130, lock and agent gone', async () => {
    const box = (sandbox = makeSandbox());
    hook = await startWebhook();
    seedBeads(box, standardEpic(3));
    scenario(box, [
      { waitFile: release(box, 'go-1'), write: { 'part1.txt': 'part one\n' }, ...closeStep('ws-9w6.2') },
      closeStep('ws-9w6.3'),
    ]);
    const run = startRalph(box, ['--commit', '--json', '--notify', hook.url, ...FAST]);
    await waitFor(() => agentCalls(box).length === 1, 20_000, 'the first agent to start');
    const lockPid = Number(readFileSync(lockFile(box), 'utf8').split('\n')[0]);

    const stop = await runRalph(box, ['stop']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`ralph (PID ${lockPid}) will stop after its current iteration (iteration 1: ws-9w6.2 Task 1: build part 1)`);
    // The run notices at once: status.json and ralph status say so while the agent still works.
    await waitForStatus(box, (status) => status.stopRequestedAt !== null, 'the run to notice the stop');
    const status = await runRalph(box, ['status']);
    expect(status.stdout).toMatch(/state: +running; stopping after this iteration/);
    // Two stop requests are one.
    const again = await runRalph(box, ['stop']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/a stop was already requested at .*: ralph \(PID \d+\) ends after its current iteration/);

    writeFileSync(release(box, 'go-1'), '');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toMatch(/stop requested by ralph stop \(PID \d+\): the run ends after the current iteration/);
    expect(result.stderr).toMatch(/interrupted: stopped on request after iteration 1 \(1 iteration, 1 done, 2 remaining/);
    expect(result.stderr.match(/stop requested by/g)).toHaveLength(1);
    const summary = JSON.parse(result.stdout) as { status: string; exitCode: number; message: string; records: Array<{ outcome: string; commit?: string }> };
    expect(summary).toMatchObject({ status: 'interrupted', exitCode: 130, message: 'stopped on request after iteration 1' });
    expect(summary.records).toHaveLength(1);
    expect(summary.records[0]).toMatchObject({ outcome: 'pass', commit: expect.stringMatching(/^[0-9a-f]{40}$/) });
    // The iteration's work is committed and recorded; no second agent started.
    expect(gitLog(box)).toMatch(/^ralph: ws-9w6\.2 Task 1: build part 1$/m);
    expect(execFileSync('git', ['show', '--name-only', '--format=', 'HEAD'], { cwd: box.repo, encoding: 'utf8' })).toContain('part1.txt');
    expect(readBeads(box).find((issue) => issue.id === 'ws-9w6.2')?.status).toBe('closed');
    expect(agentCalls(box)).toHaveLength(1);
    expect(existsSync(lockFile(box))).toBe(false);
    expect(existsSync(path.join(box.repo, '.ralph', 'control', 'stop'))).toBe(false);
    for (const pid of agentPids(box)) expect(pidAlive(pid), `agent ${pid}`).toBe(false);
    expect(readStatus(box)).toMatchObject({ state: 'finished', stopRequestedAt: expect.any(String) });
    // The stop was announced to the webhook, once.
    const stops = events(hook).filter((message) => message.event === 'stop');
    expect(stops).toHaveLength(1);
    expect(stops[0]).toMatchObject({ level: 'warning', title: expect.stringContaining('stop requested'), by: expect.stringMatching(/^ralph stop \(PID \d+\)$/) });
    expect(events(hook).at(-1)).toMatchObject({ event: 'end', status: 'interrupted', exitCode: 130 });

    // With no run alive: says so, exit 1.
    const none = await runRalph(box, ['stop']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`ralph: no ralph run in progress in ${box.repo}`);
  }, 60_000);

  it('--now stops the agent at once like Ctrl+C: exit 130, agent tree and lock gone', async () => {
    const box = (sandbox = makeSandbox());
    seedBeads(box, standardEpic(2));
    scenario(box, [{ replay: 'claude-ok.jsonl', hang: true, grandchild: true }]);
    const run = startRalph(box, FAST);
    await waitFor(() => agentPids(box).length >= 2, 20_000, 'the agent and its grandchild');
    const stop = await runRalph(box, ['stop', '--now']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toMatch(/sent SIGINT to ralph \(PID \d+\): it stops the agent now, like Ctrl\+C\nralph \(PID \d+\) stopped\n/);
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/interrupted: interrupted by SIGINT; the agent was stopped/);
    expect(existsSync(lockFile(box))).toBe(false);
    for (const pid of agentPids(box)) expect(pidAlive(pid), `agent process ${pid}`).toBe(false);
  }, 60_000);

  it('with no run: exit 1, and a request a dead run left behind is removed', async () => {
    const box = (sandbox = makeSandbox());
    seedBeads(box, standardEpic(1));
    mkdirSync(path.join(box.repo, '.ralph', 'control'), { recursive: true });
    const stale = { version: 1, kind: 'pause', target: { pid: 999_999, startedAt: '2026-01-01T00:00:00.000Z' }, uid: process.getuid?.() ?? -1, by: 'ralph pause (PID 1)', requestedAt: '2026-01-01T00:00:01.000Z' };
    writeFileSync(path.join(box.repo, '.ralph', 'control', 'pause'), JSON.stringify(stale));
    for (const command of ['stop', 'pause', 'unpause']) {
      const result = await runRalph(box, [command]);
      expect(result.code, command).toBe(1);
      expect(result.stderr, command).toContain(`no ralph run in progress in ${box.repo}`);
    }
    expect(existsSync(path.join(box.repo, '.ralph', 'control', 'pause'))).toBe(false);
    const now = await runRalph(box, ['pause', '--now']);
    expect(now.code).toBe(1);
    expect(now.stderr).toContain("ralph: --now is not an option of 'ralph pause': it is an option of 'ralph stop'");
  });
});

describe('ralph stop with --parallel 2', () => {
  it('lets both running iterations finish and merge, starts no other, then ends with 130', async () => {
    const box = (sandbox = makeSandbox({ branch: 'ralph/demo' }));
    const stories = Array.from({ length: 4 }, (_, index) => ({ id: `US-00${index + 1}`, title: `Story ${index + 1}`, description: 'd', acceptanceCriteria: ['works'], priority: index + 1, passes: false, notes: '' }));
    prdProject(box, { project: 'Demo', branchName: 'ralph/demo', description: 'demo', userStories: stories });
    const go = release(box, 'go');
    const file = path.join(box.root, 'scenario.json');
    writeFileSync(file, JSON.stringify({ byPrompt: [1, 2, 3, 4].map((n) => ({ match: `**US-00${n}**`, steps: [{ waitFile: go, write: { [`story-${n}.txt`]: `story ${n}\n` }, lines: [report('completed')] }] })), steps: [{ lines: [report('failed')] }] }));
    box.env.FAKE_AGENT_SCENARIO = file;
    const run = startRalph(box, ['--parallel', '2', '--json', ...FAST]);
    await waitFor(() => agentCalls(box).length === 2, 30_000, 'two agents at once');
    const stop = await runRalph(box, ['stop']);
    expect(stop.code, stop.stderr).toBe(0);
    await waitForStatus(box, (status) => status.stopRequestedAt !== null, 'the run to notice the stop');
    writeFileSync(go, '');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    const summary = JSON.parse(result.stdout) as { status: string; message: string; records: Array<{ taskId: string; outcome: string; worker: number }> };
    expect(summary.status).toBe('interrupted');
    expect(summary.message).toMatch(/^stopped on request after iteration [12]$/);
    expect(summary.records.map((record) => [record.taskId, record.outcome]).sort()).toEqual([
      ['US-001', 'pass'],
      ['US-002', 'pass'],
    ]);
    expect(new Set(summary.records.map((record) => record.worker))).toEqual(new Set([1, 2]));
    expect(agentCalls(box)).toHaveLength(2);
    expect(gitLog(box)).toMatch(/^ralph: US-001 Story 1$/m);
    expect(gitLog(box)).toMatch(/^ralph: US-002 Story 2$/m);
    expect(existsSync(lockFile(box))).toBe(false);
  }, 90_000);
});

describe('ralph pause and unpause', () => {
  it('lets the iteration finish, starts no agent while paused (lock held), goes on after unpause', async () => {
    const box = (sandbox = makeSandbox());
    hook = await startWebhook();
    seedBeads(box, standardEpic(2));
    scenario(box, [{ waitFile: release(box, 'go-1'), ...closeStep('ws-9w6.2') }, closeStep('ws-9w6.3')]);
    const run = startRalph(box, ['--notify', hook.url, '--notify-events', 'pause,end', ...FAST]);
    await waitFor(() => agentCalls(box).length === 1, 20_000, 'the first agent to start');

    const pause = await runRalph(box, ['pause']);
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toMatch(/ralph \(PID \d+\) pauses: the current iteration finishes, then no new one starts until 'ralph unpause' \(iteration 1: ws-9w6\.2/);
    const pending = await waitForStatus(box, (status) => status.pausedSince !== null, 'the run to notice the pause');
    expect(pending.state).toBe('running');
    expect((await runRalph(box, ['status'])).stdout).toMatch(/state: +running; paused since \d\d:\d\d:\d\d: no new iteration starts/);

    writeFileSync(release(box, 'go-1'), '');
    const paused = await waitForStatus(box, (status) => status.state === 'paused', 'the loop to hold');
    expect(paused.pausedSince).toBe(pending.pausedSince);
    const text = await runRalph(box, ['status']);
    expect(text.stdout).toMatch(/ralph is running: PID \d+/);
    expect(text.stdout).toMatch(/state: +paused since \d\d:\d\d:\d\d \(ralph unpause goes on\)/);
    const json = JSON.parse((await runRalph(box, ['status', '--json'])).stdout) as { alive: boolean; state: string; status: { pausedSince: string } };
    expect(json).toMatchObject({ alive: true, state: 'paused', status: { pausedSince: pending.pausedSince } });
    // Two rounds of the run's look at its requests (each removes a stale stop written for a gone run) with
    // no new agent, and the lock still held.
    for (let round = 1; round <= 2; round += 1) {
      const stale = path.join(box.repo, '.ralph', 'control', 'stop');
      writeFileSync(stale, JSON.stringify({ version: 1, kind: 'stop', target: { pid: 999_999, startedAt: '2026-01-01T00:00:00.000Z' }, uid: process.getuid?.() ?? -1, by: `ralph stop (PID ${round})`, requestedAt: '2026-01-01T00:00:01.000Z' }));
      await waitFor(() => !existsSync(stale), 10_000, `the paused run's look number ${round} at its requests`);
    }
    expect(agentCalls(box)).toHaveLength(1);
    expect(readStatus(box)).toMatchObject({ state: 'paused', iteration: 1 });
    expect(existsSync(lockFile(box))).toBe(true);
    const twice = await runRalph(box, ['pause']);
    expect(twice.stdout).toMatch(/is already paused since/);

    const unpause = await runRalph(box, ['unpause']);
    expect(unpause.code, unpause.stderr).toBe(0);
    expect(unpause.stdout).toMatch(/ralph \(PID \d+\) goes on/);
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(box)).toHaveLength(2);
    expect(result.stderr).toMatch(/pause requested by ralph pause \(PID \d+\)/);
    expect(result.stderr).toMatch(/paused since .*: waiting for 'ralph unpause'/);
    expect(result.stderr).toMatch(/resumed after a pause of \d/);
    expect(existsSync(path.join(box.repo, '.ralph', 'control', 'pause'))).toBe(false);
    // --notify-events pause,end: the pause, the resume and the end; not the start.
    expect(events(hook).map((message) => [message.event, message.paused ?? message.status])).toEqual([
      ['pause', true],
      ['pause', false],
      ['end', 'completed'],
    ]);
  }, 60_000);

  it('a pause during a usage-limit wait holds the agent after the reset, until unpause', async () => {
    const box = (sandbox = makeSandbox());
    seedBeads(box, standardEpic(1));
    // The reset is a few seconds away: time for 'ralph pause' to land before it, even on a loaded machine.
    scenario(box, [usageLimitStep(6), closeStep('ws-9w6.2')]);
    const run = startRalph(box, FAST);
    await waitForStatus(box, (status) => status.state === 'waiting_usage_reset', 'the usage-limit wait');
    expect((await runRalph(box, ['pause'])).code).toBe(0);
    const during = await waitForStatus(box, (status) => status.pausedSince !== null, 'the pause to show during the wait');
    expect(during.state).toBe('waiting_usage_reset');
    // After the reset the loop holds inside the iteration: the agent is not started again.
    await waitForStatus(box, (status) => status.state === 'paused', 'the hold after the reset');
    expect(agentCalls(box)).toHaveLength(1);
    expect(readStatus(box)?.iteration).toBe(1);
    expect((await runRalph(box, ['unpause'])).code).toBe(0);
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(box)).toHaveLength(2);
  }, 60_000);

  it('ralph status shows a pause during a usage-limit wait; ralph stop ends the wait and the run at once', async () => {
    const box = (sandbox = makeSandbox());
    seedBeads(box, standardEpic(1));
    scenario(box, [usageLimitStep(600), closeStep('ws-9w6.2')]);
    const run = startRalph(box, ['--max-wait', '1h', ...FAST]);
    await waitForStatus(box, (status) => status.state === 'waiting_usage_reset', 'the usage-limit wait');
    expect((await runRalph(box, ['pause'])).code).toBe(0);
    await waitForStatus(box, (status) => status.pausedSince !== null, 'the pause to show during the wait');
    expect((await runRalph(box, ['status'])).stdout).toMatch(/state: +waiting for usage reset until .* \(\d+m \d+s\); paused since \d\d:\d\d:\d\d: no new iteration starts/);
    const started = Date.now();
    expect((await runRalph(box, ['stop'])).code).toBe(0);
    const result = await run.done;
    // Ten minutes before the reset: ended by the stop, not by the wait.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toMatch(/interrupted: stopped on request during the usage-limit wait of iteration 1; its task stays open/);
    expect(agentCalls(box)).toHaveLength(1);
    expect(existsSync(lockFile(box))).toBe(false);
  }, 60_000);
});

describe('the control channel is safe', () => {
  it('ignores a stale request at start and one written by another user', async () => {
    const box = (sandbox = makeSandbox());
    seedBeads(box, standardEpic(1));
    const control = path.join(box.repo, '.ralph', 'control');
    mkdirSync(control, { recursive: true });
    const uid = process.getuid?.() ?? -1;
    writeFileSync(path.join(control, 'stop'), JSON.stringify({ version: 1, kind: 'stop', target: { pid: 999_999, startedAt: '2026-01-01T00:00:00.000Z' }, uid, by: 'ralph stop (PID 1)', requestedAt: '2026-01-01T00:00:01.000Z' }));
    scenario(box, [{ waitFile: release(box, 'go-1'), ...closeStep('ws-9w6.2') }]);
    const run = startRalph(box, FAST);
    await waitFor(() => agentCalls(box).length === 1, 20_000, 'the agent to start');
    expect(existsSync(path.join(control, 'stop'))).toBe(false);

    // A request addressed to this very run, but written by another user: only root can forge one here.
    const foreign = uid === 0;
    if (foreign) {
      const [pid, startedAt] = readFileSync(lockFile(box), 'utf8').split('\n');
      const file = path.join(control, 'stop');
      writeFileSync(file, JSON.stringify({ version: 1, kind: 'stop', target: { pid: Number(pid), startedAt }, uid: 65534, by: 'ralph stop (PID 2)', requestedAt: new Date().toISOString() }));
      chownSync(file, 65534, 65534);
      await waitFor(() => !existsSync(file), 10_000, 'the foreign request to be removed');
    } else {
      console.log('skipped the foreign-uid half: writing a file as another user needs root');
    }
    writeFileSync(release(box, 'go-1'), '');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/ignored and removed a stale stop request by ralph stop \(PID 1\) .* meant for PID 999999/);
    if (foreign) expect(result.stderr).toMatch(/warning: ignored and removed a stop request written by uid 65534; only this run's owner \(uid 0\) can steer it/);
    expect(result.stderr).not.toMatch(/stop requested by/);
  }, 60_000);
});
