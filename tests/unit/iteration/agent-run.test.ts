// runAgent with --fallback: which failures move an iteration to the next agent of the list. Only a usage
// limit or an account with no credit left do; a transient failure is retried on the same agent and any
// other setup error ends the run. The agents are scripted: each run is a real (tiny) process whose verdict
// the fake adapter's classify() gives, with a fake clock and instant sleeps.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent, AgentEvent, Classification } from '../../../lib/agents/types.ts';
import { resolveConfig } from '../../../lib/config/index.ts';
import type { Deps } from '../../../lib/deps.ts';
import { RalphError } from '../../../lib/errors.ts';
import { EventBus, type RunEvent } from '../../../lib/events.ts';
import { AgentRoster, type Seat } from '../../../lib/iteration/agent-roster.ts';
import { runAgent, usageWaitMs, type AgentRunContext } from '../../../lib/iteration/agent-run.ts';
import { createUsageWait } from '../../../lib/iteration/usage-wait.ts';
import { tempDir } from '../../support/temp.ts';

const NOW = Date.parse('2026-01-01T10:00:00.000Z');

/** An agent whose runs end with the given verdicts in turn (the last one repeats); `runs` counts them. Each run prints one result line that spends `cost` dollars (and 10 tokens in, 1 out). */
function scripted(name: string, verdicts: Classification[], cost = 0): Agent & { runs: number } {
  const line = JSON.stringify({ cost });
  const agent = {
    name,
    bin: process.execPath,
    runs: 0,
    command: () => ({ bin: process.execPath, args: ['-e', `process.stdout.write(${JSON.stringify(`${line}\n`)})`] }),
    parseLine: (text: string): AgentEvent[] => [{ kind: 'result', text: '', isError: false, costUsd: (JSON.parse(text) as { cost: number }).cost, inputTokens: 10, outputTokens: 1 }],
    classify: () => verdicts[Math.min(agent.runs++, verdicts.length - 1)],
  };
  return agent;
}

interface Options {
  maxWait?: number;
  check?: AgentRunContext['check'];
}

function setup(primary: ReturnType<typeof scripted>, fallback?: Agent, options: Options = {}) {
  const root = tempDir('ralph-agent-run-');
  let now = NOW;
  const deps: Deps = {
    cwd: root,
    env: { ...process.env },
    now: () => now,
    // Sleeps take no time but move the clock on, so a wait ends when its reset has passed.
    sleep: async (ms) => {
      now += ms;
    },
    random: () => 0,
    stdout: { write: () => true },
    stderr: { write: () => true },
    exec: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
  };
  const events: RunEvent[] = [];
  const bus = new EventBus(deps.now);
  bus.add({ emit: (event) => events.push(event) });
  const seats: Seat[] = [primary, ...(fallback ? [fallback] : [])].map((agent) => ({ label: agent.name, agent, extraArgs: [] }));
  const roster = new AgentRoster(seats, deps.now);
  const flags = new Map<string, number>([['retries', 3], ['retry-delay', 1], ['retry-max-delay', 1], ...(options.maxWait === undefined ? [] : [['max-wait', options.maxWait] as [string, number]])]);
  const config = resolveConfig({ flags, env: {}, file: {} });
  const reclaims: number[] = [];
  const run = () =>
    runAgent(
      { root, cwd: root, config, deps, agent: primary, bus, signal: new AbortController().signal, logBase: path.join(root, 'iteration-1'), usageWait: createUsageWait(deps, bus), reclaim: async () => void reclaims.push(primary.runs), check: options.check, ...(fallback ? { roster } : {}) },
      1,
      'do T001',
    );
  return { run, roster, events, reclaims, now: () => now };
}

const switches = (events: RunEvent[]) => events.filter((event) => event.type === 'agent_switch');

