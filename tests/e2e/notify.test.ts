// --notify end to end: a local webhook receives a run's messages with their fields; a failing webhook
// is retried once; one that never answers does not hold up the loop by more than its timeout.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, FAKES, FAST, makeSandbox, scenario, seedBeads, standardEpic, startRalph, waitFor, closeStep, type Sandbox } from './helpers.ts';
import { events, startWebhook, type Webhook } from './webhook.ts';

let sandbox: Sandbox | undefined;
const hooks: Webhook[] = [];
afterEach(async () => {
  for (const hook of hooks.splice(0)) await hook.close();
  sandbox?.cleanup();
  sandbox = undefined;
});

const RECORDINGS = path.join(FAKES, '..', 'fixtures', 'recordings');
const SECRET = 'sk-ant-e2e-secret-0123456789';

function usageLimitStep(seconds: number): Record<string, unknown> {
  const recorded = readFileSync(path.join(RECORDINGS, 'claude-oauth-unified5h.jsonl'), 'utf8').split('\n').filter(Boolean);
  const rateLimit = recorded.find((line) => line.includes('"rate_limit_event"'))!.replace(/"resetsAt":\d+/, '"resetsAt":__RESET_EPOCH__');
  return { lines: [rateLimit, recorded.find((line) => line.includes('"type":"result"'))!], resetInSeconds: seconds, exit: 1 };
}

/** claude's recorded 529, its message carrying the API key (as a confused proxy might echo it). */
function overloadedStep(): Record<string, unknown> {
  const lines = readFileSync(path.join(RECORDINGS, 'claude-529.jsonl'), 'utf8').split('\n').filter(Boolean);
  return { lines: lines.map((line) => line.replace('529 Overloaded.', `529 Overloaded (key ${SECRET}).`)), exit: 1 };
}

describe('--notify', () => {
  it('POSTs start, usage-limit wait, iteration failure and end with their fields; a 500 is retried once', async () => {
    const box = (sandbox = makeSandbox());
    // Every message fails once with a 500, then goes through.
    const flaky = await startWebhook((_request, _index, before) => (before === 0 ? 500 : 200));
    const broken = await startWebhook(() => 500);
    hooks.push(flaky, broken);
    seedBeads(box, standardEpic(1));
    scenario(box, [usageLimitStep(1), overloadedStep()]);
    const run = startRalph(box, ['--notify', flaky.url, '--notify', broken.url, '--retries', '1', ...FAST], { ANTHROPIC_API_KEY: SECRET });
    const result = await run.done;
    expect(result.code, result.stderr).toBe(1);

    // Each message twice on the flaky hook (the 500, then the retry), in the run's order.
    const got = events(flaky);
    expect(got.map((message) => message.event)).toEqual(['start', 'start', 'usage-limit', 'usage-limit', 'failure', 'failure', 'end', 'end']);
    const [start, , usage, , failure, , end] = got;
    const sessionId = start!.session;
    expect(start).toMatchObject({ source: 'ralph', level: 'info', title: 'ralph started (repo)', repo: 'repo', mode: 'beads', agent: 'claude', branch: '001-ralph-automation', maxIterations: 50 });
    expect(start!.text).toMatch(/^session \S+: beads mode, epic ws-9w6 "Feature: ralph-automation", agent claude, up to 50 iterations, branch 001-ralph-automation, on /);
    expect(usage).toMatchObject({ level: 'warning', iteration: 1, session: sessionId, reason: expect.stringContaining('usage limit') });
    const resetAt = Date.parse(String(usage!.resetAt));
    expect(resetAt).toBeGreaterThan(Date.parse(String(usage!.at)));
    expect(resetAt - Date.parse(String(usage!.at))).toBeLessThan(10_000);
    expect(failure).toMatchObject({ level: 'error', title: 'iteration 1 failed (repo)', iteration: 1, taskId: 'ws-9w6.2', taskTitle: 'Task 1: build part 1', attempts: 1 });
    expect(end).toMatchObject({ level: 'error', status: 'failed', exitCode: 1, iterations: 1, tasksRemaining: 1, session: sessionId });
    for (const item of flaky.received) expect(item.headers['content-type']).toBe('application/json');
    // The agent's key never leaves in a message, even where the agent echoed it.
    expect(String(failure!.reason)).toContain('[redacted:ANTHROPIC_API_KEY]');
    expect(JSON.stringify([...flaky.received, ...broken.received].map((item) => item.body))).not.toContain(SECRET);

    // A hook that always fails: each message exactly twice, and warnings that name it without its path.
    expect(events(broken).map((message) => message.event)).toEqual(['start', 'start', 'usage-limit', 'usage-limit', 'failure', 'failure', 'end', 'end']);
    const port = new URL(broken.url).port;
    expect(result.stderr).toContain(`warning: notify http://127.0.0.1:${port}/…: the 'start' notification failed twice: HTTP 500`);
    expect(result.stderr).toContain('(further failures of this webhook are not reported)');
    expect(result.stderr).not.toContain(`127.0.0.1:${new URL(flaky.url).port}/…`);
    expect(result.stderr).not.toContain('/hook');
  }, 60_000);

  it('a webhook that never answers delays the loop by no more than its timeout', async () => {
    const box = (sandbox = makeSandbox());
    const silent = await startWebhook(() => 'hang');
    hooks.push(silent);
    seedBeads(box, standardEpic(1));
    const go = path.join(box.root, 'go');
    scenario(box, [{ waitFile: go, ...closeStep('ws-9w6.2') }]);
    const run = startRalph(box, ['--notify', silent.url, '--notify-timeout', '3s', ...FAST]);
    // The agent runs (blocked on the test) while the webhook has not answered: the start message is
    // tried, times out after 3 s, is tried again and times out again, with one warning.
    await waitFor(() => run.output().stderr.includes("the 'start' notification failed twice: timed out after 3s"), 30_000, 'the warning');
    expect(agentCalls(box)).toHaveLength(1);
    const first = silent.received[0]!.at;
    expect(silent.received.map((item) => item.json?.event)).toEqual(['start', 'start']);
    expect(silent.received[1]!.at - first).toBeGreaterThanOrEqual(2900);
    // Started well before the first attempt's timeout, let alone both.
    expect(Date.parse(agentCalls(box)[0]!.time) - first).toBeLessThan(3000);

    writeFileSync(go, '');
    const result = await run.done;
    const exitedAt = Date.now();
    expect(result.code, result.stderr).toBe(0);
    const lines = readFileSync(path.join(box.repo, '.ralph', 'events.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string; at: string });
    const endedAt = Date.parse(lines.find((line) => line.type === 'session_end')!.at);
    // At the end ralph waits for the webhook at most one timeout, then says so.
    expect(exitedAt - endedAt).toBeLessThan(3000 + 2000);
    expect(result.stderr).toMatch(/warning: notify http:\/\/127\.0\.0\.1:\d+\/…: 1 notification not delivered by the end of the run/);
    expect(result.stderr).toMatch(/completed: all tasks of epic ws-9w6/);
  }, 60_000);
});
