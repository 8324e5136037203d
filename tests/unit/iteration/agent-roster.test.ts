import { describe, expect, it } from 'vitest';
import type { Agent } from '../../../lib/agents/types.ts';
import type { IterationRecord } from '../../../lib/events.ts';
import { AgentRoster, agentTotals, seatLabel, type Seat } from '../../../lib/iteration/agent-roster.ts';

const agent = (name: string) => ({ name, bin: name }) as unknown as Agent;
const seat = (name: string, model?: string): Seat => ({ label: seatLabel(name, model), agent: agent(name), model, extraArgs: [] });

describe('AgentRoster', () => {
  it('gives the first agent not limited; a limit ends at its time; the primary is first again then', () => {
    let now = 1000;
    const roster = new AgentRoster([seat('claude', 'opus'), seat('claude', 'sonnet'), seat('codex')], () => now);
    expect(roster.current()?.label).toBe('claude:opus');
    roster.limit(roster.seats[0]!, 5000, 'five_hour');
    expect(roster.current()?.label).toBe('claude:sonnet');
    roster.limit(roster.seats[1]!, 3000, 'weekly');
    expect(roster.current()?.label).toBe('codex');
    roster.limit(roster.seats[2]!, Number.POSITIVE_INFINITY, 'no credit');
    expect(roster.current()).toBeUndefined();
    expect(roster.earliestReset()).toBe(3000);
    expect(roster.state()).toEqual([
      { label: 'claude:opus', limitedUntil: 5000, reason: 'five_hour' },
      { label: 'claude:sonnet', limitedUntil: 3000, reason: 'weekly' },
      { label: 'codex', limitedUntil: Number.POSITIVE_INFINITY, reason: 'no credit' },
    ]);
    now = 3000;
    expect(roster.current()?.label).toBe('claude:sonnet');
    now = 5000;
    expect(roster.current()?.label).toBe('claude:opus');
    expect(roster.earliestReset()).toBeUndefined();
  });

  it('state() shows a limit only while it lasts: from its time on the agent is free, in state() as in current()', () => {
    let now = 1000;
    const roster = new AgentRoster([seat('claude'), seat('codex')], () => now);
    roster.limit(roster.seats[0]!, 5000, 'five_hour');
    now = 4999;
    expect(roster.state()).toEqual([{ label: 'claude', limitedUntil: 5000, reason: 'five_hour' }, { label: 'codex' }]);
    // Read before current() forgets the limit: state() must not wait for it.
    now = 5000;
    expect(roster.state()).toEqual([{ label: 'claude' }, { label: 'codex' }]);
    now = 9000;
    expect(roster.state()).toEqual([{ label: 'claude' }, { label: 'codex' }]);
    expect(roster.current()?.label).toBe('claude');
  });

  it('a limit for the rest of the run never resets; the earliest reset is of the limits that end', () => {
    let now = 0;
    const roster = new AgentRoster([seat('claude'), seat('codex'), seat('gemini')], () => now);
    roster.limit(roster.seats[0]!, Number.POSITIVE_INFINITY, 'no credit');
    expect(roster.earliestReset()).toBeUndefined();
    roster.limit(roster.seats[2]!, 8000, 'weekly');
    roster.limit(roster.seats[1]!, 7000, 'five_hour');
    expect(roster.earliestReset()).toBe(7000);
    now = Number.MAX_SAFE_INTEGER;
    expect(roster.current()?.label).toBe('codex');
    expect(roster.state()[0]).toEqual({ label: 'claude', limitedUntil: Number.POSITIVE_INFINITY, reason: 'no credit' });
  });

  it('needs at least one agent', () => {
    expect(() => new AgentRoster([], () => 0)).toThrow('an agent roster needs at least one agent');
  });

  it('keeps the later of two limits of one agent', () => {
    const roster = new AgentRoster([seat('claude'), seat('codex')], () => 0);
    roster.limit(roster.seats[0]!, 9000, 'weekly');
    roster.limit(roster.seats[0]!, 2000, 'five_hour');
    expect(roster.state()[0]).toEqual({ label: 'claude', limitedUntil: 9000, reason: 'weekly' });
  });
});

describe('agentTotals', () => {
  const record = (fields: Partial<IterationRecord>): IterationRecord => ({ iteration: 1, taskId: 'T1', taskTitle: 't', outcome: 'pass', reason: '', attempts: 1, startedAt: '', durationMs: 1, tasksDone: [], filesChanged: [], claimedComplete: false, costUsd: 0, inputTokens: 0, outputTokens: 0, ...fields });

  it('counts each iteration for the agent that finished it and each cost for the agent that spent it', () => {
    const roster = new AgentRoster([seat('claude'), seat('codex')], () => 0);
    roster.limit(roster.seats[0]!, Number.POSITIVE_INFINITY, 'no credit');
    const totals = agentTotals([
      record({ agent: 'codex', costUsd: 0.5, inputTokens: 30, outputTokens: 5, spentBy: { claude: { costUsd: 0.2, inputTokens: 10, outputTokens: 1 }, codex: { costUsd: 0.3, inputTokens: 20, outputTokens: 4 } } }),
      record({ agent: 'codex', costUsd: 0.1, inputTokens: 7, outputTokens: 2 }),
    ], roster);
    expect(totals).toEqual([
      { agent: 'claude', iterations: 0, costUsd: 0.2, inputTokens: 10, outputTokens: 1, limitedUntil: null },
      { agent: 'codex', iterations: 2, costUsd: 0.4, inputTokens: 27, outputTokens: 6 },
    ]);
  });

  it("an iteration without its agent named is the primary's, and a reviewer's spending is not the agent's; a limit that ends is given as a time", () => {
    const roster = new AgentRoster([seat('claude'), seat('codex')], () => 0);
    roster.limit(roster.seats[1]!, Date.parse('2026-01-01T12:00:00.000Z'), 'five_hour');
    const review = { agent: 'codex', verdict: 'approve', taskIds: ['T1'], attempts: 1, exhausted: false, durationMs: 1, costUsd: 0.4, inputTokens: 40, outputTokens: 4 } as IterationRecord['review'];
    expect(agentTotals([record({ costUsd: 1, inputTokens: 100, outputTokens: 10, review })], roster)).toEqual([
      { agent: 'claude', iterations: 1, costUsd: 0.6, inputTokens: 60, outputTokens: 6 },
      { agent: 'codex', iterations: 0, costUsd: 0, inputTokens: 0, outputTokens: 0, limitedUntil: '2026-01-01T12:00:00.000Z' },
    ]);
  });

  it('says nothing for a run with one agent', () => {
    expect(agentTotals([], new AgentRoster([seat('claude')], () => 0))).toBeUndefined();
  });
});
