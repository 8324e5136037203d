// The pull request's body: the run's summary between two markers, so a later run rewrites its own part and
// leaves whatever someone wrote above or below it. Pure.
import type { RunSummary } from '../events.ts';
import { formatDuration } from '../duration.ts';
import { escapeCell, iterationsTable } from '../report/markdown.ts';
import { AGENT_COLUMNS, agentRows, formatCost, skippedText } from '../report/totals.ts';
import { answerCommand } from '../questions/text.ts';

export const SUMMARY_BEGIN = '<!-- ralph:summary (ralph rewrites what is between these two lines at each run with --pr) -->';
export const SUMMARY_END = '<!-- /ralph:summary -->';

const STATUS_TEXT: Record<RunSummary['status'], string> = {
  completed: 'complete',
  limit_reached: 'stopped at a limit, work left',
  failed: 'failed, work left',
  interrupted: 'interrupted',
};

/**
 * The summary block: status, tasks done, left and skipped, iterations, cost, then the report's iteration
 * table. `notOnRemote`: the run's paths left uncommitted, which the pushed branch lacks: never "complete".
 */
export function renderSummaryBlock(summary: RunSummary, context: { branch: string; target: string; notOnRemote?: readonly string[] }): string {
  const passed = summary.records.filter((record) => record.outcome === 'pass').length;
  const missing = context.notOnRemote ?? [];
  const heading = missing.length === 0 ? STATUS_TEXT[summary.status] : summary.status === 'completed' ? `done in the working tree, not on ${context.target}` : `${STATUS_TEXT[summary.status]}; not all on ${context.target}`;
  const rows: Array<[string, string]> = [
    ['status', `${summary.status}: ${summary.message} (exit ${summary.exitCode})${missing.length > 0 ? `; in the working tree only, not on ${context.target}` : ''}`],
    ...(missing.length > 0 ? [['not on the remote', `${missing.length === 1 ? '1 path' : `${missing.length} paths`} left uncommitted by the run, so this branch lacks them: ${missing.join(', ')}`] as [string, string]] : []),
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
    `### ralph on \`${context.branch}\`: ${heading}`,
    '',
    '| | |',
    '| --- | --- |',
    ...rows.map(([key, value]) => `| **${key}** | ${escapeCell(value)} |`),
    '',
    ...questionLines(summary),
    ...agentLines(summary),
    '#### Iterations',
    '',
    ...iterationsTable(summary),
    '',
    `_Written by ralph --pr at the end of session ${summary.sessionId}; the branch is pushed to ${context.target}._`,
    SUMMARY_END,
  ].join('\n');
}

/** The questions still open (a task waits for a person's answer, or was answered and waits for the next run). */
function questionLines(summary: RunSummary): string[] {
  const open = summary.questions ?? [];
  if (open.length === 0) return [];
  return ['#### Questions', '', '| task | question | answer |', '| --- | --- | --- |', ...open.map((item) => `| ${escapeCell(`${item.taskId} ${item.taskTitle}`)} | ${escapeCell(item.question)} | ${escapeCell(item.answer ?? `waiting: ${answerCommand(item.taskId)}`)} |`), ''];
}

/** --fallback: what each agent did. */
function agentLines(summary: RunSummary): string[] {
  const rows = agentRows(summary);
  if (rows.length === 0) return [];
  return ['#### Agents', '', `| ${AGENT_COLUMNS.join(' | ')} |`, `| ${AGENT_COLUMNS.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`), ''];
}

/** `body` with its summary block replaced by `block`, or `block` added below what is there. */
export function withSummaryBlock(body: string, block: string): string {
  const begin = body.indexOf(SUMMARY_BEGIN);
  const end = begin >= 0 ? body.indexOf(SUMMARY_END, begin) : -1;
  if (begin >= 0 && end >= 0) return `${body.slice(0, begin)}${block}${body.slice(end + SUMMARY_END.length)}`;
  const kept = body.trimEnd();
  return kept ? `${kept}\n\n${block}\n` : `${block}\n`;
}
