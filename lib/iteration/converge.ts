// One converge pass: a fresh agent compares the spec with the code once every task is done, and appends
// what is unbuilt as new tasks, or answers that nothing is left. The source judges the pass from its files
// (lib/sources/speckit/converge.ts); this module runs it as an iteration and records it like one.
import { finalAnswer } from '../agents/transcript.ts';
import type { IterationRecord } from '../events.ts';
import type { ConvergeVerdict, IterationInfo, Task } from '../sources/types.ts';
import { runAgent } from './agent-run.ts';
import { passRunContext } from './context.ts';
import { agentFields, type IterationContext, type IterationOutput } from './index.ts';
import type { Committed } from './workspace.ts';
import { compareWorkStates, readWorkState } from './work-state.ts';

export interface ConvergePass {
  pass: number;
  maxPasses: number;
  /** Commits the source's state (the appended tasks) when ralph commits (`--commit`, PRD-style policy). */
  commitState?: (message: string, iteration: number) => Promise<Committed>;
}

/** The pseudo-task a pass runs as: how every line, record and report names it. */
export function convergeTask(pass: number, maxPasses: number): Task {
  return { id: `converge-${pass}`, title: `converge pass ${pass} of ${maxPasses}`, status: 'open' };
}

/** What a pass's record says it did. */
export function describeVerdict(verdict: ConvergeVerdict): string {
  switch (verdict.kind) {
    case 'appended':
      return `found unbuilt work: appended ${verdict.tasks.join(', ')}`;
    case 'converged':
      return 'converged: nothing of the spec is left to build';
    case 'silent':
    case 'broke':
      return verdict.reason;
  }
}

/** Runs pass `pass` in the repository (nothing else runs beside it) and judges it. */
export async function runConvergePass(ctx: IterationContext, run: ConvergePass, info: IterationInfo): Promise<IterationOutput & { verdict: ConvergeVerdict }> {
  const { source, deps, bus, workspace } = ctx;
  const converge = source.converge!;
  const startedAt = deps.now();
  const task = convergeTask(run.pass, run.maxPasses);
  bus.emit({ type: 'iteration_start', iteration: info.iteration, ofRun: info.run?.count ?? info.iteration, maxIterations: info.run?.max ?? info.maxIterations, task });
  const { text: prompt } = converge.prompt(run.pass, run.maxPasses, info, ctx.agent.name);
  const baseline = converge.baseline();
  const workBefore = await readWorkState(workspace.git);
  const agentRun = await runAgent(
    passRunContext(ctx, info),
    info.iteration,
    prompt,
  );
  const treeAfter = await workspace.git.state();
  const workAfter = await readWorkState(workspace.git, treeAfter);
  // tasks.md is judged by the source; ralph's own state files are ralph's; anything else is code touched.
  const moved = compareWorkStates(workBefore, workAfter, source.bookkeepingFiles());
  const otherChanges = [...moved.files, ...(moved.headMoved ? [`HEAD (a commit, ${treeAfter.head?.slice(0, 12) ?? 'none'})`] : [])];
  const verdict: ConvergeVerdict = agentRun.classification.kind === 'ok' ? converge.judge(baseline, otherChanges, finalAnswer(agentRun.transcript)) : { kind: 'silent', reason: 'reason' in agentRun.classification ? agentRun.classification.reason : 'the agent failed' };
  converge.record(run.pass, run.maxPasses, verdict, info);
  const found = verdict.kind === 'appended';
  const committed = found && run.commitState ? await run.commitState(`ralph: converge pass ${run.pass} found ${verdict.tasks.join(', ')}`, info.iteration) : undefined;
  const after = await source.snapshot();
  const record: IterationRecord = {
    iteration: info.iteration,
    taskId: task.id,
    taskTitle: task.title,
    outcome: found || verdict.kind === 'converged' ? 'pass' : 'fail',
    reason: describeVerdict(verdict),
    attempts: agentRun.attempts,
    startedAt: new Date(startedAt).toISOString(),
    durationMs: deps.now() - startedAt,
    tasksDone: [],
    filesChanged: found ? source.workers.stateFiles().slice(0, 1) : otherChanges,
    claimedComplete: false,
    costUsd: agentRun.costUsd,
    inputTokens: agentRun.inputTokens,
    outputTokens: agentRun.outputTokens,
    ...(committed?.commit ? { commit: committed.commit } : {}),
    // Found work is progress for the no-progress breaker; a pass that found nothing is not.
    changed: found,
    ...agentFields(ctx.roster, agentRun),
    converge: { pass: run.pass, verdict: verdict.kind, ...(found ? { appended: verdict.tasks } : {}) },
  };
  return { record, after, run: agentRun, head: committed?.commit ?? treeAfter.head, vanished: false, verdict, ...(verdict.kind === 'broke' ? { failure: `converge pass ${run.pass} broke its contract: ${verdict.reason}; its changes are left in place for you to look at` } : {}) };
}
