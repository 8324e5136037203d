import type { EventSink } from '../events.ts';
import { EventLogSink } from './event-log.ts';
import { StatusFileSink } from './status-file.ts';

export { EventLogSink, EVENTS_FILE, eventsPath } from './event-log.ts';
export { readStatusFile, StatusFileSink, STATUS_FILE, statusPath } from './status-file.ts';
export type { RunState, RunStatusFile } from './state.ts';

/** The sinks that keep a run's state on disk: `.ralph/status.json` and `.ralph/events.jsonl`. */
export function createStateSinks(root: string): EventSink[] {
  return [new StatusFileSink(root), new EventLogSink(root)];
}
