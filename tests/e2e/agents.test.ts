import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, agentPids, FAST, makeSandbox, pidAlive, runRalph, scenario, seedBeads, standardEpic, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const close = (id: string) => [['bd', 'close', id, '--reason', 'implemented by the fake agent', '--json']];
// The timeouts also apply to the agents that must finish: a fake agent (node) took up to 1.7 s to start on
// the loaded 2-core machine, so a hung agent is given 3 s of silence, and a working one says STARTED on
// stderr (which counts as output) before it runs `bd close`, a second node start.
const IDLE = '3s';

// Every adapter, driven end to end by a fake CLI that replays that agent's recorded output.
const AGENTS = [
  { agent: 'claude', bin: 'claude', ok: 'claude-ok.jsonl', transient: 'claude-529.jsonl', transientExit: 1, argv: ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--model', 'm1'] },
  { agent: 'copilot', bin: 'copilot', ok: 'copilot-ok.jsonl', transient: 'copilot-500.jsonl', transientExit: 1, argv: ['-p', '/sp:next', '--allow-all-tools', '--output-format', 'json', '--model', 'm1'] },
  { agent: 'gemini', bin: 'gemini', ok: 'gemini-ok.jsonl', transient: 'gemini-529.jsonl', transientExit: 247, argv: ['-p', '/sp:next', '--yolo', '--skip-trust', '-o', 'stream-json', '-m', 'm1'] },
  { agent: 'codex', bin: 'codex', ok: 'codex-ok.jsonl', transient: 'codex-500.jsonl', transientExit: 1, argv: ['exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-m', 'm1', '-'] },
  { agent: 'opencode', bin: 'opencode', ok: 'opencode-ok.jsonl', transient: 'opencode-500.jsonl', transientExit: 1, argv: ['run', '--format', 'json', '--auto', '-m', 'm1', '/sp:next'] },
  { agent: 'amp', bin: 'amp', ok: 'claude-ok.jsonl', transient: 'claude-500.jsonl', transientExit: 1, argv: ['-x', '--dangerously-allow-all', '--stream-json', '-m', 'm1'] },
  { agent: 'cursor', bin: 'agent', ok: 'claude-ok.jsonl', transient: 'claude-529.jsonl', transientExit: 1, argv: ['-p', '--force', '--trust', '--output-format', 'stream-json', '--model', 'm1', '/sp:next'] },
] as const;

describe.each(AGENTS)('$agent end to end', ({ agent, bin, ok, transient, transientExit, argv }) => {
  it('retries a recorded transient failure, then completes the task with the exact argv', async () => {
    sandbox = makeSandbox({ agents: [bin] });
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: transient, exit: transientExit }, { run: close('ws-9w6.2'), replay: ok }]);
    const result = await runRalph(sandbox, ['--agent', agent, '--model', 'm1', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.argv).toEqual(argv);
    expect(JSON.parse(result.stdout).records[0]).toMatchObject({ attempts: 2, outcome: 'pass', claimedComplete: true });
  });
});

describe('usage limits', () => {
  it('sleeps until the reset announced by the event, spending neither an iteration nor a retry', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    const rejected = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 0, rateLimitType: 'five_hour' } }).replace('"resetsAt":0', '"resetsAt":__RESET_EPOCH__');
    const recorded = readFileSync(path.join(__dirname, '..', 'fixtures', 'recordings', 'claude-oauth-unified5h.jsonl'), 'utf8').trim().split('\n');
    scenario(sandbox, [
      { lines: [recorded[0], rejected, recorded[2], recorded[3]], resetInSeconds: 2, exit: 1 },
      { run: close('ws-9w6.2'), replay: 'claude-ok.jsonl' },
    ]);
    const started = Date.now();
    const result = await runRalph(sandbox, ['--retries', '1', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeGreaterThan(1500);
    expect(result.stderr).toMatch(/usage limit: waiting until .* \(five_hour\)|usage limit: waiting until/);
    const summary = JSON.parse(result.stdout);
    expect(summary.iterations).toBe(1);
    expect(summary.records[0].attempts).toBe(1);
  });

  it('exits 1 naming the reset time when it is further away than --max-wait', async () => {
    sandbox = makeSandbox({ agents: ['codex'] });
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'codex-usagelimit.jsonl', exit: 1 }]);
    const result = await runRalph(sandbox, ['--agent', 'codex', '--max-wait', '1s', ...FAST]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/usage limit resets at \d{4}-\d\d-\d\d 02:26:00, .* longer than --max-wait 1\.0s/);
    expect(agentCalls(sandbox)).toHaveLength(1);
  });
});

