// A session with no end (lib/session/dead-session.ts): found from status.json and events.jsonl, summarised
// from its events, its end recorded once.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeDeadSession, deadSessionSummary, describeDeadSession, findDeadSession } from '../../../lib/session/dead-session.ts';

let root: string | undefined;
afterEach(() => root && rmSync(root, { recursive: true, force: true }));

const record = (iteration: number, done: string[], costUsd: number) => ({ iteration, taskId: `T${iteration}`, taskTitle: 't', outcome: done.length > 0 ? 'pass' : 'fail', reason: '', tasksDone: done, costUsd, startedAt: '2026-11-27T10:00:00.000Z', durationMs: 1, attempts: 1, inputTokens: 0, outputTokens: 0, filesChanged: [], claimedComplete: false });
const line = (session: string, at: string, body: Record<string, unknown>) => `${JSON.stringify({ at, session, ...body })}\n`;

function project(state: string, events: string): string {
  root = mkdtempSync(path.join(os.tmpdir(), 'dead-session-'));
  mkdirSync(path.join(root, '.ralph'));
  writeFileSync(path.join(root, '.ralph', 'status.json'), JSON.stringify({ version: 1, sessionId: 'S2', pid: 4242, host: 'h', branch: 'b', mode: 'beads', target: 'epic x', agent: 'claude', state, iteration: 2, maxIterations: 9, attempt: 1, task: null, startedAt: '2026-11-27T10:00:00.000Z', lastEventAt: '2026-11-27T10:00:05.000Z', waitUntil: null, waitReason: null, lastFailure: null, counts: {}, costUsd: 0, logDir: '', status: null, exitCode: null, message: null, endedAt: null, tasksRemaining: null, workers: [], pausedSince: null, stopRequestedAt: null }));
  writeFileSync(path.join(root, '.ralph', 'events.jsonl'), events);
  return root;
}

const EARLIER = line('S1', '2026-11-27T09:00:00.000Z', { type: 'session_start', sessionId: 'S1' }) + line('S1', '2026-11-27T09:00:01.000Z', { type: 'iteration_end', record: record(1, ['T0'], 1) }) + line('S1', '2026-11-27T09:00:02.000Z', { type: 'session_end', summary: {} });
const DEAD = line('S2', '2026-11-27T10:00:00.000Z', { type: 'session_start', sessionId: 'S2' }) + line('S2', '2026-11-27T10:00:03.000Z', { type: 'iteration_end', record: record(1, ['T1'], 0.25) }) + line('S2', '2026-11-27T10:00:07.000Z', { type: 'iteration_end', record: record(2, [], 0.5) });

describe('findDeadSession', () => {
  it('a session status.json shows running whose events have no end: its iterations, its last event', () => {
    const dead = findDeadSession(project('running', EARLIER + DEAD + '{"at":"2026-11-27T10:00:08.000Z","sess'));
    expect(dead?.records.map((item) => item.iteration)).toEqual([1, 2]);
    expect(dead?.lastAt).toBe('2026-11-27T10:00:07.000Z');
    const summary = deadSessionSummary(dead!, 'S3', 4);
    expect(summary).toMatchObject({ status: 'interrupted', exitCode: 137, sessionId: 'S2', source: 'beads', agent: 'claude', iterations: 2, tasksCompleted: 1, tasksRemaining: 4, costUsd: 0.75, durationMs: 7000, endedAt: '2026-11-27T10:00:07.000Z' });
    expect(summary.message).toBe('died without ending (killed, its machine stopped, or a forced exit) after its last event at 2026-11-27T10:00:07.000Z; session S3 settled what it left');
  });

  it.each([
    ['a finished session', 'finished', EARLIER + DEAD],
    ['a session whose end is in the events', 'running', EARLIER + DEAD + line('S2', '2026-11-27T10:00:09.000Z', { type: 'session_end', summary: {} })],
  ])('none after %s', (_name, state, events) => {
    expect(findDeadSession(project(state, events))).toBeUndefined();
    expect(describeDeadSession(root!)).toBeUndefined();
  });

  it('no status file: none', () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'dead-session-'));
    expect(findDeadSession(root)).toBeUndefined();
  });
});

describe('closeDeadSession', () => {
  it('records the end once (after a torn line, on a line of its own), status.json finished, the session record written', async () => {
    const dir = project('running', EARLIER + DEAD + '{"at":"torn');
    expect(describeDeadSession(dir)).toBe('session S2 (PID 4242) died without ending after its last event at 2026-11-27T10:00:07.000Z: record its end (interrupted, exit 137) and write its report');
    const said = await closeDeadSession(dir, 'S3', async () => 3, (summary) => summary, Date.parse('2026-11-27T11:00:00Z'));
    expect(said).toMatch(/^the run before, session S2 \(PID 4242\), died without ending after its last event at 2026-11-27T10:00:07\.000Z \(2 iterations ended\): recorded as interrupted \(exit 137\); its report: .*S2\.md$/);
    const lines = readFileSync(path.join(dir, '.ralph', 'events.jsonl'), 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.at(-3)).toBe('{"at":"torn');
    const last = JSON.parse(lines.at(-2)!) as { session: string; type: string; summary: { tasksRemaining: number } };
    expect(last).toMatchObject({ session: 'S2', type: 'session_end', summary: { tasksRemaining: 3 } });
    expect(JSON.parse(readFileSync(path.join(dir, '.ralph', 'status.json'), 'utf8'))).toMatchObject({ state: 'finished', status: 'interrupted', exitCode: 137, workers: null });
    expect(JSON.parse(readFileSync(path.join(dir, '.ralph', 'sessions', 'S2.json'), 'utf8'))).toMatchObject({ sessionId: 'S2', iterations: 2 });
    // Closed: the next start finds nothing to close.
    expect(await closeDeadSession(dir, 'S4', async () => 3, (summary) => summary, Date.now())).toBeUndefined();
  });
});

describe('closeDeadSession after a forced exit (its journal wrote the code)', () => {
  it('said as a forced exit with its own code, not as a death', async () => {
    const dir = project('running', EARLIER + DEAD);
    expect(describeDeadSession(dir, { exitCode: 130 })).toBe('session S2 (PID 4242) was forced to exit (a second Ctrl+C) after its last event at 2026-11-27T10:00:07.000Z: record its end (interrupted, exit 130) and write its report');
    const said = await closeDeadSession(dir, 'S3', async () => 1, (summary) => summary, Date.parse('2026-11-27T11:00:00Z'), { exitCode: 130 });
    expect(said).toMatch(/^the run before, session S2 \(PID 4242\), was forced to exit \(a second Ctrl\+C\) after its last event at 2026-11-27T10:00:07\.000Z \(2 iterations ended\): recorded as interrupted \(exit 130\); its report: .*S2\.md$/);
    expect(JSON.parse(readFileSync(path.join(dir, '.ralph', 'status.json'), 'utf8'))).toMatchObject({ state: 'finished', status: 'interrupted', exitCode: 130, message: 'forced to exit (a second Ctrl+C) after its last event at 2026-11-27T10:00:07.000Z; session S3 settled what it left' });
  });
});
