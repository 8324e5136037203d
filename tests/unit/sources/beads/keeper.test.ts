import { describe, expect, it } from 'vitest';
import { createClaimKeeper } from '../../../../lib/sources/beads/keeper.ts';
import type { Renewal } from '../../../../lib/sources/beads/lease.ts';

/** A keeper whose timers the test fires by hand, and whose renewals answer what the test says. */
function keeperWith(answers: Array<Renewal | Error>) {
  const timers: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  const renewed: string[] = [];
  const warnings: string[] = [];
  const keeper = createClaimKeeper({
    every: 200_000,
    renew: async (id, worker) => {
      renewed.push(`${id}@w${worker}`);
      const answer = answers.shift() ?? { kind: 'held' };
      if (answer instanceof Error) throw answer;
      return answer;
    },
    warn: (message) => warnings.push(message),
    schedule: (fn, ms) => {
      const timer = { fn, ms, cancelled: false };
      timers.push(timer);
      return () => (timer.cancelled = true);
    },
  });
  const pending = () => timers.filter((timer) => !timer.cancelled);
  /** Fires every pending timer once and lets the renewals answer. */
  const fire = async () => {
    const due = pending();
    timers.length = 0;
    for (const timer of due) timer.fn();
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { keeper, renewed, warnings, pending, fire };
}

describe('the claim keeper', () => {
  it('renews a held bead every lease/3 until it is released', async () => {
    const { keeper, renewed, pending, fire } = keeperWith([]);
    keeper.hold(1, 'ws-1');
    expect(pending().map((timer) => timer.ms)).toEqual([200_000]);
    await fire();
    await fire();
    expect(renewed).toEqual(['ws-1@w1', 'ws-1@w1']);
    keeper.release(1);
    expect(pending()).toEqual([]);
  });

  it('stops by itself once the bead is closed (quietly) or lost (with a warning)', async () => {
    const { keeper, warnings, pending, fire } = keeperWith([{ kind: 'closed' }, { kind: 'lost', holder: 'ralph-hostC-w1', status: 'in_progress' }]);
    keeper.hold(1, 'ws-1');
    keeper.hold(2, 'ws-2');
    await fire();
    expect(pending()).toEqual([]);
    expect(warnings).toEqual(['ws-2 is no longer held by this host (now in_progress, ralph-hostC-w1): its claim expired or was taken over while worker 2 worked on it']);
  });

  it('a failed renewal (bd unreachable) is said once and tried again next time', async () => {
    const { keeper, renewed, warnings, pending, fire } = keeperWith([new Error('dial tcp: refused'), new Error('dial tcp: refused')]);
    keeper.hold(1, 'ws-1');
    await fire();
    await fire();
    await fire();
    expect(renewed).toHaveLength(3);
    expect(warnings).toEqual(['could not renew the claim of ws-1 (worker 1): dial tcp: refused; trying again']);
    expect(pending()).toHaveLength(1);
    keeper.stop();
    expect(pending()).toEqual([]);
  });

  it('a worker that holds a new bead (or the same one again) has one renewal, not two', async () => {
    const { keeper, renewed, pending, fire } = keeperWith([]);
    keeper.hold(1, 'ws-1');
    keeper.hold(1, 'ws-2');
    expect(pending()).toHaveLength(1);
    await fire();
    expect(renewed).toEqual(['ws-2@w1']);
    // A renewal in flight when the worker holds again does not start a second chain.
    const slow = keeperWith([]);
    slow.keeper.hold(1, 'ws-1');
    const due = slow.pending();
    due[0]!.fn();
    slow.keeper.hold(1, 'ws-1');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(slow.pending()).toHaveLength(1);
  });
});
