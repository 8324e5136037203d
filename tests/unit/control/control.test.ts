import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp.ts';
import { clearRequest, controlDir, judgeRequest, readRequest, requestPath, writeRequest, type ControlRequest } from '../../../lib/control/channel.ts';
import { createControl, type Control } from '../../../lib/control/index.ts';
import { StopRequestedError } from '../../../lib/errors.ts';
import { EventBus, type RunEvent } from '../../../lib/events.ts';
import type { UsageWait } from '../../../lib/iteration/usage-wait.ts';

const TARGET = { pid: 4242, startedAt: '2026-11-22T02:00:00.000Z' };
const UID = 1000;
const temp = (): string => tempDir('ralph-control-');

function request(kind: 'stop' | 'pause', extra: Partial<ControlRequest> = {}): ControlRequest {
  return { version: 1, kind, target: TARGET, uid: UID, by: `ralph ${kind} (PID 77)`, requestedAt: '2026-11-22T02:05:00.000Z', ...extra };
}

describe('judgeRequest', () => {
  const found = (req: ControlRequest | undefined, fileUid = UID) => ({ kind: 'stop' as const, file: '/x', fileUid, request: req });
  it.each([
    ['valid: this run, its owner', found(request('stop')), 'valid'],
    ['stale: another PID', found(request('stop', { target: { ...TARGET, pid: 1 } })), 'stale'],
    ['stale: same PID reused by a later run', found(request('stop', { target: { ...TARGET, startedAt: '2026-11-21T00:00:00.000Z' } })), 'stale'],
    ['foreign: file owned by another user', found(request('stop'), 1001), 'foreign'],
    ['foreign: another uid claimed inside', found(request('stop', { uid: 1001 })), 'foreign'],
    ['corrupt: not a request', found(undefined), 'corrupt'],
  ])('%s', (_name, input, verdict) => {
    expect(judgeRequest(input, TARGET, UID)).toBe(verdict);
  });
});

describe('the channel files', () => {
  it('writes atomically into an owner-only folder; reads back with the file owner; clears', () => {
    const root = temp();
    writeRequest(root, request('pause'));
    expect(statSync(controlDir(root)).mode & 0o777).toBe(0o700);
    const found = readRequest(root, 'pause');
    expect(found).toMatchObject({ kind: 'pause', fileUid: process.getuid?.(), request: request('pause') });
    clearRequest(root, 'pause');
    expect(readRequest(root, 'pause')).toBeUndefined();
  });

  it('reads garbage as a request without content (corrupt), never as a valid one', () => {
    const root = temp();
    writeRequest(root, request('stop'));
    writeFileSync(requestPath(root, 'stop'), '{"version":1,"kind":"stop"');
    expect(readRequest(root, 'stop')?.request).toBeUndefined();
    writeFileSync(requestPath(root, 'stop'), JSON.stringify({ ...request('stop'), kind: 'pause' }));
    expect(readRequest(root, 'stop')?.request).toBeUndefined();
  });
});

interface Harness {
  root: string;
  events: RunEvent[];
  control: Control;
  sleeps: number;
  /** Runs before each sleep of the hold loop (the test's "other terminal"). */
  onSleep: (() => void) | undefined;
  abort: AbortController;
}

const controls: Control[] = [];
afterEach(() => {
  for (const control of controls.splice(0)) control.close();
});

function harness(root = temp(), uid = process.getuid?.() ?? -1, pollMs = 60_000): Harness {
  const events: RunEvent[] = [];
  const bus = new EventBus(() => Date.now());
  bus.add({ emit: (event) => events.push(event) });
  const abort = new AbortController();
  const h: Harness = { root, events, sleeps: 0, onSleep: undefined, abort, control: undefined as unknown as Control };
  h.control = createControl({
    root,
    target: TARGET,
    bus,
    uid,
    signal: abort.signal,
    pollMs,
    deps: {
      now: () => Date.now(),
      sleep: async (_ms, signal) => {
        h.sleeps += 1;
        if (signal?.aborted) throw new Error('aborted');
        h.onSleep?.();
      },
    },
  });
  controls.push(h.control);
  return h;
}

