// Keeps this host's claims alive (--remote): from the moment a worker claims its bead until the iteration
// is settled, the bead is renewed every lease/3, so another host sees it written well within the lease.
//
// The timers are unref'd on purpose: a renewal must never keep ralph running once the loop is done (the
// entry point sets process.exitCode and lets node drain), and when ralph dies they die with it, which is
// what lets another host take its beads over.
import { errorMessage } from '../../errors.ts';
import type { Renewal } from './lease.ts';

export interface ClaimKeeper {
  /** `worker` now holds `id`: renew it from now on (whatever it held before is no longer renewed). */
  hold(worker: number, id: string): void;
  /** `worker`'s iteration is over: stop renewing its bead. */
  release(worker: number): void;
  /** Stop every renewal. */
  stop(): void;
}

export interface KeeperOptions {
  /** Milliseconds between renewals (lease/3). */
  every: number;
  renew(id: string, worker: number): Promise<Renewal>;
  warn(message: string): void;
  /** Schedules `fn` after `ms`; returns the cancel. Default: an unref'd setTimeout. */
  schedule?(fn: () => void, ms: number): () => void;
}

function unrefTimeout(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

export function createClaimKeeper(options: KeeperOptions): ClaimKeeper {
  const schedule = options.schedule ?? unrefTimeout;
  // One entry per hold: a renewal still in flight from an earlier hold of the same worker sees it is stale.
  interface Hold {
    id: string;
    cancel: () => void;
  }
  const held = new Map<number, Hold>();

  const tick = (worker: number, hold: Hold, failures: number): void => {
    const current = (): boolean => held.get(worker) === hold;
    hold.cancel = schedule(() => {
      void options.renew(hold.id, worker).then(
        (renewal) => {
          if (!current()) return;
          if (renewal.kind === 'held') return tick(worker, hold, 0);
          held.delete(worker);
          // Closed: the agent finished it. Lost: this host failed to renew for a whole lease (or someone
          // reassigned the bead); its agent is now working on a bead another holds.
          if (renewal.kind === 'lost') options.warn(`${hold.id} is no longer held by this host (now ${renewal.status}, ${renewal.holder}): its claim expired or was taken over while worker ${worker} worked on it`);
        },
        (error: unknown) => {
          if (!current()) return;
          // bd unreachable for a moment: try again next time; say so once, not every lease/3.
          if (failures === 0) options.warn(`could not renew the claim of ${hold.id} (worker ${worker}): ${errorMessage(error)}; trying again`);
          tick(worker, hold, failures + 1);
        },
      );
    }, options.every);
  };

  const release = (worker: number): void => {
    held.get(worker)?.cancel();
    held.delete(worker);
  };

  return {
    hold(worker, id) {
      release(worker);
      const hold: Hold = { id, cancel: () => undefined };
      held.set(worker, hold);
      tick(worker, hold, 0);
    },
    release,
    stop() {
      for (const worker of [...held.keys()]) release(worker);
    },
  };
}
