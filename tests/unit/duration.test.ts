import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../lib/duration.ts';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['0', 0],
    [' 10S ', 10_000],
    ['1d', 86_400_000],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '10', 'abc', '5 m', '-1s', '5mm', 's5', '1h 30m'])('rejects %j', (text) => expect(parseDuration(text)).toBeUndefined());
});

describe('formatDuration', () => {
  it.each([
    [850, '850ms'],
    [4200, '4.2s'],
    [185_000, '3m 05s'],
    [7_800_000, '2h 10m'],
  ])('%d → %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});
