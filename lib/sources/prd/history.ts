// One JSON record per iteration under .rulebook-ralph/history/iteration-<N>.json: what `ralph resume`,
// `status` and `report` read back, and what keeps iteration numbers unique across runs.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ReviewRecord } from '../../events.ts';
import { writeFileAtomic } from '../../repo/fs-atomic.ts';

export const STATE_DIR = '.rulebook-ralph';

export interface GateMetric {
  name: string;
  command: string;
  passed: boolean;
  exitCode: number;
  durationMs: number;
  timedOut?: boolean;
  /** Kept for failed gates only, so the record explains the failure. */
  outputTail?: string;
}

export interface QualityMetrics {
  /** Gates ralph ran after the agent. */
  gates: GateMetric[];
  gatesPassed: number;
  gatesFailed: number;
  /** True when every gate passed (and vacuously when none ran). */
  allPassed: boolean;
  /** What the agent said about its own checks; informative only. */
  reported: Array<{ name: string; passed: boolean; detail?: string }>;
}

/** `interrupted`: written by recovery for an iteration a crash or kill cut short; `question`: the agent asked a person. */
export type CompletionStatus = 'completed' | 'failed' | 'partial' | 'interrupted' | 'question';

export interface HistoryRecord {
  iterationNumber: number;
  /** ISO time the record was written. */
  timestamp: string;
  sessionId?: string;
  taskId: string;
  taskTitle: string;
  /** Ids of the tasks the iteration worked on. */
  tasksAttempted: string[];
  /** Ids of the tasks it completed. */
  tasksCompleted: string[];
  failedCount: number;
  qualityMetrics: QualityMetrics;
  durationMs: number;
  agent: string;
  commit: string | null;
  learnings: string[];
  completionStatus: CompletionStatus;
  reason: string;
  summary?: string;
  commitMessages?: string[];
  contextLoss?: string[];
  /** The independent review of the iteration (--review): verdict, reasons, cost and tokens. */
  review?: ReviewRecord;
  /** What the agent asked a person (completionStatus `question`). */
  question?: string;
}

export function historyDir(root: string): string {
  return path.join(root, STATE_DIR, 'history');
}

export function historyFile(root: string, iteration: number): string {
  return path.join(historyDir(root), `iteration-${iteration}.json`);
}

function recordNumbers(root: string): number[] {
  let names: string[];
  try {
    names = readdirSync(historyDir(root));
  } catch {
    return [];
  }
  return names
    .map((name) => /^iteration-(\d+)\.json$/.exec(name)?.[1])
    .filter((digits): digits is string => digits !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/** Whether a record after `iteration` is `taskId`'s (several hosts: a landing renumbers its record past another host's). */
export function recordedAfter(root: string, iteration: number, taskId: string): boolean {
  return recordNumbers(root).some((number) => number > iteration && readHistoryRecord(root, number)?.taskId === taskId);
}

/** The highest recorded iteration number (0 when none); counts unreadable records too. */
export function lastHistoryIteration(root: string): number {
  return recordNumbers(root).at(-1) ?? 0;
}

/** One iteration's record, or undefined when it is missing or unreadable. */
export function readHistoryRecord(root: string, iteration: number): HistoryRecord | undefined {
  try {
    const data: unknown = JSON.parse(readFileSync(historyFile(root, iteration), 'utf8'));
    return typeof data === 'object' && data !== null && typeof (data as HistoryRecord).iterationNumber === 'number' ? (data as HistoryRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** Every readable record, oldest first; unreadable or foreign files are skipped. */
export function readHistory(root: string): HistoryRecord[] {
  const records: HistoryRecord[] = [];
  // A record cut short by a crash must not stop a resume.
  for (const number of recordNumbers(root)) {
    const record = readHistoryRecord(root, number);
    if (record) records.push(record);
  }
  return records;
}

/** Writes one record atomically (`durable: false`: without waiting for the disk); returns its path. */
export function writeHistoryRecord(root: string, record: HistoryRecord, options: { durable?: boolean } = {}): string {
  const file = historyFile(root, record.iterationNumber);
  writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, options);
  return file;
}
