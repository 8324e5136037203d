// Writes what iterations did: entries in progress.txt (under one session header per run) and the
// failure counts in ralph-tasks.json that decide when a task is skipped.
import { existsSync } from 'node:fs';
import { formatDuration } from '../../duration.ts';
import { reviewLine } from '../../progress/review-text.ts';
import { appendText, writeFileAtomic } from '../../repo/fs-atomic.ts';
import { compactAfterAppend } from '../../progress/compact.ts';
import type { ConvergeVerdict, HookPassInfo, IterationInfo, IterationResult, SourceContext } from '../types.ts';
import { extractLearnings } from './learnings.ts';
import { readText } from './paths.ts';
import {
  ENTRY_HEADING,
  iterationEntry,
  progressHeader,
  recordIteration,
  sessionHeader,
  SKIP_AFTER,
  syncTracking,
  type Tracking,
} from './progress.ts';
import type { FeatureState } from './state.ts';

export interface ProgressWriter {
  /** Notes an iteration a killed run left unfinished in progress.txt, once, under that run's session. */
  recordInterrupted(current: NonNullable<Tracking['current']>, data: Tracking, why?: string): void;
  /** Records a finished iteration in progress.txt and ralph-tasks.json. */
  settle(result: IterationResult, info: IterationInfo): void;
  /** Records a converge pass: its entry in progress.txt, and the pass count in ralph-tasks.json. */
  recordConverge(pass: { number: number; of: number }, verdict: ConvergeVerdict, info: IterationInfo): void;
  /** Records a hook pass in progress.txt. */
  recordHook(hook: HookPassInfo, ok: boolean, reason: string, info: IterationInfo): void;
}

/** The lead that puts one blank line between what `existing` ends with and the next block. */
function leadFor(existing: string): string {
  return existing === '' || existing.endsWith('\n\n') ? '' : existing.endsWith('\n') ? '\n' : '\n\n';
}

/** The progress writer of one source; the session header is written before its first entry. */
export function createProgressWriter(ctx: SourceContext, state: FeatureState): ProgressWriter {
  let sessionWritten = false;

  const ensureHeader = (): void => {
    const p = state.paths();
    if (!existsSync(p.progress)) writeFileAtomic(p.progress, progressHeader({ feature: p.feature.name, tasksPath: p.rel.tasks, started: state.stamp() }));
  };

  /** Appends blocks (each ending in a newline) with one blank line between them and before them. */
  const appendProgress = (entry: string, info: IterationInfo): void => {
    const p = state.paths();
    ensureHeader();
    const blocks = [entry];
    if (!sessionWritten) blocks.unshift(sessionHeader({ sessionId: info.sessionId, started: state.stamp(), firstIteration: info.iteration }));
    const existing = readText(p.progress) ?? '';
    appendText(p.progress, leadFor(existing) + blocks.join('\n'));
    sessionWritten = true;
    compactAfterAppend(p.progress, ENTRY_HEADING, ctx.config.extra, ctx.warn);
  };

  return {
    recordInterrupted(current, data, why = 'crash, kill or power loss') {
      const p = state.paths();
      ensureHeader();
      const existing = readText(p.progress) ?? '';
      // Iterations of several workers end out of order: look for this one's own entry.
      if (new RegExp(`^## Iteration ${current.iteration} - `, 'm').test(existing)) return;
      const entry = iterationEntry({
        iteration: current.iteration,
        timestamp: state.stamp(),
        task: { id: current.taskId, title: data.tasks.find((task) => task.id === current.taskId)?.title ?? '' },
        status: 'interrupted',
        reason: `the run stopped before this iteration finished (started ${current.startedAt}; ${why}); tasks.md decides what is done`,
        tasksDone: [],
        filesChanged: [],
      });
      appendText(p.progress, leadFor(existing) + entry);
    },

    recordHook(hook, ok, reason, info) {
      const entry = iterationEntry({
        iteration: info.iteration,
        timestamp: state.stamp(),
        task: { id: hook.key, title: hook.title },
        status: ok ? 'completed' : 'failed',
        ...(ok ? {} : { reason }),
        tasksDone: [],
        filesChanged: [],
        note: ok ? `the project's ${hook.event} hook ran${hook.description ? `: ${hook.description}` : ''}` : `the project's ${hook.event} hook failed; the next run tries it again`,
      });
      appendProgress(entry, info);
    },

    recordConverge(pass, verdict, info) {
      const found = verdict.kind === 'appended';
      const entry = iterationEntry({
        iteration: info.iteration,
        timestamp: state.stamp(),
        task: { id: `converge-${pass.number}`, title: `converge pass ${pass.number} of ${pass.of}` },
        status: found || verdict.kind === 'converged' ? 'completed' : 'failed',
        ...(verdict.kind === 'silent' || verdict.kind === 'broke' ? { reason: verdict.reason } : {}),
        tasksDone: [],
        filesChanged: found ? [state.paths().rel.tasks] : [],
        note: found ? `found work the spec asks for: appended ${verdict.tasks.join(', ')} to tasks.md` : verdict.kind === 'converged' ? 'converged: nothing of the spec is left to build' : 'nothing found, and no converged answer',
      });
      appendProgress(entry, info);
      const data = state.loadTracking(state.readTasks());
      state.saveTracking({ ...data, lastIteration: Math.max(data.lastIteration, info.iteration), converge: { passes: pass.number, open: true } });
    },

    settle(result, info) {
      const parsed = state.readTasks();
      const recorded = recordIteration(state.loadTracking(parsed), { iteration: result.iteration, taskId: result.task.id, kind: result.kind, tasksDone: result.tasksDone }, { interleaved: info.worker !== undefined });
      const data = syncTracking(recorded.tracking, parsed, state.iso());
      const remaining = data.summary.open;
      const failures = recorded.consecutiveFailures;
      let reason: string | undefined;
      if (recorded.newlySkipped) {
        reason = `${result.reason}; ${result.task.id} failed ${failures} iterations in a row, so it is skipped and later iterations leave it alone`;
        ctx.warn(`${result.task.id} failed ${failures} iterations in a row: skipped; fix it by hand and check it off, or run ralph again to retry it`);
      } else if (result.kind !== 'pass' && result.kind !== 'question') {
        reason = `${result.reason} (${failures} of ${SKIP_AFTER} failed iterations in a row before the task is skipped)`;
      }
      const note =
        result.claimedComplete && remaining > 0 ? `the agent claimed completion, but ${remaining} task${remaining === 1 ? '' : 's'} remain open in tasks.md: premature promise, not accepted` : undefined;
      const entry = iterationEntry({
        iteration: result.iteration,
        timestamp: state.stamp(),
        task: { id: result.task.id, title: result.task.title },
        status: result.kind === 'pass' ? 'completed' : result.kind === 'question' ? 'question' : recorded.newlySkipped ? 'skipped' : 'failed',
        reason,
        tasksDone: result.tasksDone,
        filesChanged: result.filesChanged,
        learnings: extractLearnings(result.agentText),
        commit: result.commit,
        duration: formatDuration(result.durationMs),
        note,
        review: result.review ? reviewLine(result.review) : undefined,
        question: result.kind === 'question' ? result.question : undefined,
      });
      appendProgress(entry, info);
      state.saveTracking(data);
    },
  };
}
