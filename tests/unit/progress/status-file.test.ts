import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readStatusFile, StatusFileSink, statusPath } from '../../../lib/progress/status-file.ts';
import { describeState, formatCountdown } from '../../../lib/progress/describe.ts';
import { script, sessionStart, T0, task } from './fixtures.ts';
import { tempDir } from '../../support/temp.ts';

const temp = () => tempDir('ralph-status-');
const read = (root: string) => JSON.parse(readFileSync(statusPath(root), 'utf8')) as Record<string, unknown>;
const iso = (offset: number) => new Date(T0 + offset).toISOString();

afterEach(() => vi.useRealTimers());

describe('StatusFileSink', () => {
  it('writes nothing before session_start (the previous run’s file stays)', () => {
    const root = temp();
    const sink = new StatusFileSink(root, { host: 'box' });
    sink.emit({ type: 'warning', message: 'reclaiming a stale lock' }, T0);
    expect(existsSync(statusPath(root))).toBe(false);
  });

  it('follows a run through start, backoff, usage wait, the iteration end and the session end', () => {
    const root = temp();
    const sink = new StatusFileSink(root, { host: 'box' });
    const at = (index: number) => {
      const [offset, event] = script[index]!;
      sink.emit(event, T0 + offset);
      return read(root);
    };

    expect(at(0)).toEqual({
      version: 1,
      sessionId: '20261122-020000',
      pid: 4242,
      host: 'box',
      branch: '001-ralph-automation',
      mode: 'beads',
      target: 'epic ws-9w6 "Feature: ralph-automation"',
      agent: 'claude',
      state: 'starting',
      iteration: 0,
      ofRun: 0,
      maxIterations: 50,
      attempt: 0,
      task: null,
      startedAt: iso(0),
      lastEventAt: iso(0),
      waitUntil: null,
      waitReason: null,
      lastFailure: null,
      counts: { iterations: 0, passed: 0, failed: 0, noChange: 0, questions: 0, tasksCompleted: 0, reviewsApproved: 0, reviewsRejected: 0 },
      costUsd: 0,
      logDir: '/repo/.ralph/logs/20261122-020000',
      status: null,
      exitCode: null,
      message: null,
      endedAt: null,
      tasksRemaining: null,
      workers: null,
      skippedTaskIds: null,
      reviewer: null,
      lastReview: null,
      pausedSince: null,
      stopRequestedAt: null,
      questions: [],
    });

    expect(at(1)).toMatchObject({ state: 'running', iteration: 1, maxIterations: 50, attempt: 1, task: { id: task.id, title: task.title }, lastEventAt: iso(1000) });
    // Agent chatter within the throttle window is not written at once…
    expect(at(2)).toMatchObject({ lastEventAt: iso(1000) });
    // …but a result carrying cost is a change worth writing.
    expect(at(3)).toMatchObject({ costUsd: 0.05, lastEventAt: iso(2000) });
    expect(at(4)).toMatchObject({ state: 'running', lastFailure: { kind: 'transient', reason: 'API Error: Request rejected (429)', at: iso(2100) } });
    expect(at(5)).toMatchObject({ state: 'backing_off', attempt: 2, waitUntil: iso(6100), waitReason: 'transient failure' });
    // The next attempt's first output ends the backoff.
    expect(at(6)).toMatchObject({ state: 'running', attempt: 2, waitUntil: null, waitReason: null });
    expect(at(7)).toMatchObject({ state: 'running', lastFailure: { kind: 'usage_limit' } });
    expect(at(8)).toMatchObject({ state: 'waiting_usage_reset', waitUntil: iso(3_600_000), waitReason: 'usage limit (five_hour)', attempt: 2 });
    expect(at(9)).toMatchObject({ state: 'running', waitUntil: null });
    expect(at(10)).toMatchObject({
      state: 'running',
      counts: { iterations: 1, passed: 1, failed: 0, noChange: 0, tasksCompleted: 1 },
      costUsd: 0.25,
    });
    expect(at(11)).toMatchObject({
      state: 'finished',
      status: 'completed',
      exitCode: 0,
      message: 'all tasks of epic ws-9w6 are complete',
      endedAt: iso(3_661_000),
      tasksRemaining: 0,
      costUsd: 0.25,
    });
    sink.close();
    // Atomic rewrites leave no temp files behind.
    expect(readdirSync(path.join(root, '.ralph'))).toEqual(['status.json']);
    expect(readStatusFile(root)?.state).toBe('finished');
  });

  it('counts failed and no-change iterations and sums their costs', () => {
    const root = temp();
    const sink = new StatusFileSink(root, { host: 'box' });
    sink.emit(sessionStart, T0);
    const base = script[10]![1];
    if (base.type !== 'iteration_end') throw new Error('fixture');
    sink.emit({ type: 'iteration_end', record: { ...base.record, outcome: 'fail', tasksDone: [], costUsd: 0.5 } }, T0 + 10);
    sink.emit({ type: 'iteration_end', record: { ...base.record, iteration: 2, outcome: 'no_change', tasksDone: [], costUsd: 0.25 } }, T0 + 20);
    sink.emit({ type: 'iteration_end', record: { ...base.record, iteration: 3, costUsd: 0.25 } }, T0 + 30);
    expect(read(root)).toMatchObject({ counts: { iterations: 3, passed: 1, failed: 1, noChange: 1, tasksCompleted: 1 }, costUsd: 1 });
  });

  it('throttles agent activity to one write a second, with a trailing write', () => {
    vi.useFakeTimers();
    const root = temp();
    const sink = new StatusFileSink(root, { host: 'box', throttleMs: 1000 });
    sink.emit(sessionStart, T0);
    sink.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0 + 100);
    for (let index = 1; index <= 5; index += 1) sink.emit({ type: 'agent', iteration: 1, event: { kind: 'text', text: `line ${index}` } }, T0 + 100 + index * 100);
    expect(read(root).lastEventAt).toBe(iso(100));
    // 1 s after the last write, agent output is written again.
    sink.emit({ type: 'agent', iteration: 1, event: { kind: 'text', text: 'later' } }, T0 + 1100);
    expect(read(root).lastEventAt).toBe(iso(1100));
    sink.emit({ type: 'agent', iteration: 1, event: { kind: 'tool_call', name: 'Bash', summary: 'ls' } }, T0 + 1300);
    expect(read(root).lastEventAt).toBe(iso(1100));
    vi.advanceTimersByTime(1000);
    expect(read(root).lastEventAt).toBe(iso(1300));
    // A state change is never held back.
    sink.emit({ type: 'backoff', iteration: 1, attempt: 1, delayMs: 500, until: T0 + 1900, reason: 'transient failure' }, T0 + 1400);
    expect(read(root)).toMatchObject({ state: 'backing_off', lastEventAt: iso(1400) });
    sink.close();
  });

  it('close() flushes throttled activity', () => {
    const root = temp();
    const sink = new StatusFileSink(root, { host: 'box', throttleMs: 60_000 });
    sink.emit(sessionStart, T0);
    sink.emit({ type: 'info', message: 'hello' }, T0 + 5);
    expect(read(root).lastEventAt).toBe(iso(0));
    sink.close();
    expect(read(root).lastEventAt).toBe(iso(5));
  });

  it('readStatusFile tolerates a missing or foreign file', () => {
    expect(readStatusFile(temp())).toBeUndefined();
  });
});

