// Rows of the benchmark table, the statistics behind them, and the table itself.

/** PASS/FAIL for a figure with a target; INFO for context (target `-`); NOT RUN and PENDING say why there is no verdict. */
export type Verdict = 'PASS' | 'FAIL' | 'INFO' | 'NOT RUN' | 'PENDING';

export interface Row {
  benchmark: string;
  figure: string;
  target: string;
  /** The measured value as shown, e.g. `37.2 ms`. */
  result: string;
  verdict: Verdict;
  /** The number behind `result`, for results.json. */
  value?: number;
  unit?: string;
  note?: string;
  /** The 1-minute load average before→after the benchmark that measured it (set by run.ts). */
  load?: string;
}

/** A module under bench/: runs on its own, stops by itself, returns its rows. */
export interface Benchmark {
  name: string;
  summary: string;
  run(): Promise<Row[]>;
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Linear-interpolated quantile; NaN for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

export function max(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.max(...values);
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

/** A row with a verdict from `ok` (FAIL also when the value is not a number). */
export function judged(row: Omit<Row, 'verdict'>, ok: boolean): Row {
  return { ...row, verdict: ok && (row.value === undefined || Number.isFinite(row.value)) ? 'PASS' : 'FAIL' };
}

export function info(row: Omit<Row, 'verdict' | 'target'> & { target?: string }): Row {
  return { target: '-', ...row, verdict: 'INFO' };
}

/**
 * The rows as a Markdown table: `benchmark | figure | target | result | verdict | previous`, where previous
 * is the same figure in the last run that measured it (`previous[i]` for `rows[i]`, from history.ts).
 */
export function formatTable(rows: readonly Row[], previous: readonly string[] = []): string {
  const header = ['benchmark', 'figure', 'target', 'result', 'verdict', 'previous run'];
  const body = rows.map((row, index) => [row.benchmark, row.figure, row.target, row.result, row.verdict, previous[index] || '-'].map((text) => text.replace(/\|/g, '\\|')));
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((line) => line[column]!.length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((text, column) => text.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...body.map(line)].join('\n');
}
