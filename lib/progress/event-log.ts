import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { AgentEvent } from '../agents/types.ts';
import type { EventSink, RunEvent } from '../events.ts';
import { PRIVATE_DIR, PRIVATE_FILE } from '../repo/private-files.ts';

export const EVENTS_FILE = path.join('.ralph', 'events.jsonl');
/** Agent text kept per field: the raw stream is in the iteration log; this log stays small enough to grep. */
export const MAX_AGENT_TEXT = 1024;

export function eventsPath(root: string): string {
  return path.join(root, EVENTS_FILE);
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more chars]` : text;
}

/** An agent event with every string field cut to `max` characters. */
export function truncateAgentEvent(event: AgentEvent, max = MAX_AGENT_TEXT): AgentEvent {
  const copy: Record<string, unknown> = { ...event };
  for (const [key, value] of Object.entries(copy)) if (typeof value === 'string') copy[key] = truncate(value, max);
  return copy as AgentEvent;
}

/** One line of events.jsonl: `{ at, session, ...event }`. */
export function eventLine(event: RunEvent, at: number, session: string | undefined): string {
  const body = event.type === 'agent' ? { ...event, event: truncateAgentEvent(event.event) } : event;
  return `${JSON.stringify({ at: new Date(at).toISOString(), ...(session ? { session } : {}), ...body })}\n`;
}

/** Appends every RunEvent as one JSON line to `.ralph/events.jsonl` (append-only, across sessions). */
export class EventLogSink implements EventSink {
  readonly essential = true;
  private readonly file: string;
  private fd: number | undefined;
  private session: string | undefined;

  constructor(root: string) {
    this.file = eventsPath(root);
  }

  emit(event: RunEvent, at: number): void {
    if (event.type === 'session_start') this.session = event.sessionId;
    if (this.fd === undefined) {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: PRIVATE_DIR });
      this.fd = openSync(this.file, 'a', PRIVATE_FILE);
    }
    // One write per line on an O_APPEND descriptor: lines stay whole and land even if ralph is killed later.
    writeSync(this.fd, eventLine(event, at, this.session));
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
