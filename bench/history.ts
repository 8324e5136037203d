// bench/results.json: the last runs of `npm run bench`, newest last, so each figure can be shown beside
// the one measured before it (with that run's load average: a figure taken under load is not comparable).
import { readFileSync, writeFileSync } from 'node:fs';
import type { Row } from './report.ts';

/** How many runs results.json keeps. */
export const KEPT_RUNS = 20;

export interface BenchmarkRun {
  name: string;
  seconds: number;
  /** The 1-minute load average before and after the benchmark. */
  loadBefore: string;
  loadAfter: string;
}

export interface RunRecord {
  machine: Record<string, string | number>;
  runs: BenchmarkRun[];
  rows: Row[];
}

export interface History {
  runs: RunRecord[];
}

/** Reads the history; a results.json of the older one-run shape counts as one run, anything unreadable as none. */
export function readHistory(file: string): History {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { runs: [] };
  }
  if (typeof data !== 'object' || data === null) return { runs: [] };
  const record = data as Partial<History> & Partial<RunRecord>;
  if (!Array.isArray(record.rows) && Array.isArray(record.runs) && record.runs.every((run) => typeof run === 'object' && run !== null && Array.isArray((run as RunRecord).rows))) {
    return { runs: record.runs as RunRecord[] };
  }
  if (Array.isArray(record.rows) && record.machine) return { runs: [{ machine: record.machine, runs: record.runs ?? [], rows: record.rows }] };
  return { runs: [] };
}

/** The history with `run` appended, the oldest runs dropped past KEPT_RUNS. */
export function appendRun(history: History, run: RunRecord, kept = KEPT_RUNS): History {
  return { runs: [...history.runs, run].slice(-kept) };
}

export function writeHistory(file: string, history: History): void {
  writeFileSync(file, `${JSON.stringify(history, null, 2)}\n`);
}

const key = (row: Pick<Row, 'benchmark' | 'figure'>): string => `${row.benchmark}\u0000${row.figure}`;

/** Where a row's figure was taken: the load average around its benchmark (older results: at the run's start). */
function loadOf(run: RunRecord, row: Row): string {
  const load = row.load ?? (typeof run.machine.loadavg === 'string' ? run.machine.loadavg : '');
  return load ? `load ${load}` : '';
}

/**
 * For each row, the same figure in the most recent earlier run that measured it: `306 MB FAIL (2026-11-22,
 * load 1.68→1.59)`; '' when no earlier run has it.
 */
export function previousFigures(history: History, rows: readonly Row[]): string[] {
  return rows.map((row) => {
    for (let index = history.runs.length - 1; index >= 0; index -= 1) {
      const run = history.runs[index]!;
      const found = run.rows.find((item) => key(item) === key(row));
      if (!found) continue;
      const date = typeof run.machine.date === 'string' ? run.machine.date.slice(0, 10) : '';
      const where = [date, loadOf(run, found)].filter(Boolean).join(', ');
      const verdict = found.verdict === 'INFO' ? '' : ` ${found.verdict}`;
      return `${found.result}${verdict}${where ? ` (${where})` : ''}`;
    }
    return '';
  });
}
