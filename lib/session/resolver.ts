// The agent side of resolving a merge conflict (lib/landing/resolve.ts leaves the markers in a worker's
// worktree): one short run of the session's agent, the task, its diff and the conflicting hunks in the prompt
// (templates/resolve-prompt.md). What it did is judged by the landing: no marker left, then the gates.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../errors.ts';
import type { Markers, Resolution, Resolver } from '../landing/resolve.ts';
import type { Task } from '../sources/types.ts';
import { runAgent, type AgentRunContext } from '../iteration/agent-run.ts';
import { packageFile } from '../package-files.ts';

export const RESOLVE_TEMPLATE = packageFile('templates/resolve-prompt.md');

export type { Resolution, Resolver };

/** The resolve prompt for `task`, from the template. Pure. */
export function resolvePrompt(template: string, task: Task, markers: Markers): string {
  const values: Record<string, string> = {
    TASK_ID: task.id,
    TASK_TITLE: task.title,
    CONFLICT_FILES: markers.files.join(', '),
    TASK_DIFF: markers.diff.trimEnd(),
    CONFLICT_HUNKS: markers.hunks.trimEnd(),
  };
  return template.replace(/\{([A-Z_]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

/** A resolver that runs the session's agent (with its fallbacks and limits) as the iteration's own did. */
export function agentResolver(base: Omit<AgentRunContext, 'cwd' | 'logBase' | 'env'>, logDir: string): Resolver {
  let template: string | undefined;
  return async ({ task, iteration, cwd, env, markers }) => {
    try {
      template ??= readFileSync(RESOLVE_TEMPLATE, 'utf8');
    } catch {
      throw new RalphError(`prompt template ${RESOLVE_TEMPLATE} cannot be read`, { hint: 'restore templates/resolve-prompt.md' });
    }
    const started = base.deps.now();
    const run = await runAgent({ ...base, cwd, env, logBase: path.join(logDir, `iteration-${iteration}-resolve`) }, iteration, resolvePrompt(template, task, markers));
    const ok = run.classification.kind === 'ok';
    return {
      ok,
      ...(ok ? {} : { reason: 'reason' in run.classification ? run.classification.reason : 'the agent failed' }),
      costUsd: run.costUsd,
      inputTokens: run.inputTokens,
      outputTokens: run.outputTokens,
      durationMs: base.deps.now() - started,
    };
  };
}
