// The loop's helpers for several hosts: how long a host with nothing to start waits, where it starts reading
// the startable tasks, and who landed what.
import { describe, expect, it } from 'vitest';
import { parseArgv } from '../../../lib/cli/argv.ts';
import { resolveConfig } from '../../../lib/config/index.ts';
import { endLoop, pollMs, spread } from '../../../lib/session/loop-end.ts';

const config = (argv: string[]) => resolveConfig({ flags: parseArgv(argv).flags, env: {}, file: {}, passthrough: [] });

describe('several hosts: the loop', () => {
  it('a host with nothing to start looks again after 250 ms, doubling up to an eighth of a typical iteration (1 s before any), within lease/3', () => {
    const looks = [0, 1, 2, 3, 4, 5, 30];
    const ended = (...ms: number[]) => ms.map((durationMs) => ({ durationMs }));
    expect(looks.map((look) => pollMs(config([]), look))).toEqual([250, 500, 1000, 1000, 1000, 1000, 1000]);
    expect([0, 1, 2].map((look) => pollMs(config(['--lease', '1500ms']), look))).toEqual([250, 500, 500]);
    // Tasks of 2–3 s: the others' last landings are seen within a few hundred ms.
    expect(looks.map((look) => pollMs(config([]), look, ended(2_400, 9_000, 2_800)))).toEqual([250, 350, 350, 350, 350, 350, 350]);
    // Tasks of minutes: once every 5 s; the median, not one long task, sets the pace.
    expect(looks.map((look) => pollMs(config([]), look, ended(600_000, 300_000)))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(pollMs(config([]), 30, ended(1_000, 1_000, 3_600_000))).toBe(250);
    expect(pollMs(config(['--lease', '3s']), 30, ended(600_000))).toBe(1000);
  });

  it('spread: one host reads the list as it is; hosts read its first `window` tasks from places of their own', () => {
    const tasks = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(spread(tasks, undefined, 4)).toEqual(tasks);
    expect(spread(tasks, 'h1-0000', 1)).toEqual(tasks);
    const starts = new Set(['h1-1a2b', 'h2-3c4d', 'h3-5e6f', 'h4-7081'].map((host) => spread(tasks, host, 4)[0]));
    expect(starts.size).toBeGreaterThan(1);
    for (const host of ['h1-1a2b', 'h2-3c4d', 'h3-5e6f']) {
      const order = spread(tasks, host, 4);
      expect([...order].sort()).toEqual(tasks); // nothing lost or repeated
      expect(order.slice(4)).toEqual(['e', 'f']); // the source's order beyond the window
      expect(spread(tasks, host, 4)).toEqual(order); // the same host, the same place
    }
  });

  it('who landed what: this host from its records, the others from the tasks done meanwhile', () => {
    const record = (ids: string[]) => ({ tasksDone: ids }) as never;
    const snapshot = { ready: [], remaining: [{ id: 'x', title: 'x', status: 'open' }], done: Array.from({ length: 9 }, (_, index) => ({ id: `t${index}`, title: '', status: 'done' })) };
    const result = endLoop({ status: 'completed', exitCode: 0, message: 'm', snapshot, records: [record(['t5']), record(['t6', 't7'])], costUsd: 0, remote: { name: 'origin', branch: 'f', host: 'h', hostId: 'h-1', claims: 'refs' }, doneAtStart: 2 });
    expect(result.remote).toEqual({ name: 'origin', branch: 'f', host: 'h', landedHere: 3, landedElsewhere: 4 });
    expect(endLoop({ status: 'completed', exitCode: 0, message: 'm', snapshot, records: [], costUsd: 0 }).remote).toBeUndefined();
  });
});
