// The asking side of the control channel, shared by `ralph stop|pause|unpause` and the buttons of
// `ralph serve`: find the live run through its lock, check that the caller owns it, then write (or
// remove) the request addressed to it. `stop --now` is Ctrl+C sent to the lock's holder.
import { statSync } from 'node:fs';
import path from 'node:path';
import { inspectLock, LOCK_FILE, type LockInfo } from '../repo/lock.ts';
import { readStatusFile } from '../progress/status-file.ts';
import { clearRequest, currentUid, judgeRequest, readRequest, REQUEST_KINDS, writeRequest, type ControlRequest, type RequestKind, type RunTarget } from './channel.ts';

export type ControlAction = 'stop' | 'stop-now' | 'pause' | 'unpause';

export interface ControlResult {
  /** 0 when the request was made (or already was), 1 when there is no run to steer or it is not ours. */
  exitCode: number;
  message: string;
  /** The run the request went to. */
  pid?: number;
}

export interface RequestOptions {
  /** Who asks, for the run's log. */
  by: string;
  now?: number;
  uid?: number;
  /** Sends a signal (tests replace it). */
  kill?: (pid: number, signal: NodeJS.Signals) => void;
}

/** The uid a process runs as (/proc), else the owner of its lock file. */
export function holderUid(root: string, pid: number): number | undefined {
  for (const file of [`/proc/${pid}`, path.join(root, LOCK_FILE)]) {
    try {
      return statSync(file).uid;
    } catch {
      // try the next
    }
  }
  return undefined;
}

/** Requests left for runs that are gone: removed so they can never act on anything. */
function clearStale(root: string, live: RunTarget | undefined, uid: number): number {
  let cleared = 0;
  for (const kind of REQUEST_KINDS) {
    const found = readRequest(root, kind);
    if (!found) continue;
    if (live && judgeRequest(found, live, found.fileUid) === 'valid') continue;
    if (found.fileUid !== uid && uid !== 0) continue;
    clearRequest(root, kind);
    cleared += 1;
  }
  return cleared;
}

/** What the run is doing, for the answer: `iteration 3: ws-1.2 Add login`. */
function doing(root: string, info: LockInfo): string {
  const status = readStatusFile(root);
  if (!status || status.pid !== info.pid || !status.task) return '';
  return ` (iteration ${status.iteration}: ${status.task.id} ${status.task.title})`;
}

/** Makes one request to the run holding the lock in `root`. Never throws for a missing or foreign run. */
export function requestControl(root: string, action: ControlAction, options: RequestOptions): ControlResult {
  const now = options.now ?? Date.now();
  const uid = options.uid ?? currentUid();
  const lock = inspectLock(root, now);
  const info = lock.held ? lock.info : undefined;
  if (!lock.held) {
    const cleared = clearStale(root, undefined, uid);
    const note = cleared > 0 ? ` (removed ${cleared} stale request${cleared === 1 ? '' : 's'} left by a run that is gone)` : '';
    return { exitCode: 1, message: `no ralph run in progress in ${root}${note}` };
  }
  if (!info) return { exitCode: 1, message: `a ralph run is starting up in ${root}: try again in a moment` };
  const owner = holderUid(root, info.pid);
  if (owner !== undefined && owner !== uid) {
    return { exitCode: 1, message: `ralph (PID ${info.pid}) in ${root} belongs to uid ${owner}: only its owner can steer it`, pid: info.pid };
  }
  const target: RunTarget = { pid: info.pid, startedAt: info.startedAt };
  clearStale(root, target, uid);
  const who = `ralph (PID ${info.pid})`;
  const current = (kind: RequestKind): ControlRequest | undefined => {
    const found = readRequest(root, kind);
    return found && judgeRequest(found, target, uid) === 'valid' ? found.request : undefined;
  };
  const write = (kind: RequestKind): void => writeRequest(root, { version: 1, kind, target, uid, by: options.by, requestedAt: new Date(now).toISOString() });

  switch (action) {
    case 'stop': {
      const already = current('stop');
      if (already) return { exitCode: 0, message: `a stop was already requested at ${already.requestedAt}: ${who} ends after its current iteration`, pid: info.pid };
      write('stop');
      return { exitCode: 0, message: `${who} will stop after its current iteration${doing(root, info)}; 'ralph stop --now' stops the agent at once`, pid: info.pid };
    }
    case 'stop-now':
      try {
        (options.kill ?? process.kill)(info.pid, 'SIGINT');
      } catch (error) {
        return { exitCode: 1, message: `cannot signal ${who}: ${(error as Error).message}`, pid: info.pid };
      }
      return { exitCode: 0, message: `sent SIGINT to ${who}: it stops the agent now, like Ctrl+C`, pid: info.pid };
    case 'pause': {
      const already = current('pause');
      if (already) return { exitCode: 0, message: `${who} is already paused since ${already.requestedAt}`, pid: info.pid };
      write('pause');
      return { exitCode: 0, message: `${who} pauses: the current iteration finishes, then no new one starts until 'ralph unpause'${doing(root, info)}`, pid: info.pid };
    }
    case 'unpause': {
      if (!current('pause')) return { exitCode: 0, message: `${who} is not paused`, pid: info.pid };
      clearRequest(root, 'pause');
      return { exitCode: 0, message: `${who} goes on`, pid: info.pid };
    }
  }
}