/** Resolves with `promise`, or fails naming `what` when it has not settled within `ms`. */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const own = (kind: 'stop' | 'pause', extra: Partial<ControlRequest> = {}): ControlRequest => request(kind, { uid: process.getuid?.() ?? -1, ...extra });

describe('createControl', () => {
  it('removes a stale request at start, with one info line, and lets iterations start', () => {
    const root = temp();
    writeRequest(root, own('stop', { target: { pid: 1, startedAt: '2026-01-01T00:00:00.000Z' } }));
    const h = harness(root);
    expect(existsSync(requestPath(root, 'stop'))).toBe(false);
    expect(h.events).toEqual([{ type: 'info', message: expect.stringMatching(/^ignored and removed a stale stop request by ralph stop \(PID 77\) .* meant for PID 1 /) }]);
    expect(h.control.gate(0, undefined)).toEqual({ hold: false });
  });

  it('obeys a stop once: one control event; the message names the last iteration', () => {
    const h = harness();
    writeRequest(h.root, own('stop'));
    writeRequest(h.root, own('stop'));
    expect(h.control.gate(2, 3)).toEqual({ hold: true, stop: 'stopped on request after iteration 3' });
    expect(h.control.gate(0, 3)).toEqual({ hold: true, stop: 'stopped on request after iteration 3' });
    expect(h.events.filter((event) => event.type === 'control')).toEqual([{ type: 'control', request: 'stop', requestedAt: Date.parse('2026-11-22T02:05:00.000Z'), by: 'ralph stop (PID 77)' }]);
    const fresh = harness();
    writeRequest(fresh.root, own('stop'));
    expect(fresh.control.gate(0, undefined).stop).toBe('stopped on request before the first iteration');
  });

  it('holds while paused: paused once nothing runs, changed() on unpause, then resumed', async () => {
    const h = harness(temp(), process.getuid?.() ?? -1, 20);
    writeRequest(h.root, own('pause'));
    expect(h.control.gate(1, 1)).toEqual({ hold: true });
    expect(h.events.map((event) => event.type)).toEqual(['control']);
    expect(h.control.gate(0, 1)).toEqual({ hold: true });
    expect(h.control.gate(0, 1)).toEqual({ hold: true });
    const changed = h.control.changed();
    expect(h.control.changed()).toBe(changed);
    // The loop waits on `changed` from here on; the next look at the channel (every 20 ms) finds the unpause.
    clearRequest(h.root, 'pause');
    await within(changed, 'the wait to end on unpause');
    expect(h.control.gate(0, 1)).toEqual({ hold: false });
    expect(h.events.map((event) => (event.type === 'control' ? `control ${event.request}` : event.type))).toEqual(['control pause', 'paused', 'control unpause', 'resumed']);
    expect(h.events[1]).toEqual({ type: 'paused', since: Date.parse('2026-11-22T02:05:00.000Z') });
  });

  it('a stop while paused: the stop, and no resumed', async () => {
    const h = harness(temp(), process.getuid?.() ?? -1, 20);
    writeRequest(h.root, own('pause'));
    expect(h.control.gate(0, 2)).toEqual({ hold: true });
    const changed = h.control.changed();
    writeRequest(h.root, own('stop'));
    await within(changed, 'the wait to end on the stop');
    expect(h.control.gate(0, 2)).toEqual({ hold: true, stop: 'stopped on request after iteration 2' });
    expect(h.events.map((event) => event.type)).not.toContain('resumed');
  });

  it('Ctrl+C wakes a held loop: the wait ends at once, the pause still stands, and a later wait does not block', async () => {
    // Requests are looked for once a minute here: only the abort can end the wait within the deadline.
    const h = harness();
    writeRequest(h.root, own('pause'));
    expect(h.control.gate(0, 1)).toEqual({ hold: true });
    let woke = false;
    const changed = h.control.changed().then(() => (woke = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(woke, 'the held wait ended with nothing to wake it').toBe(false);
    h.abort.abort('SIGINT');
    await within(changed, 'the held wait to end after Ctrl+C');
    // Ctrl+C is no unpause: the loop still may not start an iteration, and nothing says it resumed; the
    // loop ends the run on the aborted signal itself.
    expect(h.control.gate(0, 1)).toEqual({ hold: true });
    expect(h.events.map((event) => (event.type === 'control' ? `control ${event.request}` : event.type))).toEqual(['control pause', 'paused']);
    // The loop asks again after waking: once the run is interrupted, no wait may hold it.
    await within(h.control.changed(), 'a wait after Ctrl+C to end at once');
  });

  it('ignores and removes a request written by another user', () => {
    const h = harness(temp(), 12345);
    writeRequest(h.root, own('stop'));
    expect(h.control.gate(0, 1)).toEqual({ hold: false });
    expect(existsSync(requestPath(h.root, 'stop'))).toBe(false);
    expect(h.events).toContainEqual({ type: 'warning', message: expect.stringMatching(/^ignored and removed a stop request written by uid \d+; only this run's owner \(uid 12345\) can steer it$/) });
  });

  it('close() removes this run’s requests but never another run’s', () => {
    const h = harness();
    writeRequest(h.root, own('pause'));
    h.control.close();
    expect(existsSync(requestPath(h.root, 'pause'))).toBe(false);
    writeRequest(h.root, own('stop', { target: { pid: 5, startedAt: 'x' } }));
    h.control.close();
    expect(JSON.parse(readFileSync(requestPath(h.root, 'stop'), 'utf8')).target.pid).toBe(5);
  });

  it('warns once when the control folder cannot be created', () => {
    const root = temp();
    writeFileSync(path.join(root, '.ralph'), 'a file where the folder should be');
    const h = harness(root);
    expect(h.events.filter((event) => event.type === 'warning')).toHaveLength(1);
  });
});

describe('wrapUsageWait', () => {
  function slowWait(): UsageWait & { calls: number } {
    const wait = {
      calls: 0,
      until: undefined,
      pending: undefined,
      wait: (req: { signal: AbortSignal }) => {
        wait.calls += 1;
        return new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, 50);
          req.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          });
        });
      },
    };
    return wait as unknown as UsageWait & { calls: number };
  }
  const req = (signal: AbortSignal) => ({ until: Date.now() + 50, iteration: 4, reason: 'usage limit', signal });

  it('passes through when nobody steers', async () => {
    const h = harness();
    const inner = slowWait();
    await h.control.wrapUsageWait(inner).wait(req(h.abort.signal));
    expect(inner.calls).toBe(1);
  });

  it('a stop already requested ends the wait at once with StopRequestedError', async () => {
    const h = harness();
    writeRequest(h.root, own('stop'));
    h.control.gate(1, 1);
    const error = await h.control.wrapUsageWait(slowWait()).wait(req(h.abort.signal)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StopRequestedError);
    expect(error).toMatchObject({ exitCode: 130, message: 'stopped on request during the usage-limit wait of iteration 4; its task stays open' });
    // The run then ends with that message once nothing runs.
    expect(h.control.gate(0, 3).stop).toBe('stopped on request during the usage-limit wait of iteration 4; its task stays open');
  });

  it('a stop arriving during the wait ends it early', async () => {
    const h = harness(temp(), process.getuid?.() ?? -1, 20);
    let waiting!: () => void;
    const inWait = new Promise<void>((resolve) => (waiting = resolve));
    const long: UsageWait = {
      until: undefined,
      pending: undefined,
      wait: (request) => new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 30_000);
        request.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
        waiting();
      }),
    };
    const ending = h.control.wrapUsageWait(long).wait(req(h.abort.signal)).catch((caught: unknown) => caught);
    await within(inWait, 'the usage-limit wait to start');
    writeRequest(h.root, own('stop'));
    // Well before the 30 s the wait would take.
    expect(await within(ending, 'the stop to end the wait', 5_000)).toBeInstanceOf(StopRequestedError);
  });

  it('holds after the reset while paused', async () => {
    const h = harness();
    writeRequest(h.root, own('pause'));
    h.onSleep = () => {
      if (h.sleeps === 2) clearRequest(h.root, 'pause');
    };
    await h.control.wrapUsageWait(slowWait()).wait(req(h.abort.signal));
    expect(h.sleeps).toBe(2);
    expect(h.events.map((event) => event.type)).toContain('resumed');
  });
});
