// Records an iteration's verdict: the item's new status in prd.json, history/iteration-N.json and an
// entry in progress.txt. Also the record of an iteration a killed run left unfinished.
import { existsSync } from 'node:fs';
import { failureLine, formatGateResults, type GateResult } from '../../gates.ts';
import { reviewLine } from '../../progress/review-text.ts';
import type { IterationInfo, IterationResult } from '../types.ts';
import { historyFile, writeHistoryRecord, type HistoryRecord, type QualityMetrics } from './history.ts';
import type { ProgressEntry } from './progress.ts';
import { parseAgentReport, type AgentReport } from './report-parser.ts';
import { updateItem, writePrd, type PrdDocument, type PrdItem } from './schema.ts';
import { MAX_ATTEMPTS } from './selection.ts';

/** What recording needs from the source: where, which agent, the clock, and how progress.txt is appended. */
export interface Recorder {
  root: string;
  agent: string;
  now: () => number;
  warn: (message: string) => void;
  /** Appends an entry to progress.txt (and compacts it when it grows too large). */
  appendProgress: (entry: ProgressEntry, doc: PrdDocument) => void;
}

/** The error text a failed iteration leaves on its task: each failed gate with its telling line, else the reason. */
export function failureText(reason: string, gates: readonly GateResult[]): string {
  const failed = gates.filter((gate) => !gate.passed);
  if (failed.length === 0) return reason;
  return failed
    .map((gate) => {
      const line = failureLine(gate.outputTail);
      return `${gate.name} (\`${gate.command}\`) failed with ${gate.timedOut ? 'a timeout' : `exit ${gate.exitCode}`}${line ? `: ${line}` : ''}`;
    })
    .join('; ');
}

function qualityMetrics(gates: readonly GateResult[], report: AgentReport): QualityMetrics {
  const passed = gates.filter((gate) => gate.passed).length;
  return {
    gates: gates.map((gate) => ({
      name: gate.name,
      command: gate.command,
      passed: gate.passed,
      exitCode: gate.exitCode,
      durationMs: gate.durationMs,
      ...(gate.timedOut ? { timedOut: true } : {}),
      ...(gate.passed ? {} : { outputTail: gate.outputTail }),
    })),
    gatesPassed: passed,
    gatesFailed: gates.length - passed,
    allPassed: passed === gates.length,
    reported: report.quality,
  };
}

/**
 * Records a cut-short iteration once, so history and progress.txt agree and its number is never reused;
 * nothing when its history record already exists.
 */
export function recordInterrupted(recorder: Recorder, doc: PrdDocument, item: PrdItem, iteration: number, why = 'Ctrl+C, crash or kill'): void {
  const { root, now } = recorder;
  const reason = `the run stopped before this iteration finished (${why}); the task is back to pending`;
  if (existsSync(historyFile(root, iteration))) return;
  const started = item.startedAt ? Date.parse(item.startedAt) : Number.NaN;
  const record: HistoryRecord = {
    iterationNumber: iteration,
    timestamp: new Date(now()).toISOString(),
    taskId: item.id,
    taskTitle: item.title,
    tasksAttempted: [item.id],
    tasksCompleted: [],
    failedCount: 0,
    qualityMetrics: { gates: [], gatesPassed: 0, gatesFailed: 0, allPassed: false, reported: [] },
    durationMs: Number.isNaN(started) ? 0 : Math.max(0, now() - started),
    agent: recorder.agent,
    commit: null,
    learnings: [],
    completionStatus: 'interrupted',
    reason,
  };
  writeHistoryRecord(root, record);
  recorder.appendProgress({ now: now(), iteration, taskId: item.id, taskTitle: item.title, status: 'interrupted', reason }, doc);
}

/** Records a finished iteration in prd.json, its history record and progress.txt. */
export function settleIteration(recorder: Recorder, doc: PrdDocument, result: IterationResult, info: IterationInfo): void {
  const item = doc.items.find((candidate) => candidate.id === result.task.id);
  const report = parseAgentReport(result.agentText);
  const gates = result.gates ?? [];
  const now = recorder.now();
  const error = result.kind === 'fail' ? failureText(result.reason, gates) : undefined;

  if (item) {
    if (result.kind === 'pass') updateItem(doc, item, { status: 'completed', completedAt: new Date(now).toISOString(), lastError: undefined });
    else if (result.kind === 'fail') updateItem(doc, item, { status: 'blocked', attempts: item.attempts + 1, lastError: error });
    // A question is no failed attempt: the task stays pending, set aside by the question until answered.
    else updateItem(doc, item, { status: 'pending' });
    writePrd(doc);
  } else {
    recorder.warn(`${doc.file}: task ${result.task.id} disappeared during iteration ${info.iteration}; its status was not recorded`);
  }

  const failureNote = error
    ? `Iteration ${info.iteration} failed on ${result.task.id}: ${error}. ${item && item.attempts + 1 >= MAX_ATTEMPTS ? 'The task is now blocked for good until a person looks at it.' : 'Fix this first when the task is retried.'}`
    : undefined;
  const learnings = [...report.learnings, ...(failureNote ? [failureNote] : [])];
  const completionStatus = result.kind === 'pass' ? 'completed' : result.kind === 'fail' ? 'failed' : result.kind === 'question' ? 'question' : 'partial';
  const question = result.kind === 'question' ? result.question : undefined;
  writeHistoryRecord(recorder.root, {
    iterationNumber: info.iteration,
    timestamp: new Date(now).toISOString(),
    sessionId: info.sessionId,
    taskId: result.task.id,
    taskTitle: result.task.title,
    tasksAttempted: [result.task.id],
    tasksCompleted: result.kind === 'pass' ? [result.task.id] : [],
    failedCount: result.kind === 'fail' ? 1 : 0,
    qualityMetrics: qualityMetrics(gates, report),
    durationMs: result.durationMs,
    agent: recorder.agent,
    commit: result.commit ?? null,
    learnings,
    completionStatus,
    reason: result.reason,
    ...(report.summary ? { summary: report.summary } : {}),
    ...(report.commitMessages.length > 0 ? { commitMessages: report.commitMessages } : {}),
    ...(report.contextLoss.length > 0 ? { contextLoss: report.contextLoss } : {}),
    ...(result.review ? { review: result.review } : {}),
    ...(question ? { question } : {}),
  });
  recorder.appendProgress(
    {
      now,
      iteration: info.iteration,
      taskId: result.task.id,
      taskTitle: result.task.title,
      status: result.kind === 'fail' ? 'failed (blocked)' : question ? 'question: waiting for an answer' : completionStatus,
      ...(question ? { question } : { reason: result.reason }),
      ...(gates.length > 0 ? { gates: formatGateResults(gates) } : {}),
      ...(result.review ? { review: reviewLine(result.review) } : {}),
      ...(report.summary ? { summary: report.summary } : {}),
      changes: report.changes,
      ...(result.commit ? { commit: result.commit } : {}),
      learnings,
    },
    doc,
  );
}
