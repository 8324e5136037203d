import path from 'node:path';
import { mkdirSync } from 'node:fs';
import dayjs from 'dayjs';
import { classifyRun } from './agents/classify.ts';
import { finalAnswer, newTranscript, record } from './agents/transcript.ts';
import type { Agent, AgentRequest, Classification, Transcript } from './agents/types.ts';
import { claimsCompletion } from './completion.ts';
import type { Config } from './config.ts';
import { decideNext, decideOutcome, tasksFinished } from './decide.ts';
import type { Deps } from './deps.ts';
import { abortError, ExitCode, RalphError } from './errors.ts';
import type { EventBus, IterationRecord, RunStatus, RunSummary } from './events.ts';
import type { Git } from './git.ts';
import type { GateResult } from './gates.ts';
import { backoffDelays, retry } from './retry.ts';
import { runProcess, type ProcessResult } from './process/runner.ts';
import type { IterationInfo, Snapshot, Task, TaskSource } from './sources/types.ts';
import { formatDuration } from './duration.ts';
import { clearAgent, recordAgent } from './process/agent-pid.ts';

export interface LoopContext {
  root: string;
  config: Config;
  deps: Deps;
  source: TaskSource;
  agent: Agent;
  /** Agent profile after source defaults were applied. */
  profile?: string;
  git: Git;
  bus: EventBus;
  signal: AbortSignal;
  sessionId: string;
  logDir: string;
  maxIterations: number;
  /** Runs ralph's quality gates after an agent run; undefined when none are configured. */
  gates?: (iteration: number) => Promise<GateResult[]>;
  /** Commits a passing iteration's work (commit policy on); returns the commit, undefined when nothing changed. */
  commit?: (task: Task, iteration: number) => Promise<string | undefined>;
  /** The records so far, kept by the caller so an interruption can still report them. */
  records: IterationRecord[];
}

interface AttemptValue {
  classification: Classification;
  transcript: Transcript;
  process: ProcessResult;
}

const COUNTDOWN_EVERY_MS = 10 * 60_000;

function taskCount(snapshot: Snapshot): number {
  return snapshot.remaining.length + snapshot.done.length + (snapshot.skipped?.length ?? 0);
}

/** Usage-limit waits get a small margin past the announced reset. */
export function usageWaitMs(resetAt: number, now: number): number {
  const wait = Math.max(0, resetAt - now);
  return Math.round(wait + Math.min(30_000, wait * 0.05) + 1000);
}

