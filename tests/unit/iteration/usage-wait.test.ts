import { describe, expect, it } from 'vitest';
import { EventBus, type RunEvent } from '../../../lib/events.ts';
import { createUsageWait } from '../../../lib/iteration/usage-wait.ts';

/** A clock that only moves when someone sleeps: sleeps resolve in order of their wake-up time. */
function fakeClock() {
  let now = 0;
  const sleepers: Array<{ at: number; resolve: () => void }> = [];
  return {
    now: () => now,
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        sleepers.push({ at: now + ms, resolve });
      }),
    /** Wakes sleepers one by one until none is left. */
    async drain() {
      for (let guard = 0; guard < 1000; guard += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        sleepers.sort((a, b) => a.at - b.at);
        const next = sleepers.shift();
        if (!next) return;
        now = Math.max(now, next.at);
        next.resolve();
      }
    },
  };
}

function collect() {
  const events: RunEvent[] = [];
  const bus = new EventBus(() => 0);
  bus.add({ emit: (event) => events.push(event) });
  return { bus, events };
}

describe('the session usage wait', () => {
  const signal = new AbortController().signal;

  it('makes workers that hit the limit together wait once, announced once', async () => {
    const clock = fakeClock();
    const { bus, events } = collect();
    const wait = createUsageWait(clock, bus);
    const first = wait.wait({ until: 60_000, iteration: 1, reason: 'limit', signal });
    const second = wait.wait({ until: 50_000, iteration: 2, reason: 'limit', signal });
    expect(wait.until).toBe(60_000);
    await clock.drain();
    await Promise.all([first, second]);
    expect(clock.now()).toBe(60_000);
    expect(events.filter((event) => event.type === 'usage_wait')).toEqual([{ type: 'usage_wait', iteration: 1, until: 60_000, reason: 'limit' }]);
    expect(wait.until).toBeUndefined();
  });

  it('joins a worker that reports the same reset a moment later, without announcing it again', async () => {
    const clock = fakeClock();
    const { bus, events } = collect();
    const wait = createUsageWait(clock, bus);
    // Both saw reset 55 s; the second computed its margin from a clock reading 40 ms later.
    const first = wait.wait({ until: 60_000, reset: 55_000, iteration: 1, reason: 'limit', signal });
    const second = wait.wait({ until: 60_040, reset: 55_000, iteration: 2, reason: 'limit', signal });
    await clock.drain();
    await Promise.all([first, second]);
    expect(events.filter((event) => event.type === 'usage_wait')).toEqual([{ type: 'usage_wait', iteration: 1, until: 60_000, reason: 'limit' }]);
  });

  it('extends the wait when a later reset is announced meanwhile', async () => {
    const clock = fakeClock();
    const { bus, events } = collect();
    const wait = createUsageWait(clock, bus);
    const first = wait.wait({ until: 30_000, iteration: 1, reason: 'five_hour', signal });
    const second = wait.wait({ until: 90_000, iteration: 2, reason: 'weekly', signal });
    await clock.drain();
    await Promise.all([first, second]);
    expect(clock.now()).toBe(90_000);
    expect(events.filter((event) => event.type === 'usage_wait').map((event) => (event as { until: number }).until)).toEqual([30_000, 90_000]);
  });

  it('starts a fresh wait after the previous one ended', async () => {
    const clock = fakeClock();
    const { bus, events } = collect();
    const wait = createUsageWait(clock, bus);
    const first = wait.wait({ until: 10_000, iteration: 1, reason: 'a', signal });
    await clock.drain();
    await first;
    const again = wait.wait({ until: 20_000, iteration: 2, reason: 'b', signal });
    await clock.drain();
    await again;
    expect(clock.now()).toBe(20_000);
    expect(events.filter((event) => event.type === 'usage_wait')).toHaveLength(2);
  });

  it('lets a worker that reports a reset already slept past go on at once, without a second wait', async () => {
    const clock = fakeClock();
    const { bus, events } = collect();
    const wait = createUsageWait(clock, bus);
    const first = wait.wait({ until: 11_000, reset: 10_000, iteration: 1, reason: 'limit', signal });
    await clock.drain();
    await first;
    await wait.wait({ until: 12_500, reset: 10_000, iteration: 2, reason: 'limit', signal });
    expect(clock.now()).toBe(11_000);
    expect(events.filter((event) => event.type === 'usage_wait')).toHaveLength(1);
    // A later reset is a new wait.
    const later = wait.wait({ until: 20_000, reset: 19_000, iteration: 3, reason: 'limit', signal });
    await clock.drain();
    await later;
    expect(events.filter((event) => event.type === 'usage_wait')).toHaveLength(2);
  });
});
