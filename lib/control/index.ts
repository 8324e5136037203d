// The running side of the control channel. The session creates one Control after taking the lock; the
// loop asks it, before starting iterations, whether it may (`control.gate()`: go, hold while paused or
// stopping, or stop once nothing runs) and, while held, waits for a change (`control.changed()`). A light
// timer notices requests as they arrive, so the status line, status.json and notifications show them at
// once, and a usage-limit wait ends early on a stop (and is held after its reset while paused).
import type { Deps } from '../deps.ts';
import { errorMessage, StopRequestedError } from '../errors.ts';
import type { EventBus } from '../events.ts';
import type { UsageWait } from '../iteration/usage-wait.ts';
import { clearRequest, currentUid, describeRequest, ensureControlDir, judgeRequest, readRequest, REQUEST_KINDS, type ControlRequest, type RequestKind, type RunTarget } from './channel.ts';

export interface ControlOptions {
  root: string;
  /** This run, as its lock names it. */
  target: RunTarget;
  bus: EventBus;
  deps: Pick<Deps, 'now' | 'sleep'>;
  /** The session's signal: Ctrl+C ends a pause too. */
  signal: AbortSignal;
  /** The uid allowed to steer (default: ours). */
  uid?: number;
  /** How often requests are looked for. */
  pollMs?: number;
}

export interface Gate {
  /** No new iteration may start (paused, or a stop is requested). */
  hold: boolean;
  /** A stop is requested: the message to end the run with once no iteration runs. */
  stop?: string;
}

export interface Control {
  /** Whether new iterations may start now, given how many run and the last one recorded. Never waits. */
  gate(running: number, lastIteration: number | undefined): Gate;
  /** Resolves when a request arrives or is withdrawn, or the run is interrupted (for a held loop's wait). */
  changed(): Promise<void>;
  /** The session's usage-limit wait, ended early by a stop and held after the reset while paused. */
  wrapUsageWait(wait: UsageWait): UsageWait;
  /** Whether `ralph stop` asked this run to stop, read now (not at the next poll). */
  stopRequested(): boolean;
  /** Stops watching and removes this run's requests (a request never outlives its run). */
  close(): void;
}

export const DEFAULT_POLL_MS = 500;

