import { describe, expect, it } from 'vitest';
import { fallbackWait, isUsageLimitText, nextClockTime, parseResetTime, parseSpokenDuration } from '../../../lib/agents/limits.ts';

// 2026-11-22T01:00:00Z
const NOW = Date.UTC(2026, 10, 22, 1, 0, 0);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe('parseResetTime', () => {
  it.each([
    ["You've hit your 5-hour limit · resets 3:22am (UTC)", '2026-11-22T03:22:00.000Z'],
    ["You've hit your limit · resets 3:30am (Asia/Calcutta)", '2026-11-22T22:00:00.000Z'],
    ["You're out of extra usage · resets 9pm (UTC)", '2026-11-22T21:00:00.000Z'],
    // already past today in that zone → tomorrow
    ["You've hit your weekly limit · resets 12:30am (UTC)", '2026-11-23T00:30:00.000Z'],
    ['Claude usage limit reached. Your limit will reset at 3pm (America/Bogota).', '2026-11-22T20:00:00.000Z'],
    ['Claude AI usage limit reached|1753441200', '2025-07-25T11:00:00.000Z'],
    ['You’ve hit your usage limit. Upgrade to Pro … or try again at 2:26 AM.', '2026-11-22T02:26:00.000Z'],
    ['You’ve hit your usage limit. try again in 3 days 6 hours 57 minutes.', '2026-11-25T07:57:00.000Z'],
    ["Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours.", '2026-11-22T03:00:00.000Z'],
    ['Suggested retry after 60s.', '2026-11-22T01:01:00.000Z'],
    ['Opus limit reached, resets at 13:05 (Europe/Berlin)', '2026-11-22T12:05:00.000Z'],
  ])('%s', (text, expected) => expect(iso(parseResetTime(text, NOW))).toBe(expected));

  it('uses the local zone (TZ) for a clock time without a zone', () => {
    expect(parseResetTime('resets 9pm', NOW)).toBe(nextClockTime(21, 0, NOW));
  });

  it('returns undefined when no time is given', () => {
    expect(parseResetTime('You have exhausted your daily quota on this model.', NOW)).toBeUndefined();
    expect(parseResetTime('Quota exceeded. Check your plan and billing details.', NOW)).toBeUndefined();
  });

  it('handles the day rollover across midnight in the zone', () => {
    const lateEvening = Date.UTC(2026, 10, 22, 23, 50);
    expect(iso(parseResetTime('resets 12:10am (UTC)', lateEvening))).toBe('2026-11-23T00:10:00.000Z');
    expect(iso(parseResetTime('resets 11:55pm (UTC)', lateEvening))).toBe('2026-11-22T23:55:00.000Z');
  });
});

describe('isUsageLimitText', () => {
  it.each([
    "You've hit your 5-hour limit · resets 3:22am (UTC)",
    "You've hit your limit · resets 3:30am (Asia/Calcutta)",
    'Claude AI usage limit reached|1753441200',
    'You’ve hit your usage limit. Upgrade to Pro',
    'Quota exceeded. Check your plan and billing details.',
    'You have exhausted your daily quota on this model.',
    'You are out of credits.',
  ])('recognises %j', (text) => expect(isUsageLimitText(text)).toBe(true));

  it.each([
    'API Error: Request rejected (429) · Rate limited',
    'API Error: 529 Overloaded.',
    'exceeded retry limit, last status: 429 Too Many Requests',
    'Rate limit exceeded. Try again shortly.',
    'Implement the 5-hour limit banner in the UI',
  ])('does not mistake %j for a usage limit', (text) => expect(isUsageLimitText(text)).toBe(false));
});

describe('helpers', () => {
  it('parses spoken durations', () => {
    expect(parseSpokenDuration('3 days 6 hours 57 minutes')).toBe(((3 * 24 + 6) * 60 + 57) * 60_000);
    expect(parseSpokenDuration('nothing')).toBeUndefined();
  });

  it('escalates the fallback wait and caps it', () => {
    expect([0, 1, 2, 3, 9].map(fallbackWait)).toEqual([300_000, 900_000, 1_800_000, 3_600_000, 3_600_000]);
  });
});