describe('time bounds and the process tree', () => {
  // One run checks both: the hung agent's prompt holds a usage limit's words, which must not pass for one.
  it('ends a hung agent on the idle timeout, kills its SIGTERM-ignoring grandchild, and carries on; treats a 5-hour-limit text inside the prompt or a timeout as what it is, not a usage limit', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'claude-ok.jsonl', hang: true, ignoreTerm: true, grandchild: true }, { run: close('ws-9w6.2'), replay: 'claude-ok.jsonl', marker: 'STARTED' }]);
    const result = await runRalph(sandbox, ['--prompt', "Mind the 5-hour limit · resets 3:22am (UTC)", '--idle-timeout', IDLE, '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).records[0]).toMatchObject({ outcome: 'fail', reason: expect.stringMatching(/idle/) });
    expect(result.stderr).toMatch(/attempt 1 failed \(timeout\)/);
    expect(result.stderr).not.toMatch(/usage limit: waiting/);
    expect(JSON.parse(result.stdout).records.map((r: { outcome: string }) => r.outcome)).toEqual(['fail', 'pass']);
    const pids = agentPids(sandbox);
    expect(pids.length).toBeGreaterThanOrEqual(3);
    for (const pid of pids) expect(pidAlive(pid), `pid ${pid}`).toBe(false);
  });

  it('ends an agent on the wall-clock timeout', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'claude-429-retry.jsonl', delayMs: 100, hang: true }, { run: close('ws-9w6.2'), replay: 'claude-ok.jsonl' }]);
    // The second agent starts node twice (itself, then bd close) within the same wall-clock limit.
    const result = await runRalph(sandbox, ['--timeout', '5s', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).records[0].reason).toMatch(/time limit/);
  });

  it('stops the run at once on a fatal setup error, without retrying', async () => {
    sandbox = makeSandbox({ agents: ['gemini'] });
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ stderr: readFileSync(path.join(__dirname, '..', 'fixtures', 'recordings', 'gemini-notrust.err'), 'utf8'), exit: 55 }]);
    const result = await runRalph(sandbox, ['--agent', 'gemini', ...FAST]);
    expect(result.code).toBe(1);
    expect(agentCalls(sandbox)).toHaveLength(1);
    expect(result.stderr).toMatch(/hint: /);
  });

  // The fake agent refuses what the real CLI refuses (tests/fakes/agent-clis.mjs), here a flag passed after --.
  it.each([
    ['claude', "error: unknown option '--no-such-flag'"],
    ['codex', "error: unexpected argument '--no-such-flag' found"],
  ])('stops at once, with the CLI\'s words, when the %s CLI refuses a flag', async (agent, words) => {
    sandbox = makeSandbox({ agents: [agent] });
    seedBeads(sandbox, standardEpic(1));
    const result = await runRalph(sandbox, ['--agent', agent, ...FAST, '--', '--no-such-flag']);
    expect(result.code, result.stderr).toBe(1);
    expect(agentCalls(sandbox)).toHaveLength(1);
    expect(agentCalls(sandbox)[0]!.argv).toContain('--no-such-flag');
    expect(result.stderr).toContain(`agent setup error: ${words}`);
    expect(result.stderr).toMatch(/hint: the agent CLI rejected a flag; check extra arguments after --/);
  });

  it('names the supported agents for an unknown one', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    const result = await runRalph(sandbox, ['--agent', 'hal9000']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unknown agent 'hal9000'; supported agents: claude, copilot, gemini, codex, amp, opencode, cursor, custom/);
    expect(existsSync(path.join(sandbox.repo, '.ralph.lock'))).toBe(false);
  });

  it('stops once --max-cost is spent, with exit 2', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(3));
    scenario(sandbox, [{ run: close('ws-9w6.2'), replay: 'claude-ok.jsonl' }, { run: close('ws-9w6.3'), replay: 'claude-ok.jsonl' }]);
    const result = await runRalph(sandbox, ['--max-cost', '0.0002', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    const summary = JSON.parse(result.stdout);
    expect(summary.iterations).toBe(1);
    expect(summary.costUsd).toBeCloseTo(0.00021, 6);
    expect(summary.message).toMatch(/cost budget/);
  });
});
