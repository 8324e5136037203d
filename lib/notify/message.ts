// What a notification says: one pure function from a run event to a short notice (or none).
import { count } from '../progress/tasks-left.ts';
import dayjs from 'dayjs';
import { formatDuration } from '../duration.ts';
import type { RunEvent } from '../events.ts';
import { pullRequestText } from '../pr/lines.ts';
import { answerCommand } from '../questions/text.ts';

export const NOTIFY_EVENTS = ['start', 'end', 'failure', 'usage-limit', 'stop', 'pause', 'question'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

export type NoticeLevel = 'info' | 'success' | 'warning' | 'error';

export interface Notice {
  event: NotifyEvent;
  level: NoticeLevel;
  title: string;
  text: string;
  at: string;
  /** Facts a program may read (generic format only). */
  fields: Record<string, string | number | boolean | null>;
}

/** The run a notice is about: fixed for a session. */
export interface NoticeContext {
  repo: string;
  host: string;
  session?: string;
}

const money = (usd: number): string => `$${usd.toFixed(2)}`;

/** The notice for one run event; undefined for events nobody is told about. */
export function noticeFor(event: RunEvent, at: number, context: NoticeContext): Notice | undefined {
  const make = (kind: NotifyEvent, level: NoticeLevel, title: string, text: string, fields: Notice['fields']): Notice => ({
    event: kind,
    level,
    title: `${title} (${context.repo})`,
    text,
    at: new Date(at).toISOString(),
    fields: { repo: context.repo, host: context.host, session: context.session ?? null, ...fields },
  });
  switch (event.type) {
    case 'session_start':
      return make('start', 'info', 'ralph started', `session ${event.sessionId}: ${event.source} mode, ${event.target}, agent ${event.agent}, up to ${count(event.maxIterations, 'iteration')}${event.branch ? `, branch ${event.branch}` : ''}, on ${context.host}`, {
        mode: event.source,
        target: event.target,
        agent: event.agent,
        branch: event.branch ?? null,
        maxIterations: event.maxIterations,
      });
    case 'session_end': {
      const s = event.summary;
      const level: NoticeLevel = s.exitCode === 0 ? 'success' : s.status === 'interrupted' || s.exitCode === 2 ? 'warning' : 'error';
      const cost = s.costUsd > 0 ? `, ${money(s.costUsd)}` : '';
      const pr = s.pr ? `; pull request: ${pullRequestText(s.pr)}` : '';
      return make('end', level, `ralph ${s.status.replace('_', ' ')}`, `${s.message}: ${count(s.iterations, 'iteration')}, ${count(s.tasksCompleted, 'task')} done, ${s.tasksRemaining} remaining, ${formatDuration(s.durationMs)}${cost}; exit ${s.exitCode}${pr}`, {
        status: s.status,
        exitCode: s.exitCode,
        iterations: s.iterations,
        tasksCompleted: s.tasksCompleted,
        tasksRemaining: s.tasksRemaining,
        durationMs: s.durationMs,
        costUsd: s.costUsd,
        ...(s.pr ? { pullRequest: s.pr.url ?? null } : {}),
      });
    }
    case 'iteration_end': {
      const r = event.record;
      if (r.outcome === 'question') {
        return make('question', 'warning', `${r.taskId} waits for your answer`, `iteration ${r.iteration}, ${r.taskId} ${r.taskTitle}: ${r.question ?? ''}\nAnswer with: ${answerCommand(r.taskId)}; the run goes on with other tasks.`, {
          iteration: r.iteration,
          taskId: r.taskId,
          taskTitle: r.taskTitle,
          question: r.question ?? null,
        });
      }
      if (r.outcome !== 'fail') return undefined;
      return make('failure', 'error', `iteration ${r.iteration} failed`, `${r.taskId} ${r.taskTitle}: ${r.reason} (${r.attempts} attempt${r.attempts === 1 ? '' : 's'}, ${formatDuration(r.durationMs)})`, {
        iteration: r.iteration,
        taskId: r.taskId,
        taskTitle: r.taskTitle,
        reason: r.reason,
        attempts: r.attempts,
      });
    }
    case 'agent_switch':
      return make('usage-limit', 'warning', `${event.from} limited`, `${event.from} limited ${Number.isFinite(event.until) ? `until ${dayjs(event.until).format('YYYY-MM-DD HH:mm')}` : 'for the rest of the run'}, continuing with ${event.to} in iteration ${event.iteration}: ${event.reason}`, {
        iteration: event.iteration,
        from: event.from,
        to: event.to,
        resetAt: Number.isFinite(event.until) ? new Date(event.until).toISOString() : null,
        reason: event.reason,
      });
    case 'usage_wait':
      return make('usage-limit', 'warning', 'usage limit', `waiting until ${dayjs(event.until).format('YYYY-MM-DD HH:mm:ss Z')} (${formatDuration(Math.max(0, event.until - at))}) in iteration ${event.iteration}: ${event.reason}`, {
        iteration: event.iteration,
        resetAt: new Date(event.until).toISOString(),
        reason: event.reason,
      });
    case 'control':
      if (event.request === 'stop') return make('stop', 'warning', 'stop requested', `by ${event.by}: the run ends after its current iteration`, { by: event.by });
      if (event.request === 'pause') return make('pause', 'warning', 'paused', `by ${event.by}: the current iteration finishes, then no new one starts until 'ralph unpause'`, { by: event.by, paused: true });
      return undefined;
    case 'resumed':
      return make('pause', 'info', 'resumed', `after a pause of ${formatDuration(event.pausedMs)}`, { paused: false, pausedMs: event.pausedMs });
    default:
      return undefined;
  }
}
