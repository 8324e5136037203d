// One iteration: one task, one fresh agent process, then the source, the gates and ralph's verdict.
// The session decides which task and when; this module only runs it and records what happened.
import path from 'node:path';
import { finalAnswer } from '../agents/transcript.ts';
import { describeLeftOut, withUserWorkNote } from '../repo/commit-set.ts';
import { claimsCompletion } from '../completion.ts';
import { decideOutcome, tasksFinished } from './outcome.ts';
import type { IterationRecord, ReviewRecord } from '../events.ts';
import { parseQuestion } from '../questions/parse.ts';
import { noteQuestions } from '../questions/index.ts';
import type { IterationInfo, IterationResult, Snapshot, Task } from '../sources/types.ts';
import { runAgent, type AgentRun } from './agent-run.ts';
import type { AgentRoster } from './agent-roster.ts';
import type { Workspace } from './workspace.ts';
import type { IterationContext, IterationOutput } from './context.ts';
import { iterationEnded, reached } from '../recovery/crash-points.ts';
import { compareWorkStates, iterationFiles, readWorkState, stateAfterLanding, type WorkState } from './work-state.ts';

export type { IterationContext, IterationOutput };

/** The work tree each workspace's last iteration left behind (see the end of runIteration). */
const leftBehind = new WeakMap<Workspace, WorkState>();

function taskCount(snapshot: Snapshot): number {
  return snapshot.remaining.length + snapshot.done.length + (snapshot.skipped?.length ?? 0);
}

