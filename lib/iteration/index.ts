// One iteration: one task, one fresh agent process, then the source, the gates and ralph's verdict.
// The session decides which task and when; this module only runs it and records what happened.
import path from 'node:path';
import type { Agent } from '../agents/types.ts';
import { finalAnswer } from '../agents/transcript.ts';
import { claimsCompletion } from '../completion.ts';
import type { Config } from '../config.ts';
import { decideOutcome, tasksFinished } from '../decide.ts';
import type { Deps } from '../deps.ts';
import type { EventBus, IterationRecord } from '../events.ts';
import type { GateResult } from '../gates.ts';
import type { Git } from '../git.ts';
import type { Command } from '../process/runner.ts';
import type { IterationInfo, Snapshot, Task, TaskSource } from '../sources/types.ts';
import { runAgent, type AgentRun } from './agent-run.ts';
import type { UsageWait } from './usage-wait.ts';

export interface IterationContext {
  /** The repository root: ralph's own files (.ralph/) live here. */
  root: string;
  /** Where the agent works: the repository itself, or a worker's worktree. */
  cwd: string;
  config: Config;
  deps: Deps;
  source: TaskSource;
  agent: Agent;
  profile?: string;
  /** git of the place the agent works in. */
  git: Git;
  bus: EventBus;
  signal: AbortSignal;
  logDir: string;
  usageWait: UsageWait;
  /** Extra environment for the agent beside the source's own (a worker's BEADS_DIR, …). */
  env?: Record<string, string | undefined>;
  /** Wraps the agent's command (a sandbox). */
  wrap?: (command: Command) => Command;
  /** Runs ralph's quality gates after an agent run; undefined when none are configured. */
  gates?: (iteration: number) => Promise<GateResult[]>;
  /** Commits a passing iteration's work; returns the commit, undefined when nothing changed. */
  commit?: (task: Task, iteration: number) => Promise<string | undefined>;
}

export interface IterationOutput {
  record: IterationRecord;
  /** The source after the iteration (before settle). */
  after: Snapshot;
  run: AgentRun;
  /** HEAD of the workspace after the iteration (ralph's commit or the agent's own). */
  head?: string;
  /** Every task the source knew vanished during the iteration: never completion. */
  vanished: boolean;
}

function taskCount(snapshot: Snapshot): number {
  return snapshot.remaining.length + snapshot.done.length + (snapshot.skipped?.length ?? 0);
}

/** Runs `task` once: claim, prompt, agent (with retries and waits), source, gates, verdict, settle, commit. */
export async function runIteration(ctx: IterationContext, task: Task, info: IterationInfo, before: Snapshot): Promise<IterationOutput> {
  const { source, deps, bus } = ctx;
  const startedAt = deps.now();
  bus.emit({ type: 'iteration_start', iteration: info.iteration, maxIterations: info.maxIterations, task });
  await source.claim?.(task, info);
  const prompt = await source.prompt(task, info);
  const headBefore = info.head;

  const run = await runAgent(
    {
      root: ctx.root,
      cwd: ctx.cwd,
      config: ctx.config,
      deps,
      agent: ctx.agent,
      profile: ctx.profile,
      bus,
      signal: ctx.signal,
      logBase: path.join(ctx.logDir, `iteration-${info.iteration}`),
      env: { ...ctx.source.agentEnv?.(), ...ctx.env },
      reclaim: async () => source.claim?.(task, info),
      usageWait: ctx.usageWait,
      wrap: ctx.wrap,
    },
    info.iteration,
    prompt,
  );
  const answer = finalAnswer(run.transcript);
  const agentText = run.transcript.assistantText || answer;
  const claimedComplete = run.classification.kind === 'ok' && claimsCompletion(answer);

  const after = await source.snapshot();
  const vanished = taskCount(before) > 0 && taskCount(after) === 0;
  const finished = tasksFinished(before, after);
  const gates = !vanished && run.classification.kind === 'ok' && ctx.gates ? await ctx.gates(info.iteration) : [];
  if (gates.length > 0) bus.emit({ type: 'gates', iteration: info.iteration, results: gates.map((gate) => ({ name: gate.name, passed: gate.passed, durationMs: gate.durationMs })) });
  const generic = decideOutcome({ agent: run.classification, exhausted: run.exhausted, tasksDone: finished, gatesPassed: gates.length > 0 ? gates.every((gate) => gate.passed) : undefined });
  const own = source.decideOutcome?.({ task, classification: run.classification, exhausted: run.exhausted, tasksDone: finished, gates, agentText });
  const decided = own ? { outcome: own.kind, reason: own.reason } : generic;
  // A source that settles the task itself (PRD) marks it done only in settle(): count it now.
  const tasksDone = own?.kind === 'pass' && !finished.includes(task.id) ? [...finished, task.id] : finished;
  const changes = await ctx.git.changedSince(headBefore);
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
    filesChanged: changes.files,
    claimedComplete,
    costUsd: run.costUsd,
    inputTokens: run.inputTokens,
    outputTokens: run.outputTokens,
    commit: undefined,
    gates: gates.length > 0 ? gates.map((gate) => ({ name: gate.name, passed: gate.passed })) : undefined,
  };
  if (vanished) return { record, after, run, head: changes.head, vanished };

  await source.settle?.(
    { iteration: info.iteration, task, kind: decided.outcome, reason: decided.reason, tasksDone, filesChanged: changes.files, claimedComplete, agentText, durationMs: record.durationMs, gates },
    info,
  );
  // After settle, so the source's own bookkeeping (status, history) lands in the same commit as the work.
  if (ctx.commit && decided.outcome === 'pass') {
    record.commit = await ctx.commit(task, info.iteration);
    if (record.commit) await source.recordCommit?.(info.iteration, record.commit, changes.head);
  }
  // The agent may commit its own work (beads' /sp:next, Spec Kit stories): report the new HEAD.
  if (!record.commit && changes.head && changes.head !== headBefore) record.commit = changes.head;
  return { record, after, run, head: record.commit ?? changes.head, vanished };
}