describe('runAgent with a fallback agent', () => {
  it('a transient failure is retried on the same agent: no switch, no limit', async () => {
    const claude = scripted('claude', [{ kind: 'transient', reason: 'API Error: 529 overloaded' }, { kind: 'ok' }]);
    const codex = scripted('codex', [{ kind: 'ok' }]);
    const { run, roster, events } = setup(claude, codex);
    const result = await run();
    expect(result).toMatchObject({ agent: 'claude', attempts: 2, exhausted: false, classification: { kind: 'ok' } });
    expect([claude.runs, codex.runs]).toEqual([2, 0]);
    expect(switches(events)).toEqual([]);
    expect(roster.state()).toEqual([{ label: 'claude' }, { label: 'codex' }]);
  });

  it('transient failures until the attempts are spent: still the same agent', async () => {
    const claude = scripted('claude', [{ kind: 'transient', reason: 'agent exited with code 1' }]);
    const codex = scripted('codex', [{ kind: 'ok' }]);
    const { run, events } = setup(claude, codex);
    const result = await run();
    expect(result).toMatchObject({ agent: 'claude', attempts: 3, exhausted: true });
    expect([claude.runs, codex.runs]).toEqual([3, 0]);
    expect(switches(events)).toEqual([]);
  });

  it('a setup error other than no credit ends the run: the fallback never starts', async () => {
    const claude = scripted('claude', [{ kind: 'fatal', reason: 'Invalid API key', hint: 'log the agent CLI in' }]);
    const codex = scripted('codex', [{ kind: 'ok' }]);
    const { run, roster, events } = setup(claude, codex);
    const failed = await run().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(RalphError);
    expect((failed as RalphError).message).toBe('agent setup error: Invalid API key');
    expect([claude.runs, codex.runs]).toEqual([1, 0]);
    expect(switches(events)).toEqual([]);
    expect(roster.state()).toEqual([{ label: 'claude' }, { label: 'codex' }]);
  });

  it('no credit left: the fallback takes over for the rest of the run', async () => {
    const claude = scripted('claude', [{ kind: 'fatal', reason: 'Credit balance is too low', hint: 'add credits', spent: true }]);
    const codex = scripted('codex', [{ kind: 'ok' }]);
    const { run, roster, events } = setup(claude, codex);
    const result = await run();
    expect(result).toMatchObject({ agent: 'codex', attempts: 1, classification: { kind: 'ok' } });
    expect([claude.runs, codex.runs]).toEqual([1, 1]);
    expect(switches(events)).toEqual([expect.objectContaining({ from: 'claude', to: 'codex', until: Number.POSITIVE_INFINITY, reason: 'Credit balance is too low' })]);
    expect(roster.state()[0]).toEqual({ label: 'claude', limitedUntil: Number.POSITIVE_INFINITY, reason: 'Credit balance is too low' });
  });

  it('a usage limit: the fallback takes over at once until the reset (and its margin)', async () => {
    const claude = scripted('claude', [{ kind: 'usage_limit', reason: 'usage limit (five_hour)', resetAt: NOW + 3_600_000 }]);
    const codex = scripted('codex', [{ kind: 'ok' }]);
    const { run, roster, events } = setup(claude, codex);
    const result = await run();
    expect(result).toMatchObject({ agent: 'codex', attempts: 1 });
    expect([claude.runs, codex.runs]).toEqual([1, 1]);
    const until = NOW + 3_600_000 + 30_000 + 1000;
    expect(switches(events)).toEqual([expect.objectContaining({ from: 'claude', to: 'codex', until })]);
    expect(roster.state()[0]).toEqual({ label: 'claude', limitedUntil: until, reason: 'usage limit (five_hour)' });
  });
});

describe('runAgent with a fallback agent, every agent limited', () => {
  it('one wait, until the earliest reset; then the agent whose limit reset goes on', async () => {
    const claude = scripted('claude', [{ kind: 'usage_limit', reason: 'usage limit (five_hour)', resetAt: NOW + 600_000 }, { kind: 'ok' }]);
    const codex = scripted('codex', [{ kind: 'usage_limit', reason: 'usage limit (weekly)', resetAt: NOW + 7_200_000 }]);
    const { run, events, now } = setup(claude, codex);
    const result = await run();
    expect(result).toMatchObject({ agent: 'claude', classification: { kind: 'ok' } });
    expect([claude.runs, codex.runs]).toEqual([2, 1]);
    const claudeFree = NOW + 600_000 + 30_000 + 1000;
    const waits = events.filter((event) => event.type === 'usage_wait');
    expect(waits).toEqual([expect.objectContaining({ until: claudeFree, reason: expect.stringContaining('every agent is limited (claude, codex); codex: usage limit (weekly)') })]);
    expect(now()).toBe(claudeFree);
    expect(events.filter((event) => event.type === 'agent_back')).toEqual([expect.objectContaining({ agent: 'claude' })]);
  });
});