/** Runs the agent once for an iteration, retrying transient failures and sleeping through usage limits. */
async function runAgent(ctx: LoopContext, info: IterationInfo, task: Task, prompt: string): Promise<{ value: AttemptValue; attempts: number; exhausted: boolean; costUsd: number; inputTokens: number; outputTokens: number }> {
  const { config, deps, agent, bus } = ctx;
  const request: AgentRequest = { prompt, model: config.model, profile: ctx.profile, extraArgs: config.extraArgs, cwd: ctx.root };
  const command = agent.command(request);
  command.env = { ...command.env, ...ctx.source.agentEnv?.() };
  const logBase = path.join(ctx.logDir, `iteration-${info.iteration}`);
  let waits = 0;
  let costUsd = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  const outcome = await retry<AttemptValue>({
    attempts: config.retries,
    delays: backoffDelays({ baseMs: config.retryDelay, maxMs: config.retryMaxDelay, random: deps.random }),
    signal: ctx.signal,
    sleep: (ms, signal) => deps.sleep(ms, signal),
    onRetry: ({ attempt, delayMs }) => {
      bus.emit({ type: 'backoff', iteration: info.iteration, attempt, delayMs, until: deps.now() + delayMs, reason: 'transient failure' });
    },
    onWait: ({ ms, reason }) => {
      bus.emit({ type: 'usage_wait', iteration: info.iteration, until: deps.now() + ms, reason });
    },
    waitSleep: async (ms, signal) => {
      // Long waits say how long is left now and then, so a tmux log shows the run is alive.
      const until = deps.now() + ms;
      for (let left = ms; left > 0; left = until - deps.now()) {
        await deps.sleep(Math.min(left, COUNTDOWN_EVERY_MS), signal);
        const remaining = until - deps.now();
        if (remaining > 1000) bus.emit({ type: 'info', message: `still waiting for the usage limit to reset: ${formatDuration(remaining)} left` });
      }
    },
    attempt: async (attempt) => {
      if (attempt > 1 || waits > 0) await ctx.source.claim?.(task, info);
      const transcript = newTranscript();
      const process = await runProcess(command, {
        cwd: ctx.root,
        baseEnv: deps.env,
        timeoutMs: config.timeout,
        idleTimeoutMs: config.idleTimeout,
        graceMs: config.killGrace,
        signal: ctx.signal,
        stdoutLog: `${logBase}.jsonl`,
        stderrLog: `${logBase}.stderr.log`,
        onSpawn: (pid) => recordAgent(ctx.root, pid),
        onLine: (line, stream) => {
          if (stream === 'stderr') {
            record(transcript, { kind: 'other', text: line });
            return;
          }
          for (const event of agent.parseLine(line)) {
            record(transcript, event);
            bus.emit({ type: 'agent', iteration: info.iteration, event });
          }
        },
      });
      clearAgent(ctx.root);
      costUsd += transcript.costUsd;
      inputTokens += transcript.inputTokens;
      outputTokens += transcript.outputTokens;
      if (ctx.signal.aborted) throw abortError(ctx.signal);
      const classification = classifyRun(agent, transcript, process, deps.now(), waits);
      const value = { classification, transcript, process };
      switch (classification.kind) {
        case 'ok':
        case 'timeout':
          if (classification.kind === 'timeout') bus.emit({ type: 'attempt_failed', iteration: info.iteration, attempt, kind: 'timeout', reason: classification.reason });
          return { kind: 'done', value };
        case 'fatal':
          throw new RalphError(`agent setup error: ${classification.reason}`, { hint: classification.hint });
        case 'usage_limit': {
          const resetAt = classification.resetAt ?? deps.now();
          const ms = usageWaitMs(resetAt, deps.now());
          if (ms > config.maxWait) {
            throw new RalphError(`usage limit resets at ${dayjs(resetAt).format('YYYY-MM-DD HH:mm:ss')}, ${formatDuration(ms)} from now, longer than --max-wait ${formatDuration(config.maxWait)}: ${classification.reason}`, {
              hint: 'start ralph again after the reset, or raise --max-wait',
            });
          }
          waits += 1;
          bus.emit({ type: 'attempt_failed', iteration: info.iteration, attempt, kind: 'usage_limit', reason: classification.reason });
          return { kind: 'wait', ms, reason: classification.reason, value };
        }
        case 'transient':
          bus.emit({ type: 'attempt_failed', iteration: info.iteration, attempt, kind: 'transient', reason: classification.reason });
          return { kind: 'retry', reason: classification.reason, value };
      }
    },
  });
  return { value: outcome.value, attempts: outcome.attempts, exhausted: outcome.exhausted, costUsd, inputTokens, outputTokens };
}

