// Figures shared by the Markdown and HTML reports, computed once from a RunSummary.
import dayjs from 'dayjs';
import type { IterationOutcome, IterationRecord, RunSummary } from '../events.ts';
import { formatDuration } from '../duration.ts';
import { reviewLine } from '../progress/review-text.ts';
import { pullRequestText } from '../pr/lines.ts';
import { answerCommand } from '../questions/text.ts';
import { landedText } from '../landing/view-text.ts';

export interface ReportTotals {
  iterations: number;
  passed: number;
  failed: number;
  noChange: number;
  /** Iterations whose agent stopped to ask a person. */
  questions: number;
  attempts: number;
  tasksCompleted: number;
  tasksRemaining: number;
  /** Open tasks the source set aside, by id. */
  skippedTaskIds: string[];
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  /** Independent reviews: how many ran, approved, and what they cost (included in costUsd). */
  reviews: { count: number; approved: number; costUsd: number };
}

/** Sums the records; the summary's own counts win where it has them. */
export function reportTotals(summary: RunSummary): ReportTotals {
  const count = (outcome: IterationOutcome): number => summary.records.filter((record) => record.outcome === outcome).length;
  const sum = (pick: (record: IterationRecord) => number): number => summary.records.reduce((total, record) => total + (Number.isFinite(pick(record)) ? pick(record) : 0), 0);
  return {
    iterations: summary.iterations,
    passed: count('pass'),
    failed: count('fail'),
    noChange: count('no_change'),
    questions: count('question'),
    attempts: sum((record) => record.attempts),
    tasksCompleted: summary.tasksCompleted,
    tasksRemaining: summary.tasksRemaining,
    skippedTaskIds: summary.skippedTaskIds ?? [],
    costUsd: summary.costUsd,
    inputTokens: sum((record) => record.inputTokens),
    outputTokens: sum((record) => record.outputTokens),
    reviews: {
      count: summary.records.filter((record) => record.review).length,
      approved: summary.records.filter((record) => record.review?.verdict === 'approve').length,
      costUsd: sum((record) => record.review?.costUsd ?? 0),
    },
  };
}

/** `0`, `2 (T002, T003)`. */
export function skippedText(ids: readonly string[]): string {
  return ids.length === 0 ? '0' : `${ids.length} (${ids.join(', ')})`;
}

/** `3: 2 approved, 1 not, $0.0120`. */
export function reviewsText(reviews: ReportTotals['reviews']): string {
  return `${reviews.count}: ${reviews.approved} approved, ${reviews.count - reviews.approved} not, ${formatCost(reviews.costUsd)}`;
}

/** One iteration's review for a table cell: `approved by codex, $0.0040`, or `—`. */
export function reviewCell(record: IterationRecord): string {
  return record.review ? `${reviewLine(record.review)}, ${formatCost(record.review.costUsd)}` : '—';
}

export const OUTCOME_LABEL: Record<IterationOutcome, string> = { pass: 'pass', fail: 'fail', no_change: 'no change', question: 'question' };

/** `$0.0021`; four decimals because single agent runs often cost fractions of a cent. */
export function formatCost(usd: number): string {
  return `$${(Number.isFinite(usd) ? usd : 0).toFixed(4)}`;
}

