import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp.ts';
import { readRequest, requestPath, writeRequest } from '../../../lib/control/channel.ts';
import { holderUid, requestControl } from '../../../lib/control/request.ts';
import { formatLockInfo } from '../../../lib/repo/lock.ts';

/** The lock's time: after this process started, as in a lock its holder took (an earlier one names a reused PID). */
const STARTED = new Date().toISOString();
const UID = process.getuid?.() ?? -1;
const NOW = Date.parse('2026-11-22T03:00:00.000Z');

/** A repo whose lock names this very process: a live run as far as the lock can tell. */
function liveRepo(): string {
  const root = tempDir('ralph-request-');
  writeFileSync(path.join(root, '.ralph.lock'), formatLockInfo({ pid: process.pid, startedAt: STARTED, branch: 'main' }));
  return root;
}

const ask = (root: string, action: Parameters<typeof requestControl>[1], extra: Partial<Parameters<typeof requestControl>[2]> = {}) => requestControl(root, action, { by: 'test (PID 1)', now: NOW, ...extra });

describe('requestControl', () => {
  it('stop: writes one request addressed to the lock holder; a second is the same request', () => {
    const root = liveRepo();
    const first = ask(root, 'stop');
    expect(first).toEqual({ exitCode: 0, pid: process.pid, message: `ralph (PID ${process.pid}) will stop after its current iteration; 'ralph stop --now' stops the agent at once` });
    expect(readRequest(root, 'stop')?.request).toEqual({ version: 1, kind: 'stop', target: { pid: process.pid, startedAt: STARTED }, uid: UID, by: 'test (PID 1)', requestedAt: new Date(NOW).toISOString() });
    const second = ask(root, 'stop', { now: NOW + 5000 });
    expect(second.message).toBe(`a stop was already requested at ${new Date(NOW).toISOString()}: ralph (PID ${process.pid}) ends after its current iteration`);
    expect(readRequest(root, 'stop')?.request?.requestedAt).toBe(new Date(NOW).toISOString());
  });

  it('names the iteration and task the run is on when status.json is its own', () => {
    const root = liveRepo();
    mkdirSync(path.join(root, '.ralph'));
    writeFileSync(path.join(root, '.ralph', 'status.json'), JSON.stringify({ state: 'running', pid: process.pid, iteration: 3, task: { id: 'T004', title: 'Add login' } }));
    expect(ask(root, 'pause').message).toBe(`ralph (PID ${process.pid}) pauses: the current iteration finishes, then no new one starts until 'ralph unpause' (iteration 3: T004 Add login)`);
    writeFileSync(path.join(root, '.ralph', 'status.json'), JSON.stringify({ state: 'running', pid: 1, iteration: 3, task: { id: 'T004', title: 'Add login' } }));
    expect(ask(root, 'stop').message).toBe(`ralph (PID ${process.pid}) will stop after its current iteration; 'ralph stop --now' stops the agent at once`);
  });

  it('pause and unpause toggle the pause request', () => {
    const root = liveRepo();
    expect(ask(root, 'unpause').message).toBe(`ralph (PID ${process.pid}) is not paused`);
    expect(ask(root, 'pause').message).toMatch(/pauses: the current iteration finishes, then no new one starts until 'ralph unpause'$/);
    expect(ask(root, 'pause').message).toBe(`ralph (PID ${process.pid}) is already paused since ${new Date(NOW).toISOString()}`);
    expect(ask(root, 'unpause')).toMatchObject({ exitCode: 0, message: `ralph (PID ${process.pid}) goes on` });
    expect(existsSync(requestPath(root, 'pause'))).toBe(false);
  });

  it('replaces a stale request left for a previous run', () => {
    const root = liveRepo();
    writeRequest(root, { version: 1, kind: 'stop', target: { pid: process.pid, startedAt: '2026-01-01T00:00:00.000Z' }, uid: UID, by: 'old', requestedAt: '2026-01-01T00:00:00.000Z' });
    expect(ask(root, 'stop').message).toMatch(/will stop after its current iteration/);
    expect(readRequest(root, 'stop')?.request?.target.startedAt).toBe(STARTED);
  });

  it('stop --now signals the holder with SIGINT', () => {
    const root = liveRepo();
    const sent: Array<[number, string]> = [];
    const result = ask(root, 'stop-now', { kill: (pid, signal) => sent.push([pid, signal]) });
    expect(result).toMatchObject({ exitCode: 0, message: `sent SIGINT to ralph (PID ${process.pid}): it stops the agent now, like Ctrl+C` });
    expect(sent).toEqual([[process.pid, 'SIGINT']]);
    expect(existsSync(requestPath(root, 'stop'))).toBe(false);
  });

  it('refuses to steer a run that belongs to another user', () => {
    const root = liveRepo();
    const sent: number[] = [];
    for (const action of ['stop', 'stop-now', 'pause', 'unpause'] as const) {
      const result = ask(root, action, { uid: UID + 1, kill: (pid) => sent.push(pid) });
      expect(result).toMatchObject({ exitCode: 1, message: `ralph (PID ${process.pid}) in ${root} belongs to uid ${UID}: only its owner can steer it` });
    }
    expect(sent).toEqual([]);
    expect(existsSync(requestPath(root, 'stop'))).toBe(false);
  });

  it('with no run alive: exit 1, and stale requests are removed', () => {
    const root = tempDir('ralph-request-');
    expect(ask(root, 'stop')).toEqual({ exitCode: 1, message: `no ralph run in progress in ${root}` });
    writeFileSync(path.join(root, '.ralph.lock'), formatLockInfo({ pid: 999_999, startedAt: STARTED, branch: 'main' }));
    writeRequest(root, { version: 1, kind: 'pause', target: { pid: 999_999, startedAt: STARTED }, uid: UID, by: 'old', requestedAt: STARTED });
    expect(ask(root, 'unpause')).toEqual({ exitCode: 1, message: `no ralph run in progress in ${root} (removed 1 stale request left by a run that is gone)` });
    expect(existsSync(requestPath(root, 'pause'))).toBe(false);
  });

  it('holderUid reads the process owner', () => {
    expect(holderUid('/nonexistent', process.pid)).toBe(UID);
  });
});
