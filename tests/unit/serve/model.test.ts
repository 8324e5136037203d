import { appendFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp.ts';
import { eventLine } from '../../../lib/progress/event-log.ts';
import type { RunEvent } from '../../../lib/events.ts';
import { emptyModel, foldLine, MAX_ACTIVITY, parseLine } from '../../../lib/serve/model.ts';
import { lastSessionOffset, LineTail } from '../../../lib/serve/tail.ts';
import { record, script, sessionStart, summary, T0, task } from '../progress/fixtures.ts';

/** The script as events.jsonl lines, exactly as the event log writes them. */
function lines(events: Array<[number, RunEvent]>, session = sessionStart.sessionId): string[] {
  return events.map(([offset, event]) => eventLine(event, T0 + offset, session).trimEnd());
}

function fold(texts: string[]) {
  const model = emptyModel();
  for (const text of texts) foldLine(model, parseLine(text)!);
  return model;
}

describe('foldLine', () => {
  it('follows a run: the session, a running iteration with its live cost, then its record and the end', () => {
    const all = lines(script);
    const running = fold(all.slice(0, 5));
    expect(running.session).toEqual({ id: '20261122-020000', source: 'beads', target: 'epic ws-9w6 "Feature: ralph-automation"', agent: 'claude', branch: '001-ralph-automation', pid: 4242, maxIterations: 50, startedAt: new Date(T0).toISOString(), remote: null });
    expect(running.timeline).toEqual([
      { iteration: 1, ofRun: 1, taskId: task.id, taskTitle: task.title, startedAt: new Date(T0 + 1000).toISOString(), durationMs: null, outcome: 'running', reason: null, attempts: 2, costUsd: 0.05, inputTokens: 0, outputTokens: 0, commit: null, worker: null },
    ]);
    expect(running.activity.map((line) => line.kind)).toEqual(['iteration', 'warning']);
    const done = fold(all);
    expect(done.timeline).toHaveLength(1);
    expect(done.timeline[0]).toMatchObject({ outcome: 'pass', durationMs: 60_000, costUsd: 0.25, inputTokens: 10, outputTokens: 20 });
    expect(done.end).toEqual({ status: 'completed', exitCode: 0, message: 'all tasks of epic ws-9w6 are complete', endedAt: new Date(T0 + 3_661_000).toISOString(), tasksRemaining: 0, remote: null, landed: [] });
    expect(done.activity.map((line) => line.text)).toContain('working again');
  });

  it('a new session_start starts a new picture', () => {
    const model = fold([...lines(script), ...lines([[4_000_000, { ...sessionStart, sessionId: '20261122-030000', pid: 99 }]], '20261122-030000')]);
    expect(model.session?.id).toBe('20261122-030000');
    expect(model.timeline).toEqual([]);
    expect(model.end).toBeNull();
  });

  it('an iteration still running when the session ends is shown as interrupted', () => {
    const model = fold(lines([script[0]!, script[1]!, [9000, { type: 'session_end', summary: summary({ status: 'interrupted', exitCode: 130 }) }]]));
    expect(model.timeline[0]).toMatchObject({ outcome: 'interrupted', durationMs: 8000 });
  });

  it('keeps only the latest activity lines, one line each', () => {
    const chatter: Array<[number, RunEvent]> = Array.from({ length: 200 }, (_, index) => [2000 + index, { type: 'agent', iteration: 1, event: { kind: 'text', text: `line ${index}\nsecond line` } }]);
    const model = fold(lines([script[0]!, script[1]!, ...chatter]));
    expect(model.activity).toHaveLength(MAX_ACTIVITY);
    expect(model.activity.at(-1)).toMatchObject({ kind: 'agent', text: 'line 199 second line', iteration: 1 });
  });

  it('shows steering and tool calls; takes a worker field when events carry one', () => {
    const model = fold([
      ...lines([script[0]!]),
      JSON.stringify({ at: new Date(T0 + 1).toISOString(), type: 'iteration_start', iteration: 1, maxIterations: 50, task, worker: 'w2' }),
      ...lines([
        [2, { type: 'agent', iteration: 1, event: { kind: 'tool_call', name: 'Bash', summary: 'npm test' } }],
        [3, { type: 'control', request: 'pause', requestedAt: T0, by: 'ralph pause (PID 1)' }],
        [4, { type: 'iteration_end', record: record({ outcome: 'fail', reason: 'tests failed' }) }],
      ]),
    ]);
    expect(model.timeline[0]).toMatchObject({ worker: 'w2', outcome: 'fail', reason: 'tests failed' });
    expect(model.activity.map((line) => [line.kind, line.text])).toEqual([
      ['iteration', 'iteration 1: ws-9w6.2 Task 1: build part 1'],
      ['tool', 'Bash: npm test'],
      ['steer', 'pause requested by ralph pause (PID 1)'],
      ['error', 'iteration 1 ws-9w6.2: fail (tests failed)'],
    ]);
  });

  it('keeps this run\'s count of an iteration beside the session\'s number, up to its end; none in an older log', () => {
    const resumed = fold(lines([[0, { ...sessionStart, maxIterations: 2 }], [1000, { type: 'iteration_start', iteration: 3, ofRun: 1, maxIterations: 2, task }]]));
    expect(resumed.session?.maxIterations).toBe(2);
    expect(resumed.timeline[0]).toMatchObject({ iteration: 3, ofRun: 1, outcome: 'running' });
    const ended = fold(lines([[0, { ...sessionStart, maxIterations: 2 }], [1000, { type: 'iteration_start', iteration: 3, ofRun: 1, maxIterations: 2, task }], [2000, { type: 'iteration_end', record: record({ iteration: 3 }) }]]));
    expect(ended.timeline[0]).toMatchObject({ iteration: 3, ofRun: 1, outcome: 'pass' });
    const older = JSON.parse(lines([[1000, { type: 'iteration_start', iteration: 3, ofRun: 1, maxIterations: 2, task }]])[0]!);
    delete older.ofRun;
    expect(fold([...lines([[0, sessionStart]]), JSON.stringify(older)]).timeline[0]?.ofRun).toBeNull();
  });

  it('ignores torn and foreign lines', () => {
    expect(parseLine('{"at":"2026')).toBeUndefined();
    expect(parseLine('[1,2]')).toBeUndefined();
    expect(parseLine('{"type":"x"}')).toBeUndefined();
    const model = emptyModel();
    foldLine(model, parseLine(lines([script[1]!])[0]!)!);
    expect(model.timeline).toEqual([]);
  });
});

describe('lastSessionOffset and LineTail', () => {
  const temp = () => path.join(tempDir('ralph-tail-'), 'events.jsonl');

  it('finds the line of the last session_start, also across chunk boundaries and in a long file', () => {
    const file = temp();
    expect(lastSessionOffset(file)).toBe(0);
    const first = lines(script).join('\n') + '\n';
    // Enough agent chatter between the sessions that the scan crosses many 64 KB chunks.
    const chatter = lines(Array.from({ length: 3000 }, (_, index): [number, RunEvent] => [index, { type: 'agent', iteration: 1, event: { kind: 'text', text: `"type":"session_start" ${'x'.repeat(100)}` } }])).join('\n') + '\n';
    const second = lines([[5_000_000, { ...sessionStart, sessionId: 'second' }]], 'second')[0]! + '\n';
    writeFileSync(file, first + chatter + second + chatter);
    expect(lastSessionOffset(file)).toBe(Buffer.byteLength(first + chatter));
    writeFileSync(file, first + chatter);
    expect(lastSessionOffset(file)).toBe(0);
  });

  it('reads whole new lines only, and says when the file was replaced or shrank', () => {
    const file = temp();
    const tail = new LineTail(file);
    tail.seek(0);
    expect(tail.read()).toEqual({ lines: [], reset: false });
    writeFileSync(file, 'one\ntw');
    expect(tail.read()).toEqual({ lines: ['one'], reset: false });
    appendFileSync(file, 'o\nthree\n');
    expect(tail.read()).toEqual({ lines: ['two', 'three'], reset: false });
    expect(tail.read()).toEqual({ lines: [], reset: false });
    truncateSync(file, 2);
    expect(tail.read().reset).toBe(true);
  });
});