export function createControl(options: ControlOptions): Control {
  const { root, target, bus, deps, signal } = options;
  const uid = options.uid ?? currentUid();
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const active: Partial<Record<RequestKind, ControlRequest>> = {};
  const stopWaits = new AbortController();
  const warned = new Set<string>();
  /** The loop holds because of a pause (the 'paused' event was sent). */
  let holding: number | undefined;
  /** The iteration whose usage-limit wait a stop ended, for the final message. */
  let cutWait: number | undefined;
  let wake: { promise: Promise<void>; resolve: () => void } | undefined;

  const notify = (): void => {
    const waiting = wake;
    wake = undefined;
    waiting?.resolve();
    if (!wake) timer.unref();
  };

  const hold = (): void => {
    if (holding !== undefined || !active.pause) return;
    holding = deps.now();
    bus.emit({ type: 'paused', since: Date.parse(active.pause.requestedAt) || holding });
  };
  const release = (): void => {
    if (holding === undefined) return;
    if (!active.stop) bus.emit({ type: 'resumed', pausedMs: deps.now() - holding });
    holding = undefined;
  };

  const refresh = (): void => {
    let changed = false;
    for (const kind of REQUEST_KINDS) {
      const found = readRequest(root, kind);
      if (!found) {
        if (kind === 'pause' && active.pause) {
          delete active.pause;
          changed = true;
          bus.emit({ type: 'control', request: 'unpause', requestedAt: deps.now(), by: 'ralph unpause' });
        }
        continue;
      }
      const verdict = judgeRequest(found, target, uid);
      if (verdict !== 'valid') {
        // Never obeyed, and removed so it cannot act on a later run either.
        const why =
          verdict === 'stale'
            ? `a stale ${describeRequest(found.request!)} meant for PID ${found.request!.target.pid} (started ${found.request!.target.startedAt}), a run that is gone`
            : verdict === 'foreign'
              ? `a ${kind} request written by uid ${found.fileUid}; only this run's owner (uid ${uid}) can steer it`
              : `an unreadable ${kind} request (${found.file})`;
        try {
          clearRequest(root, kind);
          bus.emit({ type: verdict === 'stale' ? 'info' : 'warning', message: `ignored and removed ${why}` });
        } catch (error) {
          if (!warned.has(found.file)) bus.emit({ type: 'warning', message: `ignored ${why}; could not remove it: ${errorMessage(error)}` });
          warned.add(found.file);
        }
        continue;
      }
      const request = found.request!;
      if (active[kind]?.requestedAt === request.requestedAt) continue;
      active[kind] = request;
      changed = true;
      bus.emit({ type: 'control', request: kind, requestedAt: Date.parse(request.requestedAt), by: request.by });
      if (kind === 'stop') stopWaits.abort(new StopRequestedError('stopped on request'));
    }
    if (changed) notify();
  };

  try {
    ensureControlDir(root);
  } catch (error) {
    bus.emit({ type: 'warning', message: `cannot create ${root}/.ralph/control: ralph stop and ralph pause will not reach this run (${errorMessage(error)})` });
  }
  // Requests left from a dead run are judged (and cleared) before the first iteration.
  const timer = setInterval(refresh, pollMs);
  timer.unref();
  refresh();
  signal.addEventListener('abort', notify, { once: true });

  /** Inside an iteration (after a usage-limit reset): waits while a pause is in force and no stop is. */
  const holdWhilePaused = async (waitSignal: AbortSignal): Promise<void> => {
    refresh();
    if (!active.pause || active.stop) return;
    hold();
    while (active.pause && !active.stop) {
      await deps.sleep(pollMs, waitSignal);
      refresh();
    }
    release();
  };

  return {
    stopRequested() {
      refresh();
      return active.stop !== undefined;
    },
    gate(running, lastIteration) {
      refresh();
      if (active.stop) {
        const message = cutWait !== undefined ? `stopped on request during the usage-limit wait of iteration ${cutWait}; its task stays open` : lastIteration === undefined ? 'stopped on request before the first iteration' : `stopped on request after iteration ${lastIteration}`;
        return { hold: true, stop: message };
      }
      if (active.pause) {
        // The run is paused for real once nothing runs any more.
        if (running === 0) hold();
        return { hold: true };
      }
      release();
      return { hold: false };
    },
    changed() {
      if (signal.aborted) return Promise.resolve();
      if (!wake) {
        let resolve!: () => void;
        const promise = new Promise<void>((done) => (resolve = done));
        wake = { promise, resolve };
        // While the loop waits for nothing else, this timer is what keeps the process alive.
        timer.ref();
      }
      return wake.promise;
    },
    wrapUsageWait(inner) {
      return {
        get until() {
          return inner.until;
        },
        get pending() {
          return inner.pending;
        },
        async wait(request) {
          const stopped = (): StopRequestedError => {
            cutWait ??= request.iteration;
            return new StopRequestedError(`stopped on request during the usage-limit wait of iteration ${request.iteration}; its task stays open`);
          };
          if (active.stop) throw stopped();
          try {
            await inner.wait({ ...request, signal: AbortSignal.any([request.signal, stopWaits.signal]) });
          } catch (error) {
            if (stopWaits.signal.aborted && !request.signal.aborted) throw stopped();
            throw error;
          }
          // The reset has passed: a pause still holds the next agent start.
          await holdWhilePaused(request.signal);
          if (active.stop) throw stopped();
        },
      };
    },
    close() {
      clearInterval(timer);
      signal.removeEventListener('abort', notify);
      notify();
      for (const kind of REQUEST_KINDS) {
        const found = readRequest(root, kind);
        if (found && judgeRequest(found, target, uid) === 'valid') clearRequest(root, kind);
      }
    },
  };
}
