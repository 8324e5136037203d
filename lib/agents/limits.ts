import dayjs from 'dayjs';
// Types only (the plugins declare dayjs's .tz() and .utc()); the code is required by zoned() below.
import type {} from 'dayjs/plugin/timezone.js';
import type {} from 'dayjs/plugin/utc.js';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let zones = false;

/**
 * dayjs with its utc and timezone plugins, loaded at the first use: only a reset time given with a time
 * zone needs them, and loading them cost every start of ralph 15-20 ms.
 */
function zoned(): typeof dayjs {
  if (!zones) {
    dayjs.extend(require('dayjs/plugin/utc.js') as dayjs.PluginFunc);
    dayjs.extend(require('dayjs/plugin/timezone.js') as dayjs.PluginFunc);
    zones = true;
  }
  return dayjs;
}

/** Texts that mean "you used up your allowance; wait for the reset" (see reference/agent-clis.md). */
const USAGE_LIMIT_PATTERNS: readonly RegExp[] = [
  /hit your (?:[\w-]+ )*limit/i,
  /usage limit reached/i,
  /limit will reset at/i,
  /out of extra usage/i,
  /exhausted your (?:daily )?quota/i,
  /quota exceeded/i,
  /exceeded your current quota/i,
  /insufficient_quota|quota_exceeded/i,
  /hit a rate limit that restricts the number of copilot model requests/i,
  /out of credits/i,
  /TerminalQuotaError/,
];

export function isUsageLimitText(text: string): boolean {
  return USAGE_LIMIT_PATTERNS.some((pattern) => pattern.test(text));
}

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

function unitOf(word: string): number | undefined {
  const w = word.toLowerCase();
  if (w.startsWith('d')) return UNIT_MS.d;
  if (w.startsWith('h')) return UNIT_MS.h;
  if (w.startsWith('mi') || w === 'm') return UNIT_MS.m;
  if (w.startsWith('s')) return UNIT_MS.s;
  return undefined;
}

/** `3 days 6 hours 57 minutes`, `2 hours`, `60s`, `1h30m` → milliseconds. */
export function parseSpokenDuration(text: string): number | undefined {
  const part = /(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b/gi;
  let total = 0;
  let found = false;
  for (let match = part.exec(text); match; match = part.exec(text)) {
    const unit = unitOf(match[2]!);
    if (unit === undefined) continue;
    total += Number(match[1]) * unit;
    found = true;
  }
  return found ? Math.round(total) : undefined;
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The next moment (after `now`) that the wall clock in `zone` shows hour:minute. */
export function nextClockTime(hour: number, minute: number, now: number, zone?: string): number {
  const useZone = zone && validZone(zone) ? zone : undefined;
  const time = useZone ? zoned() : dayjs;
  const base = useZone ? time(now).tz(useZone) : time(now);
  let candidate = base.hour(hour).minute(minute).second(0).millisecond(0);
  if (useZone) candidate = time.tz(candidate.format('YYYY-MM-DDTHH:mm:ss'), useZone);
  let ms = candidate.valueOf();
  // A clock time already past today means tomorrow.
  if (ms <= now) {
    const tomorrow = base.add(1, 'day').hour(hour).minute(minute).second(0).millisecond(0);
    ms = useZone ? time.tz(tomorrow.format('YYYY-MM-DDTHH:mm:ss'), useZone).valueOf() : tomorrow.valueOf();
  }
  return ms;
}

function to24h(hour: number, meridiem: string | undefined): number {
  if (!meridiem) return hour;
  const pm = meridiem.toLowerCase() === 'pm';
  if (hour === 12) return pm ? 12 : 0;
  return pm ? hour + 12 : hour;
}

const CLOCK = String.raw`(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?`;
const ZONE = String.raw`(?:\s*\(([^)]+)\)|\s+(UTC|GMT|Z)\b)?`;

/**
 * Reads when a usage limit resets from an agent's message, in every form seen in the wild: an epoch
 * (`…reached|1753441200`), a clock time with or without zone (`resets 3:22am (UTC)`, `try again at
 * 2:26 AM`), or a duration (`in 3 days 6 hours 57 minutes`, `retry after 60s`). Undefined when none.
 */
export function parseResetTime(text: string, now: number): number | undefined {
  const epoch = /\|\s*(\d{10,13})\b/.exec(text) ?? /\breset(?:s|sAt)?["':\s]+(\d{10,13})\b/i.exec(text);
  if (epoch) {
    const value = Number(epoch[1]);
    return value < 1e12 ? value * 1000 : value;
  }
  const clock = new RegExp(String.raw`(?:resets?(?:\s+at)?|reset at|try again at|available (?:again )?at)\s+` + CLOCK + ZONE, 'i').exec(text);
  if (clock && (clock[2] !== undefined || clock[3] !== undefined)) {
    const hour = to24h(Number(clock[1]), clock[3]?.replace(/\./g, ''));
    const minute = Number(clock[2] ?? 0);
    if (hour < 24 && minute < 60) {
      const zone = clock[4] ?? clock[5];
      return nextClockTime(hour, minute, now, zone === 'Z' || zone === 'GMT' ? 'UTC' : zone?.trim());
    }
  }
  const spoken = /(?:try again|retry|resets?|available)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)/i.exec(text);
  if (spoken) {
    const ms = parseSpokenDuration(spoken[1]!);
    if (ms !== undefined) return now + ms;
  }
  return undefined;
}

/** Bounded escalating waits for a usage limit whose reset time could not be read: 5m, 15m, 30m, 1h… */
export function fallbackWait(consecutive: number): number {
  const steps = [5, 15, 30, 60];
  return (steps[Math.min(consecutive, steps.length - 1)] ?? 60) * 60_000;
}
