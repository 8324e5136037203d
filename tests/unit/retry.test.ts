import { describe, expect, it, vi } from 'vitest';
import { backoffDelays, nextDelay, retry } from '../../lib/retry.ts';

describe('nextDelay', () => {
  it('doubles from the base up to the cap, scaled by the injected random', () => {
    const options = { baseMs: 2000, maxMs: 300_000, random: () => 1 };
    expect([0, 1, 2, 3, 7, 8, 20].map((attempt) => nextDelay(attempt, options))).toEqual([2000, 4000, 8000, 16000, 256000, 300000, 300000]);
  });

  it('applies full jitter', () => {
    expect(nextDelay(3, { baseMs: 1000, maxMs: 60_000, random: () => 0.25 })).toBe(2000);
    expect(nextDelay(3, { baseMs: 1000, maxMs: 60_000, random: () => 0 })).toBe(0);
  });

  it('generates the sequence', () => {
    const delays = backoffDelays({ baseMs: 10, maxMs: 35, random: () => 1 });
    expect([1, 2, 3, 4].map(() => delays.next().value)).toEqual([10, 20, 35, 35]);
  });
});

describe('retry', () => {
  const base = () => ({ delays: backoffDelays({ baseMs: 100, maxMs: 1000, random: () => 1 }), signal: new AbortController().signal });

  it('retries until done, sleeping the backoff delays', async () => {
    const sleep = vi.fn(async () => undefined);
    const verdicts = ['retry', 'retry', 'done'];
    const outcome = await retry({ ...base(), attempts: 5, sleep, attempt: async (n) => (verdicts[n - 1] === 'done' ? { kind: 'done', value: n } : { kind: 'retry', reason: 'flaky', value: n }) });
    expect(outcome).toEqual({ value: 3, attempts: 3, exhausted: false });
    expect(sleep.mock.calls.map((call) => (call as unknown[])[0])).toEqual([100, 200]);
  });

  it('stops after the attempts and reports exhaustion', async () => {
    const outcome = await retry({ ...base(), attempts: 3, sleep: async () => undefined, attempt: async (n) => ({ kind: 'retry', reason: `fail ${n}`, value: n }) });
    expect(outcome).toEqual({ value: 3, attempts: 3, exhausted: true, lastReason: 'fail 3' });
  });

  it('waits without spending an attempt', async () => {
    const sleep = vi.fn(async () => undefined);
    let calls = 0;
    const outcome = await retry({
      ...base(),
      attempts: 1,
      sleep,
      attempt: async () => {
        calls += 1;
        return calls < 3 ? { kind: 'wait', ms: 5000, reason: 'limit', value: calls } : { kind: 'done', value: calls };
      },
    });
    expect(outcome).toEqual({ value: 3, attempts: 1, exhausted: false });
    expect(sleep.mock.calls.map((call) => (call as unknown[])[0])).toEqual([5000, 5000]);
  });

  it('stops at once when aborted', async () => {
    const controller = new AbortController();
    controller.abort('SIGINT');
    await expect(retry({ ...base(), signal: controller.signal, attempts: 3, sleep: async () => undefined, attempt: async () => ({ kind: 'done', value: 1 }) })).rejects.toThrow(/SIGINT/);
  });
});
