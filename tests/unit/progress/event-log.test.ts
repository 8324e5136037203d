import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStateSinks } from '../../../lib/progress/index.ts';
import { EventLogSink, eventsPath, MAX_AGENT_TEXT } from '../../../lib/progress/event-log.ts';
import { StatusFileSink } from '../../../lib/progress/status-file.ts';
import { script, sessionStart, T0 } from './fixtures.ts';
import { tempDir } from '../../support/temp.ts';

const temp = () => tempDir('ralph-events-');
const lines = (root: string) => readFileSync(eventsPath(root), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

describe('EventLogSink', () => {
  it('appends every event as one JSON line with its time and session', () => {
    const root = temp();
    const sink = new EventLogSink(root);
    sink.emit({ type: 'warning', message: 'before the session' }, T0 - 10);
    for (const [offset, event] of script) sink.emit(event, T0 + offset);
    sink.close();
    const logged = lines(root);
    expect(logged).toHaveLength(script.length + 1);
    expect(logged[0]).toEqual({ at: new Date(T0 - 10).toISOString(), type: 'warning', message: 'before the session' });
    expect(logged.slice(1).map((line) => line.type)).toEqual(script.map(([, event]) => event.type));
    expect(logged[1]).toEqual({ at: new Date(T0).toISOString(), session: '20261122-020000', ...sessionStart });
    expect(logged[6]).toEqual({ at: new Date(T0 + 2100).toISOString(), session: '20261122-020000', type: 'backoff', iteration: 1, attempt: 1, delayMs: 4000, until: T0 + 6100, reason: 'transient failure' });
    expect(logged[9]).toMatchObject({ type: 'usage_wait', until: T0 + 3_600_000 });
    expect(logged.at(-1)).toMatchObject({ type: 'session_end', summary: { status: 'completed', exitCode: 0 } });
  });

  it('is append-only across sinks and sessions', () => {
    const root = temp();
    for (const id of ['a', 'b']) {
      const sink = new EventLogSink(root);
      sink.emit({ ...sessionStart, sessionId: id }, T0);
      sink.close();
    }
    expect(lines(root).map((line) => line.session)).toEqual(['a', 'b']);
  });

  it('truncates the agent’s text to MAX_AGENT_TEXT, saying how much was cut', () => {
    const root = temp();
    const sink = new EventLogSink(root);
    sink.emit(sessionStart, T0);
    sink.emit({ type: 'agent', iteration: 1, event: { kind: 'text', text: 'x'.repeat(100_000) } }, T0 + 1);
    sink.emit({ type: 'agent', iteration: 1, event: { kind: 'tool_call', name: 'Bash', summary: 'ls' } }, T0 + 2);
    sink.close();
    const [, text, tool] = lines(root);
    const event = text!.event as { kind: string; text: string };
    expect(event.kind).toBe('text');
    expect(event.text.length).toBeLessThan(MAX_AGENT_TEXT + 100);
    expect(event.text).toMatch(new RegExp(`^x{${MAX_AGENT_TEXT}}… \\[${100_000 - MAX_AGENT_TEXT} more chars\\]$`));
    expect(tool!.event).toEqual({ kind: 'tool_call', name: 'Bash', summary: 'ls' });
  });
});

describe('createStateSinks', () => {
  it('returns the status.json and events.jsonl sinks for a root', () => {
    const root = temp();
    const sinks = createStateSinks(root);
    expect(sinks.map((sink) => sink.constructor)).toEqual([StatusFileSink, EventLogSink]);
    for (const sink of sinks) sink.emit(sessionStart, T0);
    for (const sink of sinks) sink.close?.();
    expect(readFileSync(path.join(root, '.ralph', 'status.json'), 'utf8')).toContain('"state": "starting"');
    expect(lines(root)).toHaveLength(1);
  });
});
