// One pass of a project's own hook (Spec Kit's before_implement / after_implement extension hooks): a fresh
// agent runs the hook's command in the repository, nothing beside it. It passes when the agent run ends
// well; a failure ends the run, saying which hook failed and why, and the next run tries it again.
import type { IterationRecord } from '../events.ts';
import { describeLeftOut } from '../repo/commit-set.ts';
import type { HookPassInfo, IterationInfo, Task } from '../sources/types.ts';
import { runAgent } from './agent-run.ts';
import { passRunContext } from './context.ts';
import { agentFields, type IterationContext, type IterationOutput } from './index.ts';
import { compareWorkStates, readWorkState } from './work-state.ts';
import { matchesAny } from '../repo/paths.ts';
import type { Committed } from './workspace.ts';

/** The pseudo-task a hook pass runs as: how every line, record and report names it. */
export function hookTask(hook: HookPassInfo): Task {
  return { id: hook.key, title: hook.title, status: 'open' };
}

/** Runs the hook `hook` in the repository and records it in the source. */
/** `commitWork`: commits what a passing hook's agent left uncommitted (ralph or the agent commits), so the tree ends clean. */
export async function runHookPass(ctx: IterationContext, hook: HookPassInfo, info: IterationInfo, commitWork?: (task: Task, iteration: number, changed?: readonly string[]) => Promise<Committed>): Promise<IterationOutput> {
  const { source, deps, bus, workspace } = ctx;
  const hooks = source.hooks!;
  const startedAt = deps.now();
  const task = hookTask(hook);
  bus.emit({ type: 'iteration_start', iteration: info.iteration, ofRun: info.run?.count ?? info.iteration, maxIterations: info.run?.max ?? info.maxIterations, task });
  const prompt = hooks.prompt(hook, ctx.agent.name);
  const workBefore = await readWorkState(workspace.git);
  const agentRun = await runAgent(
    passRunContext(ctx, info),
    info.iteration,
    prompt,
  );
  const treeAfter = await workspace.git.state();
  const moved = compareWorkStates(workBefore, await readWorkState(workspace.git, treeAfter), source.bookkeepingFiles());
  const ok = agentRun.classification.kind === 'ok';
  const why = 'reason' in agentRun.classification ? agentRun.classification.reason : 'the agent failed';
  const reason = ok ? `${hook.event} hook ${prompt} ran` : `${hook.event} hook ${prompt} failed: ${why}`;
  hooks.record(hook, ok, reason, info);
  // The hook's agent changed files and left them: committed like a passing iteration's (the commit-set rules hold).
  const made = ok && commitWork && moved.files.length > 0 ? await commitWork(task, info.iteration, treeAfter.changed) : undefined;
  const record: IterationRecord = {
    iteration: info.iteration,
    taskId: task.id,
    taskTitle: task.title,
    outcome: ok ? 'pass' : 'fail',
    reason,
    attempts: agentRun.attempts,
    startedAt: new Date(startedAt).toISOString(),
    durationMs: deps.now() - startedAt,
    tasksDone: [],
    filesChanged: moved.files,
    claimedComplete: false,
    costUsd: agentRun.costUsd,
    inputTokens: agentRun.inputTokens,
    outputTokens: agentRun.outputTokens,
    // A hook that ran is progress for the no-progress breaker: it is work the project asked for.
    changed: ok,
    ...(made?.commit ? { commit: made.commit, committedForAgent: moved.files.filter((file) => matchesAny(file, made.paths ?? [])) } : {}),
    ...(made && made.leftOut.length > 0 ? { leftOut: made.leftOut.map(describeLeftOut) } : {}),
    ...agentFields(ctx.roster, agentRun),
    hook: { event: hook.event, command: hook.command, ...(hook.extension ? { extension: hook.extension } : {}) },
  };
  const after = await source.snapshot();
  const failure = ok ? undefined : `the project's ${hook.name} hook failed (iteration ${info.iteration}): ${why}; nothing ${hook.when === 'before' ? 'was worked on' : 'else runs'}, and the next run tries the hook again`;
  return { record, after, run: agentRun, head: made?.commit ?? treeAfter.head, vanished: false, ...(failure ? { failure } : {}) };
}
