import { describe, expect, it } from 'vitest';
import { firstTasks } from '../../../lib/session/loop-end.ts';
import { claimsToRecover } from '../../../lib/session/plan-remote.ts';
import type { ClaimView } from '../../../lib/landing/view.ts';
import type { Snapshot, Task } from '../../../lib/sources/types.ts';

const task = (id: string): Task => ({ id, title: `Story ${id}` }) as Task;
const snapshot = (ready: string[]): Snapshot => ({ ready: ready.map(task), remaining: ready.map(task), done: [] });
/** The source's side-by-side rule: here, every ready task but T4 (which waits for the others). */
const workers = { startable: (snap: Snapshot) => snap.ready.filter((item) => item.id !== 'T4') };
const none = { startable: () => [] };

describe('firstTasks', () => {
  it.each<[string, string[], Pick<typeof workers, 'startable'>, number, string[], string[]]>([
    ['one worker: the first ready task', ['T1', 'T2'], workers, 1, [], ['T1']],
    ['one worker: the first ready task no other host holds', ['T1', 'T2', 'T3'], workers, 1, ['T1'], ['T2']],
    ['several: what may start side by side, up to --parallel', ['T1', 'T2', 'T3', 'T4'], workers, 3, [], ['T1', 'T2', 'T3']],
    ['several: minus what other hosts hold', ['T1', 'T2', 'T3', 'T4'], workers, 2, ['T1', 'T3'], ['T2']],
    ['nothing may start side by side: the next ready task alone', ['T1', 'T2'], none, 2, [], ['T1']],
    ['… unless another host holds it', ['T1', 'T2'], none, 2, ['T1'], []],
    ['every task held: none', ['T1', 'T2'], workers, 2, ['T1', 'T2'], []],
  ])('%s', (_name, ready, support, parallel, held, first) => {
    expect(firstTasks(snapshot(ready), support, parallel, new Set(held)).map((item) => item.id)).toEqual(first);
  });

  it('several hosts: what may start side by side even with one worker; two workers or more read it from a place of their own', () => {
    const ready = ['T1', 'T2', 'T3', 'T4'];
    const hosts = ['h1-1a2b', 'h2-3c4d', 'h3-5e6f', 'h4-7081', 'h5-9293'];
    // One worker: the source's order (T4 may not start side by side, so T1 after it).
    for (const host of hosts) expect(firstTasks(snapshot(['T4', 'T1', 'T2']), workers, 1, new Set(), host).map((item) => item.id)).toEqual(['T1']);
    const firsts = hosts.map((host) => firstTasks(snapshot(ready), workers, 2, new Set(), host).map((item) => item.id));
    for (const first of firsts) expect(first.every((id) => ['T1', 'T2', 'T3'].includes(id)) && first.length === 2).toBe(true);
    expect(new Set(firsts.map((first) => first.join())).size).toBeGreaterThan(1);
    expect(firstTasks(snapshot(ready), workers, 2, new Set(['T1', 'T2']), 'h1-1a2b').map((item) => item.id)).toEqual(['T3']);
  });

});


describe('claimsToRecover: what --dry-run --remote says recovery does with the claims', () => {
  const claim = (task: string, host: string, clone: string): ClaimView => ({ task, host, clone, run: 'r1', pid: 1, since: '2026-11-26T12:00:00.000Z', renewedAt: '2026-11-26T12:00:00.000Z', expired: false });
  const view = { name: 'origin', branch: 'feat', claims: [claim('US-001', 'host1', '/w/a'), claim('US-002', 'host2', '/w/b')] };

  it.each<[string, boolean, string[], string[]]>([
    ['the lock free: a dead run of this clone left US-001; its task is free', true, ['US-002'], ['release the claim a killed run of this clone left on US-001']],
    ['the lock held: a live run of this clone holds US-001, nothing to recover', false, ['US-001', 'US-002'], []],
  ])('%s', (_what, lockFree, held, recover) => {
    const got = claimsToRecover(view, '/w/a', 'host1', lockFree);
    expect({ held: [...got.held].sort(), recover: got.recover }).toEqual({ held, recover });
  });

  it('claims that could not be read: nothing to recover', () => {
    expect(claimsToRecover({ ...view, error: 'origin does not answer' }, '/w/a', 'host1', true).recover).toEqual([]);
  });
});