export function formatCount(value: number): string {
  // By hand, not toLocaleString: its first call loads ICU's number data, ~12 ms of every run's report.
  return String(Math.round(value)).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** Local time with its offset, or the raw text when it is not a date. */
export function formatTime(iso: string): string {
  const time = dayjs(iso);
  return time.isValid() ? time.format('YYYY-MM-DD HH:mm:ss Z') : iso;
}

export function shortSha(commit: string | undefined): string | undefined {
  return commit ? commit.slice(0, 7) : undefined;
}

/** `3: a.ts, b.ts, c.ts, …` – the count and the first few paths. */
export function filesSummary(files: readonly string[], shown = 3): string {
  if (files.length === 0) return '0';
  const head = files.slice(0, shown).join(', ');
  return `${files.length}: ${head}${files.length > shown ? ', …' : ''}`;
}

/** `pass`, `pass after 2 attempts`, `fail: reason`. */
export function outcomeText(record: IterationRecord): string {
  const attempts = record.attempts > 1 ? ` after ${record.attempts} attempts` : '';
  const reason = record.outcome === 'question' && record.question !== undefined ? `: ${record.question}` : record.outcome === 'pass' || !record.reason ? '' : `: ${record.reason}`;
  return `${OUTCOME_LABEL[record.outcome] ?? record.outcome}${attempts}${reason}`;
}

/** The session's facts, in the order both reports show them. */
export function reportFacts(summary: RunSummary): Array<[string, string]> {
  return [
    ['session', summary.sessionId],
    ['source', summary.source],
    ['agent', summary.agent],
    ['status', `${summary.status}: ${summary.message}`],
    ['exit code', String(summary.exitCode)],
    ['started', formatTime(summary.startedAt)],
    ['ended', formatTime(summary.endedAt)],
    ['duration', formatDuration(summary.durationMs)],
    ...(summary.converge ? [['converge', convergeText(summary.converge)] as [string, string]] : []),
    ...(summary.hooks?.length ? [['hooks', hooksText(summary.hooks)] as [string, string]] : []),
    ...(summary.pr ? pullRequestFacts(summary.pr) : []),
    ...(summary.remote ? [['remote', `${landedText(summary.remote, summary.records.flatMap((record) => record.tasksDone))}; this host: ${summary.remote.host}`] as [string, string]] : []),
  ];
}

/** --fallback: one row per agent (agent, iterations, cost, tokens in, tokens out, limit at the end). */
export function agentRows(summary: RunSummary): string[][] {
  return (summary.agents ?? []).map((agent) => [agent.agent, String(agent.iterations), formatCost(agent.costUsd), formatCount(agent.inputTokens), formatCount(agent.outputTokens), agent.limitedUntil === undefined ? '—' : agent.limitedUntil === null ? 'for the rest of the run' : `until ${formatTime(agent.limitedUntil)}`]);
}

export const AGENT_COLUMNS = ['agent', 'iterations', 'cost', 'tokens in', 'tokens out', 'limited at the end'];

/** `2 of 3 passes: pass 1 appended T042, T043; pass 2 found nothing (converged)`. */
export function convergeText(converge: NonNullable<RunSummary['converge']>): string {
  const each = converge.appended.map((tasks, index) => `pass ${converge.resumed + index + 1} ${tasks.length > 0 ? `appended ${tasks.join(', ')}` : index === converge.appended.length - 1 && converge.converged ? 'found nothing (converged)' : 'appended nothing'}`);
  return `${converge.passes} of ${converge.maxPasses} passes${each.length > 0 ? `: ${each.join('; ')}` : ''}; ${converge.converged ? 'converged' : 'not proven converged'}`;
}

/** The project's hooks this run: `before_implement speckit.git.validate (git) passed (iteration 1); …`. */
export function hooksText(hooks: NonNullable<RunSummary['hooks']>): string {
  return hooks.map((hook) => `${hook.name} ${hook.outcome === 'pass' ? 'passed' : 'failed'} (iteration ${hook.iteration})`).join('; ');
}

/** --pr in the report: the pull request, and what is not pushed when something is not. */
function pullRequestFacts(pr: NonNullable<RunSummary['pr']>): Array<[string, string]> {
  return [['pull request', pullRequestText(pr)], ...(pr.pushed || !pr.notPushed ? [] : [['not pushed', `${pr.notPushed} (${pr.target})`] as [string, string]])];
}

/** One row of a report's Questions section: a question of this run, or one of an earlier run still open. */
export interface QuestionRow {
  taskId: string;
  taskTitle: string;
  iteration: number;
  question: string;
  /** `waiting for an answer: ralph answer T002 "…"`, `answered: 410`, `answered; the task is done`. */
  state: string;
}

/** The Questions section: this run's questions in order, then those of earlier runs still open. */
export function questionRows(summary: RunSummary): QuestionRow[] {
  const open = summary.questions ?? [];
  const stateOf = (taskId: string, iteration: number): string => {
    const found = open.find((item) => item.taskId === taskId && item.iteration === iteration);
    if (!found) return 'answered; the task was worked on since';
    return found.answer === undefined ? `waiting for an answer: ${answerCommand(taskId)}` : `answered: ${found.answer}`;
  };
  const asked = summary.records.filter((record) => record.outcome === 'question' && record.question !== undefined);
  const rows = asked.map((record) => ({ taskId: record.taskId, taskTitle: record.taskTitle, iteration: record.iteration, question: record.question!, state: stateOf(record.taskId, record.iteration) }));
  for (const item of open) {
    if (!asked.some((record) => record.taskId === item.taskId && record.iteration === item.iteration)) {
      rows.push({ taskId: item.taskId, taskTitle: item.taskTitle, iteration: item.iteration, question: item.question, state: `${stateOf(item.taskId, item.iteration)} (asked by an earlier run)` });
    }
  }
  return rows;
}
