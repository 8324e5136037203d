// One wait for a usage-limit reset per session: every worker that hits the limit joins it, and a later
// reset announced meanwhile extends it. Long waits say now and then how long is left.
import type { Deps } from '../deps.ts';
import { formatDuration } from '../duration.ts';
import type { EventBus } from '../events.ts';

export interface UsageWaitRequest {
  /** When the limit resets (epoch ms, margin included). */
  until: number;
  /** The reset the provider announced (no margin), when it named one. */
  reset?: number;
  iteration: number;
  reason: string;
  signal: AbortSignal;
}

export interface UsageWait {
  /** Resolves once the session's current reset time (this one or a later one) has passed. */
  wait(request: UsageWaitRequest): Promise<void>;
  /** The reset being waited for, when a wait is going on. */
  readonly until: number | undefined;
  /** Resolves when the wait going on ends (undefined when none is). */
  readonly pending: Promise<void> | undefined;
}

const COUNTDOWN_EVERY_MS = 10 * 60_000;

export function createUsageWait(deps: Pick<Deps, 'now' | 'sleep'>, bus: EventBus): UsageWait {
  let target = 0;
  /** The provider's reset behind `target`, when it named one. */
  let targetReset: number | undefined;
  let running: Promise<void> | undefined;
  /** The latest time a finished wait slept to: a reset before it has been waited for already. */
  let waited = 0;

  const sleepUntilTarget = async (signal: AbortSignal): Promise<void> => {
    try {
      for (let left = target - deps.now(); left > 0; left = target - deps.now()) {
        await deps.sleep(Math.min(left, COUNTDOWN_EVERY_MS), signal);
        const remaining = target - deps.now();
        if (remaining > 1000) bus.emit({ type: 'info', message: `still waiting for the usage limit to reset: ${formatDuration(remaining)} left` });
      }
    } finally {
      waited = Math.max(waited, target);
      running = undefined;
    }
  };

  return {
    get until() {
      return running ? target : undefined;
    },
    get pending() {
      return running?.catch(() => undefined);
    },
    async wait(request) {
      const announce = (): void => bus.emit({ type: 'usage_wait', iteration: request.iteration, until: target, reason: request.reason });
      // A worker that reports a reset the session has already slept past (it hit the limit as the wait
      // ended) tries again at once: that is still the one wait.
      if (!running && request.reset !== undefined && request.reset <= waited) return;
      // The same announced reset, reported by another worker a moment later (its margin counted from a
      // later clock reading), is the same wait: joined, not extended or announced again.
      const sameReset = request.reset !== undefined && request.reset === targetReset;
      if (!running) {
        target = request.until;
        targetReset = request.reset;
        announce();
        running = sleepUntilTarget(request.signal);
      } else if (request.until > target && !sameReset) {
        target = request.until;
        targetReset = request.reset;
        announce();
      }
      await running;
    },
  };
}