/** Runs `task` once: claim, prompt, agent (with retries and waits), source, gates, verdict, then lands it. */
export async function runIteration(ctx: IterationContext, task: Task, info: IterationInfo, mainBefore: Snapshot): Promise<IterationOutput> {
  const { source, deps, bus, workspace } = ctx;
  const startedAt = deps.now();
  // A claim that fails (another worker took the bead) throws before the iteration has started.
  if (!ctx.claimedOnRemote) await source.claim?.(task, info);
  // From here the run's journal knows the iteration: a crash before its end is settled by the next start.
  reached('task_claimed', { iteration: info.iteration, task: { id: task.id, title: task.title }, ...(workspace.worker === undefined ? {} : { worker: workspace.worker }), ...(info.head ? { head: info.head } : {}) });
  bus.emit({ type: 'iteration_start', iteration: info.iteration, ofRun: info.run?.count ?? info.iteration, maxIterations: info.run?.max ?? info.maxIterations, task, ...(workspace.worker === undefined ? {} : { worker: workspace.worker }) });
  // The user's own uncommitted work is not the agent's to commit: said in every prompt ralph writes (a bare
  // slash command such as beads' /sp:next takes no text after it). A worker's worktree holds none of it.
  const written = await source.prompt(task, info);
  const prompt = workspace.worker === undefined && ctx.guard ? withUserWorkNote(written, ctx.guard.userPaths, source.workers.stateFiles()) : written;
  const before = workspace.worker === undefined ? mainBefore : await workspace.snapshot();
  // What the agent starts from, so what it changes can be told apart from what was changed already.
  const carried = leftBehind.get(workspace);
  leftBehind.delete(workspace);
  const workBefore = carried && carried.head === info.head ? carried : await readWorkState(workspace.git);

  const run = await runAgent(
    {
      root: ctx.root,
      cwd: workspace.cwd,
      config: ctx.config,
      deps,
      agent: ctx.agent,
      profile: ctx.profile,
      bus,
      signal: ctx.signal,
      logBase: path.join(ctx.logDir, `iteration-${info.iteration}`),
      env: { ...source.agentEnv?.(info), ...workspace.env() },
      reclaim: async () => (ctx.claimedOnRemote ? undefined : source.claim?.(task, info)),
      usageWait: ctx.usageWait,
      wrap: ctx.wrap,
      redactor: ctx.redactor,
      roster: ctx.roster,
    },
    info.iteration,
    prompt,
  );
  reached('agent_ended', { iteration: info.iteration });
  const answer = finalAnswer(run.transcript);
  const agentText = run.transcript.assistantText || answer;
  const claimedComplete = run.classification.kind === 'ok' && claimsCompletion(answer);
  // A question counts only in the final answer of a run that ended well, as the completion token does.
  const question = run.classification.kind === 'ok' ? parseQuestion(answer) : undefined;

  // Without gates nothing changes the tree between the agent's end and this read: git works while the
  // source is asked (a failure is awaited, and thrown, below).
  const early = ctx.gates ? undefined : workspace.git.state();
  early?.catch(() => undefined);
  const after = await workspace.snapshot('progress');
  const vanished = taskCount(before) > 0 && taskCount(after) === 0;
  // A worker answers for its own task only: what else its copy shows done is not its to finish.
  const finished = tasksFinished(before, after).filter((id) => workspace.worker === undefined || id === task.id);
  // An agent that stopped to ask a person finished nothing for the gates to judge.
  const asked = question !== undefined && finished.length === 0;
  const gates = !vanished && !asked && run.classification.kind === 'ok' && ctx.gates ? await ctx.gates(info.iteration, workspace.cwd) : [];
  if (gates.length > 0) reached('gates_run', { iteration: info.iteration });
  if (gates.length > 0) bus.emit({ type: 'gates', iteration: info.iteration, results: gates.map((gate) => ({ name: gate.name, passed: gate.passed, durationMs: gate.durationMs })) });
  const generic = decideOutcome({ agent: run.classification, exhausted: run.exhausted, tasksDone: finished, gatesPassed: gates.length > 0 ? gates.every((gate) => gate.passed) : undefined, question });
  const own = generic.outcome === 'question' ? undefined : source.decideOutcome?.({ task, classification: run.classification, exhausted: run.exhausted, tasksDone: finished, gates, agentText });
  let decided = own ? { outcome: own.kind, reason: own.reason } : generic;
  // A source that settles the task itself (PRD) marks it done only in settle(): count it now.
  let tasksDone = own?.kind === 'pass' && !finished.includes(task.id) ? [...finished, task.id] : finished;
  const treeAfter = await (early ?? workspace.git.state());
  const changes = await workspace.git.changedSince(info.head, treeAfter);
  const workAfter = await readWorkState(workspace.git, treeAfter);
  // The agent's own commits are never rewritten by ralph: what they add that ralph would never commit (a
  // secret, a private key) is said at once; a worker's such commits are not merged.
  const unsafe = ctx.guard && info.head && changes.head && changes.head !== info.head ? await ctx.guard.inCommits(workspace.git, info.head, changes.head) : [];
  if (unsafe.length > 0) {
    bus.emit({ type: 'warning', message: `iteration ${info.iteration}: the agent's own commits add ${unsafe.map(describeLeftOut).join('; ')}${workspace.worker === undefined ? `: ralph never rewrites them; remove it before you push (git log -p ${(info.head ?? "").slice(0, 12)}..HEAD)` : ''}` });
  }
  const bookkeeping = source.bookkeepingFiles();
  const work = compareWorkStates(workBefore, workAfter, bookkeeping);
  // What this iteration changed: not the user's earlier changes, nor what an earlier iteration left.
  const filesChanged = iterationFiles(changes.committed, work.files, bookkeeping);
  // What the source records (progress entries, history, a reviewer's reasons) and the commit messages hold
  // no secret: gate output and the agents' text may quote one. (deep() returns the same objects when nothing changed.)
  const clean = <T>(value: T): T => (ctx.redactor ? ctx.redactor.deep(value) : value);
  let review: ReviewRecord | undefined;
  if (ctx.review && decided.outcome === 'pass' && !vanished) {
    const known = new Map([task, ...after.remaining, ...after.done].map((item) => [item.id, item]));
    const reviewed = tasksDone.length > 0 ? tasksDone.map((id) => known.get(id) ?? { ...task, id }) : [task];
    // The reviewer's modules load only in a run that has one.
    const { rejectionReason, reviewIteration } = await import('./review.ts');
    review = await reviewIteration(ctx, ctx.review, { iteration: info.iteration, tasks: reviewed, base: info.head, gates, evidence: decided.reason, workBefore: workAfter });
    if (review.verdict !== 'approve') {
      // Not approved is not done: the source takes the tasks back; the worker's changes and commits stay.
      for (const item of reviewed) await source.reopen(clean(item), clean(review.reasons ?? rejectionReason(review)), info);
      decided = { outcome: 'fail', reason: rejectionReason(review) };
      tasksDone = [];
    }
  }
  const record: IterationRecord = {
    iteration: info.iteration,
    taskId: task.id,
    taskTitle: task.title,
    outcome: decided.outcome,
    reason: decided.reason,
    attempts: run.attempts,
    startedAt: new Date(startedAt).toISOString(),
    durationMs: deps.now() - startedAt,
    tasksDone,
    filesChanged,
    claimedComplete,
    costUsd: run.costUsd + (review?.costUsd ?? 0),
    inputTokens: run.inputTokens + (review?.inputTokens ?? 0),
    outputTokens: run.outputTokens + (review?.outputTokens ?? 0),
    commit: undefined,
    gates: gates.length > 0 ? gates.map((gate) => ({ name: gate.name, passed: gate.passed })) : undefined,
    ...(workspace.worker === undefined ? {} : { worker: workspace.worker }),
    changed: work.headMoved || work.files.length > 0,
    ...agentFields(ctx.roster, run),
    ...(review ? { review } : {}),
    ...(decided.outcome === 'question' ? { question } : {}),
  };
  if (vanished) {
    iterationEnded(info.iteration);
    return { record, after, run, head: changes.head, vanished };
  }

  const result: IterationResult = { iteration: info.iteration, task, kind: decided.outcome, reason: decided.reason, tasksDone, filesChanged, claimedComplete, agentText, durationMs: record.durationMs, gates, review, ...(record.question ? { question: record.question } : {}) };
  // A review may have changed the tree since it was read: then the commit reads it again.
  const landed = await workspace.land({ task: clean(task), info, result: clean(result), head: changes.head, ...(unsafe.length > 0 ? { unsafe } : {}), ...(review ? {} : { changed: treeAfter.changed }) });
  // What the next iteration here starts from, without another `git status`: the tree as the agent left it,
  // or, after ralph's own commit of all of it, a clean tree at that commit (bookkeeping aside), unless a
  // commit hook may have changed files. A review may have touched the tree (and a worker's worktree moves
  // to a new base): then the next one reads it again.
  if (!review && !landed.conflict && workspace.worker === undefined) {
    const left = await stateAfterLanding(workspace.git, workAfter, changes.head, landed.head, landed.committed);
    if (left) leftBehind.set(workspace, left);
  }
  record.commit = landed.commit;
  // The user's own paths are left out of every commit (said once, at the start): named again only when the
  // agent changed one this time. Secrets and private files are named in the record each time, warned once.
  const leftOut = (landed.leftOut ?? []).filter((item) => item.why.kind !== 'user' || work.files.includes(item.path));
  if (leftOut.length > 0) {
    record.leftOut = leftOut.map(describeLeftOut);
    const fresh = leftOut.filter((item) => item.why.kind === 'user' || ctx.guard?.firstMention(item) !== false);
    if (fresh.length > 0) bus.emit({ type: 'warning', message: `iteration ${info.iteration}: not committed by ralph: ${fresh.map(describeLeftOut).join('; ')}` });
  }
  if (landed.forAgent) record.committedForAgent = landed.forAgent;
  if (landed.kept) record.kept = landed.kept;
  if (landed.mergeMs !== undefined) record.mergeMs = landed.mergeMs;
  if (landed.resolve) {
    // The agent's run that resolved (or tried to resolve) a conflict on the new head is this iteration's cost.
    record.costUsd += landed.resolve.costUsd;
    record.inputTokens += landed.resolve.inputTokens;
    record.outputTokens += landed.resolve.outputTokens;
    if (landed.resolve.ok && !landed.conflict && !landed.refused) record.reason = `${record.reason}; its merge conflict in ${landed.resolve.files!.join(', ')} with the work landed since was resolved by the agent (${(landed.resolve.durationMs / 1000).toFixed(1)}s)`;
  }
  if (landed.conflict || landed.refused) {
    record.outcome = 'fail';
    record.reason = landed.reason ?? `merge conflict in ${landed.conflict!.join(', ')}`;
    record.tasksDone = [];
  }
  if (unsafe.length > 0) record.unsafeCommits = unsafe.map(describeLeftOut);
  // The task waits for a person from now on (the next snapshot sets it aside); a finished one's questions are done with.
  noteQuestions(ctx.root, source, clean(record), info, new Date(deps.now()).toISOString(), (message) => bus.emit({ type: 'warning', message }));
  record.durationMs = deps.now() - startedAt;
  iterationEnded(info.iteration);
  return { record, after, run, head: landed.head, vanished, ...(landed.conflict ? { conflict: landed.conflict } : {}) };
}

/** With fallbacks (--fallback): which agent finished the iteration, and what each one spent when several ran. */
export function agentFields(roster: AgentRoster | undefined, run: Pick<AgentRun, 'agent' | 'spentBy'>): Pick<IterationRecord, 'agent' | 'spentBy'> {
  if (!roster || roster.seats.length < 2) return {};
  return { agent: run.agent, ...(Object.keys(run.spentBy).length > 1 ? { spentBy: run.spentBy } : {}) };
}