/** The loop: snapshot, decide, run the agent, check the source again, record; until done or a limit. */
export async function runLoop(ctx: LoopContext): Promise<Omit<RunSummary, 'startedAt' | 'endedAt' | 'durationMs' | 'sessionId' | 'source' | 'agent'>> {
  const { source, deps, bus } = ctx;
  mkdirSync(ctx.logDir, { recursive: true });
  const firstIteration = ((await source.lastIteration?.()) ?? 0) + 1;
  let costUsd = 0;
  const finish = (status: RunStatus, exitCode: number, message: string, snapshot: Snapshot | undefined) => ({
    status,
    exitCode,
    message,
    iterations: ctx.records.length,
    tasksCompleted: ctx.records.reduce((sum, item) => sum + item.tasksDone.length, 0),
    tasksRemaining: snapshot?.remaining.length ?? 0,
    costUsd,
    records: ctx.records,
  });

  // HEAD as the next iteration starts: read once, then carried from each iteration's end.
  let head = await ctx.git.head();
  for (let count = 0; ; count += 1) {
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    const before = await source.snapshot();
    const next = decideNext(before, { iterations: count, costUsd }, { maxIterations: ctx.maxIterations, maxCost: ctx.config.maxCost });
    if (next.kind === 'complete') {
      const skipped = before.skipped?.length ? `; ${before.skipped.length} skipped: ${before.skipped.map((task) => task.id).join(', ')}` : '';
      const what = count === 0 ? `nothing to do: every task of ${source.describe()} is already complete` : `all tasks of ${source.describe()} are complete`;
      return finish('completed', ExitCode.complete, `${what}${skipped}`, before);
    }
    if (next.kind === 'stuck') return finish('failed', ExitCode.failure, source.explainStuck(before), before);
    if (next.kind === 'limit') {
      const why = next.why === 'cost' ? `cost budget of $${ctx.config.maxCost} spent ($${costUsd.toFixed(4)})` : `iteration limit of ${ctx.maxIterations} reached`;
      return finish('limit_reached', ExitCode.limit, `${why} with ${before.remaining.length} tasks remaining`, before);
    }

    const task = before.ready[0]!;
    const info: IterationInfo = { iteration: firstIteration + count, maxIterations: firstIteration - 1 + ctx.maxIterations, sessionId: ctx.sessionId, head };
    const startedAt = deps.now();
    bus.emit({ type: 'iteration_start', iteration: info.iteration, maxIterations: info.maxIterations, task });
    await source.claim?.(task, info);
    const prompt = await source.prompt(task, info);
    const headBefore = head;

    const run = await runAgent(ctx, info, task, prompt);
    costUsd += run.costUsd;
    const answer = finalAnswer(run.value.transcript);
    const claimedComplete = run.value.classification.kind === 'ok' && claimsCompletion(answer);

    const after = await source.snapshot();
    if (taskCount(before) > 0 && taskCount(after) === 0) {
      // All tasks vanished (the agent emptied the file?): that is not completion.
      return finish('failed', ExitCode.failure, `the task source lists no tasks any more after iteration ${info.iteration} (${source.describe()}); check what the agent did to it`, after);
    }
    const finished = tasksFinished(before, after);
    const gates = run.value.classification.kind === 'ok' && ctx.gates ? await ctx.gates(info.iteration) : [];
    if (gates.length > 0) bus.emit({ type: 'gates', iteration: info.iteration, results: gates.map((gate) => ({ name: gate.name, passed: gate.passed, durationMs: gate.durationMs })) });
    const generic = decideOutcome({ agent: run.value.classification, exhausted: run.exhausted, tasksDone: finished, gatesPassed: gates.length > 0 ? gates.every((gate) => gate.passed) : undefined });
    const own = source.decideOutcome?.({ task, classification: run.value.classification, exhausted: run.exhausted, tasksDone: finished, gates, agentText: run.value.transcript.assistantText || answer });
    const decided = own ? { outcome: own.kind, reason: own.reason } : generic;
    // A source that settles the task itself (PRD) marks it done only in settle(): count it now.
    const tasksDone = own?.kind === 'pass' && !finished.includes(task.id) ? [...finished, task.id] : finished;
    const changes = await ctx.git.changedSince(headBefore);
    const filesChanged = changes.files;
    const item: IterationRecord = {
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
      costUsd: run.costUsd,
      inputTokens: run.inputTokens,
      outputTokens: run.outputTokens,
      commit: undefined,
      gates: gates.length > 0 ? gates.map((gate) => ({ name: gate.name, passed: gate.passed })) : undefined,
    };
    ctx.records.push(item);
    await source.settle?.(
      { iteration: info.iteration, task, kind: decided.outcome, reason: decided.reason, tasksDone, filesChanged, claimedComplete, agentText: run.value.transcript.assistantText || answer, durationMs: item.durationMs, gates },
      info,
    );
    // After settle, so the source's own bookkeeping (status, history) lands in the same commit as the work.
    if (ctx.commit && decided.outcome === 'pass') {
      item.commit = await ctx.commit(task, info.iteration);
      if (item.commit) await source.recordCommit?.(info.iteration, item.commit, changes.head);
    }
    // The agent may commit its own work (beads' /sp:next, Spec Kit stories): report the new HEAD.
    if (!item.commit && changes.head && changes.head !== headBefore) item.commit = changes.head;
    head = item.commit ?? changes.head;
    bus.emit({ type: 'iteration_end', record: item });
    if (claimedComplete && after.remaining.length > 0) {
      bus.emit({ type: 'warning', message: `premature completion promise in iteration ${info.iteration}: ${after.remaining.length} tasks remain; going on` });
    }
    if (run.exhausted) {
      return finish('failed', ExitCode.failure, `agent still failing after ${run.attempts} attempts: ${'reason' in run.value.classification ? run.value.classification.reason : 'unknown'}`, after);
    }
  }
}
