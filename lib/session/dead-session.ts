// A session with no end: a run killed -9 (the OOM killer, a stopped container, a power cut) never writes its
// session_end, so .ralph/status.json stays "running", events.jsonl holds a session that began and never
// ended, and no session record or report is written. The next start (holding the lock, so that run is dead)
// closes it after recovery: the end recorded in events.jsonl and status.json, and the session's record and
// reports written from what its events say (the iterations it ended). --dry-run says it would.
import { appendFileSync, closeSync, openSync, readSync, statSync } from 'node:fs';
import type { IterationRecord, RunSummary } from '../events.ts';
import { eventLine, eventsPath } from '../progress/event-log.ts';
import { readStatusFile, statusPath } from '../progress/status-file.ts';
import type { RunStatusFile } from '../progress/state.ts';
import { writeFileAtomic } from '../repo/fs-atomic.ts';
import { PRIVATE_FILE } from '../repo/private-files.ts';
import { writeReports } from '../report/index.ts';
import { lastSessionOffset, LineTail } from '../serve/tail.ts';
import { parseLine } from '../serve/model.ts';

/** What the dead session's status file and events say of it. */
export interface DeadSession {
  status: RunStatusFile;
  /** The iterations it ended, from its iteration_end events. */
  records: IterationRecord[];
  /** Its last event, as its events or its status file last saw it. */
  lastAt: string;
}

/** A run forced to exit (a second Ctrl+C), as its journal's end says: the code it exited with, when written. */
export interface Forced {
  exitCode?: number;
}

/** As a shell shows a process killed by SIGKILL: the run had no exit code of its own. */
export const DIED_EXIT_CODE = 137;

/**
 * The session .ralph/status.json shows not finished, with what its events say; undefined when the last
 * session ended. Only read once the lock is held (or, dry run, free): then no run of it is alive.
 */
export function findDeadSession(root: string): DeadSession | undefined {
  const status = readStatusFile(root);
  if (!status || status.state === 'finished' || typeof status.sessionId !== 'string') return undefined;
  const lines = lastSessionLines(root);
  const own = lines.filter((line) => line.session === status.sessionId);
  // (status.json is written before events.jsonl: an end in the events is an end in both.)
  if (own.some((line) => line.type === 'session_end')) return undefined;
  const records = own.filter((line) => line.type === 'iteration_end').map((line) => line.record as IterationRecord);
  const lastAt = [status.lastEventAt, ...own.map((line) => line.at)].sort().at(-1)!;
  return { status, records, lastAt };
}

/** The lines of events.jsonl from the last session_start on (whole, parsed), read at most 64 MB. */
function lastSessionLines(root: string): Array<Record<string, unknown> & { at: string; type: string }> {
  const file = eventsPath(root);
  const tail = new LineTail(file);
  tail.seek(lastSessionOffset(file));
  const parsed: Array<Record<string, unknown> & { at: string; type: string }> = [];
  for (let read = 0; read < 8; read += 1) {
    const { lines } = tail.read();
    if (lines.length === 0) break;
    for (const text of lines) {
      const line = parseLine(text);
      if (line) parsed.push(line);
    }
  }
  return parsed;
}

/** The dead session's summary, as its end would have said it had it ended: interrupted, with its iterations. */
export function deadSessionSummary(dead: DeadSession, settledBy: string, tasksRemaining: number, forced?: Forced): RunSummary {
  const { status, records } = dead;
  const started = Date.parse(status.startedAt);
  const ended = Date.parse(dead.lastAt);
  return {
    status: 'interrupted',
    exitCode: forced?.exitCode ?? DIED_EXIT_CODE,
    message: forced
      ? `forced to exit (a second Ctrl+C) after its last event at ${dead.lastAt}; session ${settledBy} settled what it left`
      : `died without ending (killed, its machine stopped, or a forced exit) after its last event at ${dead.lastAt}; session ${settledBy} settled what it left`,
    sessionId: status.sessionId,
    source: status.mode,
    agent: status.agent,
    iterations: records.length,
    tasksCompleted: records.reduce((sum, record) => sum + record.tasksDone.length, 0),
    tasksRemaining,
    startedAt: status.startedAt,
    endedAt: dead.lastAt,
    durationMs: Number.isFinite(started) && Number.isFinite(ended) ? Math.max(0, ended - started) : 0,
    costUsd: records.reduce((sum, record) => sum + record.costUsd, 0),
    records,
  };
}

/** Whether the file ends in a newline (or is empty): a line appended after a torn one must start afresh. */
function endsWithNewline(file: string): boolean {
  try {
    const size = statSync(file).size;
    if (size === 0) return true;
    const fd = openSync(file, 'r');
    try {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      return last[0] === 0x0a;
    } finally {
      closeSync(fd);
    }
  } catch {
    return true;
  }
}

/** Records the end: a session_end line in events.jsonl under the dead session's id, status.json finished. */
export function recordDeadSessionEnd(root: string, dead: DeadSession, summary: RunSummary, at: number): void {
  const file = eventsPath(root);
  appendFileSync(file, `${endsWithNewline(file) ? '' : '\n'}${eventLine({ type: 'session_end', summary }, at, summary.sessionId)}`, { mode: PRIVATE_FILE });
  const status: RunStatusFile = { ...dead.status, state: 'finished', status: summary.status, exitCode: summary.exitCode, message: summary.message, endedAt: summary.endedAt, tasksRemaining: summary.tasksRemaining, workers: null, waitUntil: null, waitReason: null };
  writeFileAtomic(statusPath(root), `${JSON.stringify(status, null, 2)}\n`, { mode: PRIVATE_FILE });
}

/** What a dry run says of it: one `would recover:` line, or none; said as closeDeadSession() will say it. */
export function describeDeadSession(root: string, forced?: Forced): string | undefined {
  const dead = findDeadSession(root);
  const how = forced ? 'was forced to exit (a second Ctrl+C)' : 'died without ending';
  return dead && `session ${dead.status.sessionId} (PID ${dead.status.pid}) ${how} after its last event at ${dead.lastAt}: record its end (interrupted, exit ${forced?.exitCode ?? DIED_EXIT_CODE}) and write its report`;
}

/**
 * After recovery: the session a dead run left without an end, closed (its end recorded, its record and
 * reports written; `redact` as every summary is). Returns what to tell the user, or undefined.
 */
export async function closeDeadSession(root: string, sessionId: string, remaining: () => Promise<number | undefined>, redact: (summary: RunSummary) => RunSummary, now: number, forced?: Forced): Promise<string | undefined> {
  const dead = findDeadSession(root);
  if (!dead) return undefined;
  const left = (await remaining().catch(() => undefined)) ?? dead.status.tasksRemaining ?? 0;
  const summary = redact(deadSessionSummary(dead, sessionId, left, forced));
  const reports = writeReports(root, summary);
  recordDeadSessionEnd(root, dead, summary, now);
  const ended = dead.records.length === 1 ? '1 iteration' : `${dead.records.length} iterations`;
  const how = forced ? 'was forced to exit (a second Ctrl+C)' : 'died without ending';
  return `the run before, session ${summary.sessionId} (PID ${dead.status.pid}), ${how} after its last event at ${dead.lastAt} (${ended} ended): recorded as interrupted (exit ${summary.exitCode}); its report: ${reports.markdown}`;
}
