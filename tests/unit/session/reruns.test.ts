import { describe, expect, it } from 'vitest';
import { Reruns } from '../../../lib/session/reruns.ts';
import type { Task } from '../../../lib/sources/types.ts';

const task = (id: string): Task => ({ id, title: id, status: 'open' });
const ids = (...list: string[]): Set<string> => new Set(list);

describe('Reruns', () => {
  it('runs a task again on a fresh base after its first conflict, before the source picks', () => {
    const reruns = new Reruns();
    expect(reruns.ended(task('A'), ['shared.txt'])).toBe('A conflicted when merged back (shared.txt): it runs again on a fresh base');
    expect(reruns.next(ids('A', 'B'), ids('B'), 1)).toEqual(task('A'));
    expect(reruns.next(ids('A', 'B'), ids(), 0)).toBeUndefined();
    expect(reruns.blocking).toBe(false);
  });

  it('after a second conflict in a row the task waits until nothing runs, then runs alone and blocks the rest until it ends', () => {
    const reruns = new Reruns();
    reruns.ended(task('A'), ['x']);
    expect(reruns.ended(task('A'), ['x'])).toBe('A conflicted again (x): it runs once more alone, with no other worker merging until it is done');
    expect(reruns.next(ids('A', 'B'), ids('B'), 2)).toBeNull();
    expect(reruns.blocking).toBe(false);
    expect(reruns.next(ids('A', 'B'), ids(), 0)).toEqual(task('A'));
    expect(reruns.blocking).toBe(true);
    expect(reruns.next(ids('A', 'B'), ids('A'), 1)).toBeNull();
    expect(reruns.ended(task('A'), undefined)).toBeUndefined();
    expect(reruns.blocking).toBe(false);
    expect(reruns.next(ids('B'), ids(), 0)).toBeUndefined();
  });

  it('two tasks that must run alone take turns: the second never replaces the first, and neither runs beside anything', () => {
    const reruns = new Reruns();
    for (const id of ['A', 'B']) reruns.ended(task(id), ['x']);
    reruns.ended(task('A'), ['x']);
    // B conflicts a second time while A waits for its turn: A keeps its place.
    reruns.ended(task('B'), ['x']);
    expect(reruns.next(ids('A', 'B', 'C'), ids('C'), 1)).toBeNull();
    expect(reruns.next(ids('A', 'B', 'C'), ids(), 0)).toEqual(task('A'));
    expect(reruns.blocking).toBe(true);
    expect(reruns.next(ids('A', 'B', 'C'), ids('A'), 1)).toBeNull();
    reruns.ended(task('A'), undefined);
    expect(reruns.blocking).toBe(false);
    expect(reruns.next(ids('B', 'C'), ids(), 0)).toEqual(task('B'));
    expect(reruns.blocking).toBe(true);
    reruns.ended(task('B'), undefined);
    expect(reruns.next(ids('C'), ids(), 0)).toBeUndefined();
  });

  it('a task waiting for its turn alone that got done meanwhile gives up its turn', () => {
    const reruns = new Reruns();
    reruns.ended(task('A'), ['x']);
    reruns.ended(task('A'), ['x']);
    expect(reruns.next(ids('B'), ids(), 0)).toBeUndefined();
    expect(reruns.blocking).toBe(false);
  });
});
