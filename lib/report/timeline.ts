// The HTML report's timeline: one bar per iteration on a time axis, as inline SVG (no scripts, no network).
import { formatDuration } from '../duration.ts';
import type { IterationOutcome, IterationRecord } from '../events.ts';
import { escapeHtml } from './escape.ts';
import { formatCost, outcomeText } from './totals.ts';

export const OUTCOME_COLOUR: Record<IterationOutcome, string> = { pass: '#2da44e', fail: '#d1242f', no_change: '#d4a72c', question: '#8250df' };

const WIDTH = 1000;
const LEFT = 56;
const RIGHT = 32;
const TOP = 8;
const LANE = 24;
const BAR = 16;
const AXIS = 28;
const STEPS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10_800e3, 21_600e3, 43_200e3, 86_400e3];

interface Span {
  start: number;
  duration: number;
}

/** Where each bar sits, relative to the first start; records with unreadable times follow the previous one. */
export function spans(records: readonly IterationRecord[]): Span[] {
  const starts = records.map((record) => Date.parse(record.startedAt));
  const origin = Math.min(...starts.filter(Number.isFinite));
  let cursor = 0;
  return records.map((record, index) => {
    const parsed = starts[index]!;
    const duration = Number.isFinite(record.durationMs) ? Math.max(0, record.durationMs) : 0;
    const start = Number.isFinite(parsed) && Number.isFinite(origin) ? parsed - origin : cursor;
    cursor = start + duration;
    return { start, duration };
  });
}

/** A tick step giving at most about six ticks over `span` milliseconds. */
export function tickStep(span: number): number {
  return STEPS_MS.find((step) => span / step <= 6) ?? Math.ceil(span / 6 / 86_400e3) * 86_400e3;
}

/**
 * The lane of each record: one lane per iteration with one worker; with several workers one lane per
 * worker (`w1`, `w2`, …), so what ran at the same time is seen side by side.
 */
export function lanes(records: readonly IterationRecord[]): { labels: string[]; of: number[] } {
  const workers = [...new Set(records.map((record) => record.worker).filter((worker): worker is number => worker !== undefined))].sort((a, b) => a - b);
  if (workers.length === 0) return { labels: records.map((record) => `#${record.iteration}`), of: records.map((_, index) => index) };
  return { labels: workers.map((worker) => `w${worker}`), of: records.map((record) => Math.max(0, workers.indexOf(record.worker ?? workers[0]!))) };
}

/** The SVG chart; an empty string when no iteration ran. */
export function renderTimeline(records: readonly IterationRecord[]): string {
  if (records.length === 0) return '';
  const placed = spans(records);
  const lane = lanes(records);
  const byWorker = lane.labels.length !== records.length || records.some((record) => record.worker !== undefined);
  const total = Math.max(1, ...placed.map((span) => span.start + span.duration));
  const plot = WIDTH - LEFT - RIGHT;
  const x = (ms: number): number => LEFT + (ms / total) * plot;
  const height = TOP + lane.labels.length * LANE + AXIS;
  const axisY = TOP + lane.labels.length * LANE;
  const parts: string[] = [];
  parts.push(`<svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="timeline of ${records.length} iterations${byWorker ? ` on ${lane.labels.length} workers` : ''}">`);
  const step = tickStep(total);
  for (let tick = 0; tick <= total + 1e-9; tick += step) {
    const at = x(tick).toFixed(1);
    parts.push(`<line class="grid" x1="${at}" x2="${at}" y1="${TOP}" y2="${axisY}"/>`);
    parts.push(`<text class="tick" x="${at}" y="${axisY + 18}" text-anchor="middle">${escapeHtml(tick === 0 ? '0' : formatDuration(tick))}</text>`);
  }
  parts.push(`<line class="axis" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${axisY}" y2="${axisY}"/>`);
  lane.labels.forEach((label, index) => {
    const y = TOP + index * LANE + (LANE - BAR) / 2;
    parts.push(`<text class="lane" x="${LEFT - 8}" y="${y + BAR / 2 + 4}" text-anchor="end">${escapeHtml(label)}</text>`);
  });
  records.forEach((record, index) => {
    const span = placed[index]!;
    const y = TOP + lane.of[index]! * LANE + (LANE - BAR) / 2;
    const barX = x(span.start);
    const barWidth = Math.max(3, (span.duration / total) * plot);
    const colour = OUTCOME_COLOUR[record.outcome] ?? '#888888';
    const tip = `#${record.iteration} ${record.taskId} ${record.taskTitle}${record.worker === undefined ? '' : ` (worker w${record.worker})`}\n${outcomeText(record)}\n${formatDuration(record.durationMs)}, ${formatCost(record.costUsd)}, ${record.filesChanged.length} file(s) changed`;
    parts.push(
      `<rect class="bar ${record.outcome}" data-outcome="${escapeHtml(record.outcome)}"${record.worker === undefined ? '' : ` data-worker="${record.worker}"`} x="${barX.toFixed(1)}" y="${y}" width="${barWidth.toFixed(1)}" height="${BAR}" rx="3" fill="${colour}"><title>${escapeHtml(tip)}</title></rect>`,
    );
    if (byWorker && barWidth > 28) parts.push(`<text class="bar-label" x="${(barX + 4).toFixed(1)}" y="${y + BAR / 2 + 4}">#${record.iteration}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