describe('StatusFileSink and steering', () => {
  it('records a stop request, a pause, the hold and the resume', () => {
    const root = temp();
    const sink = new StatusFileSink(root, { host: 'box' });
    sink.emit(sessionStart, T0);
    sink.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0 + 1000);
    sink.emit({ type: 'control', request: 'pause', requestedAt: T0 + 2000, by: 'ralph pause (PID 7)' }, T0 + 2100);
    expect(read(root)).toMatchObject({ state: 'running', pausedSince: iso(2000), stopRequestedAt: null });
    sink.emit({ type: 'paused', since: T0 + 2000 }, T0 + 5000);
    expect(read(root)).toMatchObject({ state: 'paused', pausedSince: iso(2000) });
    sink.emit({ type: 'control', request: 'unpause', requestedAt: T0 + 6000, by: 'ralph unpause' }, T0 + 6000);
    sink.emit({ type: 'resumed', pausedMs: 1000 }, T0 + 6000);
    expect(read(root)).toMatchObject({ state: 'running', pausedSince: null });
    sink.emit({ type: 'control', request: 'stop', requestedAt: T0 + 7000, by: 'ralph stop (PID 8)' }, T0 + 7000);
    expect(read(root)).toMatchObject({ stopRequestedAt: iso(7000) });
  });
});

const dayjsClock = (at: number): string => new Date(at).toTimeString().slice(0, 8);

describe('describeState', () => {
  const base = { attempt: 1, status: null, exitCode: null, waitUntil: null } as const;
  const now = Date.parse('2026-11-22T12:00:00Z');
  it('words each state with its countdown', () => {
    expect(describeState({ ...base, state: 'running' }, now)).toBe('running');
    expect(describeState({ ...base, state: 'running', attempt: 3 }, now)).toBe('running (attempt 3)');
    expect(describeState({ ...base, state: 'backing_off', attempt: 2, waitUntil: new Date(now + 4200).toISOString() }, now)).toMatch(/^backing off until \d\d:\d\d:\d\d \(5s\)$/);
    expect(describeState({ ...base, state: 'backing_off', attempt: 2, waitUntil: new Date(now - 1).toISOString() }, now)).toBe('retrying (attempt 2)');
    expect(describeState({ ...base, state: 'waiting_usage_reset', waitUntil: new Date(now + 2 * 3_600_000).toISOString() }, now)).toMatch(/^waiting for usage reset until .*\(2h 00m\)$/);
    expect(describeState({ ...base, state: 'finished', status: 'limit_reached', exitCode: 2 }, now)).toBe('finished: limit_reached (exit 2)');
  });

  it('adds what was asked from another terminal: a pause, a stop', () => {
    const since = new Date(now - 60_000).toISOString();
    expect(describeState({ ...base, state: 'paused', pausedSince: since }, now)).toBe(`paused since ${dayjsClock(now - 60_000)} (ralph unpause goes on)`);
    expect(describeState({ ...base, state: 'running', pausedSince: since }, now)).toBe(`running; paused since ${dayjsClock(now - 60_000)}: no new iteration starts`);
    expect(describeState({ ...base, state: 'waiting_usage_reset', waitUntil: new Date(now + 90_000).toISOString(), pausedSince: since }, now)).toMatch(/^waiting for usage reset until .* \(1m 30s\); paused since \d\d:\d\d:\d\d: no new iteration starts$/);
    expect(describeState({ ...base, state: 'running', stopRequestedAt: since, pausedSince: since }, now)).toBe('running; stopping after this iteration');
    expect(describeState({ ...base, state: 'paused', stopRequestedAt: since, pausedSince: since }, now)).toMatch(/^paused since .*; stopping$/);
    expect(describeState({ ...base, state: 'finished', status: 'interrupted', exitCode: 130, stopRequestedAt: since }, now)).toBe('finished: interrupted (exit 130)');
  });

  it('formats countdowns in whole seconds under a minute', () => {
    expect([formatCountdown(0), formatCountdown(1), formatCountdown(59_001), formatCountdown(65_000)]).toEqual(['0s', '1s', '60s', '1m 05s']);
  });
});
