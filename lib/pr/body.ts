// The pull request's body: the run's summary between two markers, so a later run rewrites its own part and
// leaves whatever someone wrote above or below it. Pure.
import type { RunSummary } from '../events.ts';
import { formatDuration } from '../duration.ts';
import { escapeCell, iterationsTable } from '../report/markdown.ts';
import { formatCost, skippedText } from '../report/totals.ts';

export const SUMMARY_BEGIN = '<!-- ralph:summary (ralph rewrites what is between these two lines at each run with --pr) -->';
export const SUMMARY_END = '<!-- /ralph:summary -->';

const STATUS_TEXT: Record<RunSummary['status'], string> = {
  completed: 'complete',
  limit_reached: 'stopped at a limit, work left',
  failed: 'failed, work left',
  interrupted: 'interrupted',
};

/** The summary block: status, tasks done, left and skipped, iterations, cost, then the report's iteration table. */
export function renderSummaryBlock(summary: RunSummary, context: { branch: string; target: string }): string {
  const passed = summary.records.filter((record) => record.outcome === 'pass').length;
  const rows: Array<[string, string]> = [
    ['status', `${summary.status}: ${summary.message} (exit ${summary.exitCode})`],
    ['tasks', `${summary.tasksCompleted} done in this run, ${summary.tasksRemaining} left`],
    ['skipped', skippedText(summary.skippedTaskIds ?? [])],
    ['iterations', `${summary.iterations} (${passed} passed)`],
    ['cost', formatCost(summary.costUsd)],
    ['duration', formatDuration(summary.durationMs)],
    ['agent', summary.agent],
    ['session', `${summary.sessionId} (report: .ralph/reports/${summary.sessionId}.md)`],
  ];
  return [
    SUMMARY_BEGIN,
    `### ralph on \`${context.branch}\`: ${STATUS_TEXT[summary.status]}`,
    '',
    '| | |',
    '| --- | --- |',
    ...rows.map(([key, value]) => `| **${key}** | ${escapeCell(value)} |`),
    '',
    '#### Iterations',
    '',
    ...iterationsTable(summary),
    '',
    `_Written by ralph --pr at the end of session ${summary.sessionId}; the branch is pushed to ${context.target}._`,
    SUMMARY_END,
  ].join('\n');
}

/** `body` with its summary block replaced by `block`, or `block` added below what is there. */
export function withSummaryBlock(body: string, block: string): string {
  const begin = body.indexOf(SUMMARY_BEGIN);
  const end = begin >= 0 ? body.indexOf(SUMMARY_END, begin) : -1;
  if (begin >= 0 && end >= 0) return `${body.slice(0, begin)}${block}${body.slice(end + SUMMARY_END.length)}`;
  const kept = body.trimEnd();
  return kept ? `${kept}\n\n${block}\n` : `${block}\n`;
}
