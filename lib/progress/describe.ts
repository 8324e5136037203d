// The state of a run in words: for the status line, `ralph status` and the live page's server side. Pure.
import dayjs from 'dayjs';
import { formatDuration } from '../duration.ts';
import type { RunStatusFile } from './state.ts';

/** A countdown for people: whole seconds under a minute (`4s`), else `3m 05s`, `2h 10m`. */
export function formatCountdown(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 60_000) return `${Math.ceil(ms / 1000)}s`;
  return formatDuration(ms);
}

/** A wall-clock time: `HH:mm:ss` today, with the date when it is another day. */
export function formatClock(at: number, now: number): string {
  return dayjs(at).isSame(dayjs(now), 'day') ? dayjs(at).format('HH:mm:ss') : dayjs(at).format('YYYY-MM-DD HH:mm:ss');
}

type Described = Pick<RunStatusFile, 'state' | 'waitUntil' | 'attempt' | 'status' | 'exitCode'> & { reviewer?: string | null } & Partial<Pick<RunStatusFile, 'pausedSince' | 'stopRequestedAt'>>;

/**
 * The state in words, with the wait's end and countdown: `backing off until 12:03:04 (4s)`, then what
 * was asked from another terminal: `paused since 12:03:04`, `stopping after this iteration`.
 */
export function describeState(status: Described, now: number): string {
  const base = describeBaseState(status, now);
  if (status.state === 'finished') return base;
  const paused = status.pausedSince ? Date.parse(status.pausedSince) : NaN;
  const extra: string[] = [];
  if (status.stopRequestedAt) extra.push(status.state === 'paused' ? 'stopping' : 'stopping after this iteration');
  else if (Number.isFinite(paused) && status.state !== 'paused') extra.push(`paused since ${formatClock(paused, now)}: no new iteration starts`);
  return extra.length > 0 ? `${base}; ${extra.join('; ')}` : base;
}

function describeBaseState(status: Described, now: number): string {
  const until = status.waitUntil ? Date.parse(status.waitUntil) : NaN;
  switch (status.state) {
    case 'starting':
      return 'starting';
    case 'running':
      return status.attempt > 1 ? `running (attempt ${status.attempt})` : 'running';
    case 'reviewing':
      return `reviewing${status.reviewer ? ` with ${status.reviewer}` : ''}${status.attempt > 1 ? ` (attempt ${status.attempt})` : ''}`;
    case 'backing_off':
      if (!Number.isFinite(until) || until <= now) return `retrying (attempt ${status.attempt})`;
      return `backing off until ${formatClock(until, now)} (${formatCountdown(until - now)})`;
    case 'waiting_usage_reset':
      if (!Number.isFinite(until) || until <= now) return 'usage limit reset: resuming';
      return `waiting for usage reset until ${formatClock(until, now)} (${formatCountdown(until - now)})`;
    case 'paused': {
      const since = status.pausedSince ? Date.parse(status.pausedSince) : NaN;
      return Number.isFinite(since) ? `paused since ${formatClock(since, now)} (ralph unpause goes on)` : 'paused';
    }
    case 'finished':
      return `finished: ${status.status ?? 'unknown'}${status.exitCode === null ? '' : ` (exit ${status.exitCode})`}`;
  }
}
