// ralph's own backoff, not zx's retry()/expBackoff(): those have no jitter (every run waits the same delays),
// take no AbortSignal (Ctrl+C would wait out the delay) and retry every error, not only transient ones.
import { abortError } from './errors.ts';

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  random: () => number;
}

/** Exponential backoff with full jitter: attempt n waits random() × min(max, base × 2^n). */
export function nextDelay(attempt: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 52));
  return Math.round(options.random() * ceiling);
}

/** The delays before retry 1, 2, … as a generator. */
export function* backoffDelays(options: BackoffOptions): Generator<number, never> {
  for (let attempt = 0; ; attempt += 1) yield nextDelay(attempt, options);
}

export type AttemptVerdict<T> =
  | { kind: 'done'; value: T }
  | { kind: 'retry'; reason: string; value: T }
  /** Wait without spending an attempt (usage limits). */
  | { kind: 'wait'; ms: number; reason: string; value: T }
  /** Go again at once without spending an attempt (another agent takes over from a limited one). */
  | { kind: 'again'; reason: string; value: T };

export interface RetryOptions<T> {
  attempts: number;
  delays: Iterator<number>;
  signal: AbortSignal;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  onWait?: (info: { ms: number; reason: string }) => Promise<void> | void;
  /** How a wait is slept (e.g. with a countdown); defaults to `sleep`. */
  waitSleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  attempt: (attempt: number) => Promise<AttemptVerdict<T>>;
}

export interface RetryOutcome<T> {
  value: T;
  attempts: number;
  exhausted: boolean;
  lastReason?: string;
}

/** One generic abortable retry loop: retries spend attempts and back off; waits spend nothing. */
export async function retry<T>(options: RetryOptions<T>): Promise<RetryOutcome<T>> {
  let attempt = 0;
  for (;;) {
    if (options.signal.aborted) throw abortError(options.signal);
    attempt += 1;
    const verdict = await options.attempt(attempt);
    if (verdict.kind === 'done') return { value: verdict.value, attempts: attempt, exhausted: false };
    if (verdict.kind === 'again') {
      attempt -= 1;
      continue;
    }
    if (verdict.kind === 'wait') {
      attempt -= 1;
      await options.onWait?.({ ms: verdict.ms, reason: verdict.reason });
      await (options.waitSleep ?? options.sleep)(verdict.ms, options.signal);
      continue;
    }
    if (attempt >= options.attempts) {
      return { value: verdict.value, attempts: attempt, exhausted: true, lastReason: verdict.reason };
    }
    const delayMs = options.delays.next().value as number;
    options.onRetry?.({ attempt, delayMs, reason: verdict.reason });
    await options.sleep(delayMs, options.signal);
  }
}
