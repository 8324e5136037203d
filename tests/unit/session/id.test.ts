import dayjs from 'dayjs';
import { describe, expect, it } from 'vitest';
import { newSessionId } from '../../../lib/session/id.ts';

const at = (text: string): number => dayjs(text).valueOf();

describe('newSessionId', () => {
  it('names the local start time to the millisecond, then a six-character tag', () => {
    const id = newSessionId(at('2026-01-18T10:15:00.042'));
    expect(id).toMatch(/^20260118-101500-042-[0-9a-z]{6}$/);
  });

  it('never repeats for runs started in the same millisecond', () => {
    const now = at('2026-01-18T10:15:00.000');
    const ids = new Set(Array.from({ length: 2000 }, () => newSessionId(now)));
    expect(ids.size).toBe(2000);
  });

  it('sorts by start time as plain strings, older second-resolution ids included', () => {
    const times = ['2026-01-18T10:15:00.000', '2026-01-18T10:15:00.009', '2026-01-18T10:15:00.010', '2026-01-18T10:15:00.999', '2026-01-18T10:15:01.000', '2026-01-19T00:00:00.000', '2027-01-01T00:00:00.000'];
    const ids = times.map((time) => newSessionId(at(time)));
    expect([...ids].reverse().sort()).toEqual(ids);
    const legacy = ['20260118-101459', '20260118-101500', '20260118-101501'];
    expect([...legacy, ...ids].sort()).toEqual(['20260118-101459', '20260118-101500', ids[0], ids[1], ids[2], ids[3], '20260118-101501', ...ids.slice(4)]);
  });
});