describe('usageWaitMs', () => {
  it.each([
    ['a reset in an hour: 30 s of margin (at most) and a second', 3_600_000, 3_600_000 + 30_000 + 1000],
    ['a reset in ten seconds: 5% of margin and a second', 10_000, 10_000 + 500 + 1000],
    ['a reset already passed: a second', -5000, 1000],
  ])('%s', (_name, inMs, expected) => expect(usageWaitMs(NOW + inMs, NOW)).toBe(expected));
});

describe('runAgent: retries, waits and what each agent spent', () => {
  it('the task is put back in play before a retry, not before the first attempt', async () => {
    const claude = scripted('claude', [{ kind: 'transient', reason: 'overloaded' }, { kind: 'ok' }]);
    const { run, reclaims } = setup(claude);
    expect(await run()).toMatchObject({ attempts: 2, classification: { kind: 'ok' } });
    expect(reclaims).toEqual([1]);
  });

  it('the task is put back in play after a usage-limit wait (which spends no attempt); only a run that ended well is checked', async () => {
    let checks = 0;
    const claude = scripted('claude', [{ kind: 'usage_limit', reason: 'usage limit (five_hour)', resetAt: NOW + 60_000 }, { kind: 'ok' }]);
    const { run, reclaims, events } = setup(claude, undefined, { check: () => void (checks += 1) });
    expect(await run()).toMatchObject({ attempts: 1, classification: { kind: 'ok' } });
    expect(reclaims).toEqual([1]);
    expect(events.filter((event) => event.type === 'usage_wait')).toHaveLength(1);
    expect(checks).toBe(1);
  });

  it('a usage-limit wait of exactly --max-wait is waited; a millisecond more ends the run', async () => {
    const limited: Classification = { kind: 'usage_limit', reason: 'usage limit (five_hour)', resetAt: NOW + 60_000 };
    const wait = usageWaitMs(NOW + 60_000, NOW);
    const waited = setup(scripted('claude', [limited, { kind: 'ok' }]), undefined, { maxWait: wait });
    expect(await waited.run()).toMatchObject({ classification: { kind: 'ok' } });
    expect(waited.now()).toBe(NOW + wait);
    const refused = setup(scripted('claude', [limited, { kind: 'ok' }]), undefined, { maxWait: wait - 1 });
    await expect(refused.run()).rejects.toThrow(/^usage limit resets at .*, longer than --max-wait .*: usage limit \(five_hour\)$/);
  });

  it('a run that ended well but fails the check is retried like a transient failure', async () => {
    let checks = 0;
    const claude = scripted('claude', [{ kind: 'ok' }]);
    const { run, events } = setup(claude, undefined, { check: () => (checks++ === 0 ? 'no verdict in the answer' : undefined) });
    expect(await run()).toMatchObject({ attempts: 2, exhausted: false, classification: { kind: 'ok' } });
    expect(events.filter((event) => event.type === 'attempt_failed')).toEqual([expect.objectContaining({ kind: 'transient', reason: 'no verdict in the answer' })]);
  });

  it('a switch shares the iteration\'s cost between the agents that spent it', async () => {
    const claude = scripted('claude', [{ kind: 'usage_limit', reason: 'usage limit (five_hour)', resetAt: NOW + 3_600_000 }], 0.25);
    const codex = scripted('codex', [{ kind: 'transient', reason: 'overloaded' }, { kind: 'ok' }], 0.5);
    const { run } = setup(claude, codex);
    const result = await run();
    expect(result).toMatchObject({ agent: 'codex', costUsd: 1.25, inputTokens: 30, outputTokens: 3 });
    expect(result.spentBy).toEqual({ claude: { costUsd: 0.25, inputTokens: 10, outputTokens: 1 }, codex: { costUsd: 1, inputTokens: 20, outputTokens: 2 } });
  });
});
