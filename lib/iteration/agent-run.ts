// One agent run for one iteration: the process, its events, and what ralph does about failures
// (backoff on transient ones, a sleep until the reset on usage limits, a stop on setup errors).
import dayjs from 'dayjs';
import { classifyRun } from '../agents/classify.ts';
import { newTranscript, record } from '../agents/transcript.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from '../agents/types.ts';
import type { Config } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { abortError, RalphError } from '../errors.ts';
import { fileSystemError } from '../repo/fs-errors.ts';
import type { EventBus } from '../events.ts';
import { formatDuration } from '../duration.ts';
import type { UsageWait } from './usage-wait.ts';
import { backoffDelays, retry } from '../retry.ts';
import { runProcess, type Command, type ProcessResult } from '../process/runner.ts';
import { agentEndFile, clearAgent, recordAgent } from '../process/agent-pid.ts';
import { reached } from '../recovery/crash-points.ts';
import { seatCommand, type AgentRoster, type Seat } from './agent-roster.ts';
import type { Redactor } from '../redact/index.ts';

/** What one agent run of an iteration needs to know. */
/** Wraps an agent's command for the folder it works in (the sandbox: its writable state depends on the CLI). */
export type CommandWrap = (command: Command, cwd: string, agent: Agent) => Command;

export interface AgentRunContext {
  /** The repository root ralph's own files live in (.ralph/agents/). */
  root: string;
  /** Where the agent works: the repository, or a worker's worktree. */
  cwd: string;
  config: Config;
  deps: Deps;
  agent: Agent;
  profile?: string;
  bus: EventBus;
  signal: AbortSignal;
  /** The log files' path without extension, e.g. `.ralph/logs/<session>/iteration-3`. */
  logBase: string;
  /** Extra environment for the agent (the source's, the worker's). */
  env?: Record<string, string | undefined>;
  /** Called before a retry or after a usage-limit wait, so the source can put the task back in play. */
  reclaim?: () => Promise<void>;
  /** The session's usage-limit wait, shared by every worker: one wait pauses them all. */
  usageWait: UsageWait;
  /** Wraps the agent's command for the folder it works in (a sandbox); identity when absent. */
  wrap?: CommandWrap;
  /** Model, profile and extra arguments instead of the worker's (a reviewer runs another CLI). */
  request?: Pick<AgentRequest, 'model' | 'profile' | 'extraArgs'>;
  /** Judges a run that ended well: a reason makes it a transient failure, retried like any other (a reviewer without a verdict). */
  check?: (transcript: Transcript) => string | undefined;
  /** Replaces secrets in the agent's output before logs, lines and events see it. */
  redactor?: Redactor;
  /** The session's agents and their limits (--fallback); without it (and for a reviewer) only `agent` runs. */
  roster?: AgentRoster;
}

/** What one agent spent in a run. */
export interface AgentUsage {
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

export interface AgentRun {
  /** The agent (its label: `codex`, `claude:sonnet`) that made the last attempt. */
  agent: string;
  /** What each agent that ran spent, by label (several when a limit moved the iteration to a fallback). */
  spentBy: Record<string, AgentUsage>;
  classification: Classification;
  transcript: Transcript;
  process: ProcessResult;
  attempts: number;
  /** True when every attempt failed. */
  exhausted: boolean;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

/** Default cap of one agent log file of an iteration (option `log-max-bytes`). */
export const DEFAULT_LOG_MAX_BYTES = 64 * 1024 * 1024;

/** Agent events ralph's classification reads: their lines stay in a capped log. */
const DECISIVE = new Set<AgentEvent['kind']>(['init', 'retry', 'rate_limit', 'result', 'error']);

/** Usage-limit waits get a small margin past the announced reset. */
export function usageWaitMs(resetAt: number, now: number): number {
  const wait = Math.max(0, resetAt - now);
  return Math.round(wait + Math.min(30_000, wait * 0.05) + 1000);
}

/** The agent each session's roster last ran (whichever iteration or worker ran it). */
const lastUsed = new WeakMap<AgentRoster, Seat>();

/** Runs the agent once for an iteration, retrying transient failures and sleeping through usage limits. */
export async function runAgent(ctx: AgentRunContext, iteration: number, prompt: string): Promise<AgentRun> {
  const { config, deps, bus } = ctx;
  const isolate = config.extra.get('isolate') === true;
  // The agents this run may use: the session's list (--fallback), or the one it was given (a reviewer).
  const roster = ctx.request ? undefined : ctx.roster;
  const own: Seat = { label: ctx.agent.name, agent: ctx.agent, ...(ctx.request ?? { model: config.model, profile: ctx.profile, extraArgs: config.extraArgs }) };
  const commands = new Map<Seat, Command>();
  const commandFor = (seat: Seat): Command => {
    let command = commands.get(seat);
    if (!command) {
      command = seatCommand(seat, { prompt, cwd: ctx.cwd, root: ctx.root, env: deps.env, isolate, extraEnv: ctx.env, wrap: ctx.wrap });
      commands.set(seat, command);
    }
    return command;
  };
  /** What each agent of this run spent, by label (several only after a switch). */
  const spentBy: Record<string, AgentUsage> = {};
  let seat: Seat = own;
  let waits = 0;
  let lastWaitReason = '';
  let lastReset: number | undefined;
  let costUsd = 0;
  let inputTokens = 0;
  let outputTokens = 0;

  const outcome = await retry<{ classification: Classification; transcript: Transcript; process: ProcessResult }>({
    attempts: config.retries,
    delays: backoffDelays({ baseMs: config.retryDelay, maxMs: config.retryMaxDelay, random: deps.random }),
    signal: ctx.signal,
    sleep: (ms, signal) => deps.sleep(ms, signal),
    onRetry: ({ attempt, delayMs }) => {
      bus.emit({ type: 'backoff', iteration, attempt, delayMs, until: deps.now() + delayMs, reason: 'transient failure' });
    },
    // Every worker joins the session's one wait; it announces each new reset time once.
    waitSleep: (ms, signal) => ctx.usageWait.wait({ until: deps.now() + ms, reset: lastReset, iteration, reason: lastWaitReason, signal }),
    attempt: async (attempt) => {
      if (attempt > 1 || waits > 0) await ctx.reclaim?.();
      // The first agent of the list not limited now: the primary again once its reset has passed.
      const next = roster ? (roster.current() ?? roster.primary) : own;
      if (roster && next === roster.primary && next !== (lastUsed.get(roster) ?? next)) bus.emit({ type: 'agent_back', iteration, agent: next.label });
      if (roster) lastUsed.set(roster, next);
      seat = next;
      const runningSeat = seat;
      const transcript = newTranscript();
      let pgid: number | undefined;
      // The end of an agent working in the repository itself is recorded even after ralph's death: the next
      // start tells its work from the user's later changes. (A worker's agent works in its worktree: its end
      // says nothing of the repository's own changes, which a landing under way may be making.)
      const endFile = ctx.cwd === ctx.root ? agentEndFile(ctx.root) : undefined;
      const process = await runProcess(commandFor(seat), {
        cwd: ctx.cwd,
        baseEnv: deps.env,
        timeoutMs: config.timeout,
        idleTimeoutMs: config.idleTimeout,
        graceMs: config.killGrace,
        signal: ctx.signal,
        stdoutLog: `${ctx.logBase}.jsonl`,
        stderrLog: `${ctx.logBase}.stderr.log`,
        endFile,
        onSpawn: (pid) => {
          pgid = pid;
          recordAgent(ctx.root, pid, endFile);
          reached('agent_started', { iteration });
        },
        redactor: ctx.redactor,
        logMaxBytes: (config.extra.get('log-max-bytes') as number | undefined) ?? DEFAULT_LOG_MAX_BYTES,
        onLine: (line, stream) => {
          if (stream === 'stderr') {
            record(transcript, { kind: 'other', text: line });
            return false;
          }
          let decisive = false;
          for (const event of runningSeat.agent.parseLine(line)) {
            record(transcript, event);
            bus.emit({ type: 'agent', iteration, event });
            if (DECISIVE.has(event.kind)) decisive = true;
          }
          // The lines ralph's verdict rests on stay in a capped log.
          return decisive;
        },
      });
      clearAgent(ctx.root, pgid, endFile);
      // A log that could not be written (a full disk) ends the run: nothing of the iteration can be kept.
      if (process.logError) throw fileSystemError(process.logError) ?? new RalphError(`cannot write the agent's log: ${process.logError.message}`);
      costUsd += transcript.costUsd;
      inputTokens += transcript.inputTokens;
      outputTokens += transcript.outputTokens;
      const spent = (spentBy[seat.label] ??= { costUsd: 0, inputTokens: 0, outputTokens: 0 });
      spent.costUsd += transcript.costUsd;
      spent.inputTokens += transcript.inputTokens;
      spent.outputTokens += transcript.outputTokens;
      if (ctx.signal.aborted) throw abortError(ctx.signal);
      const classified = classifyRun(seat.agent, transcript, process, deps.now(), waits);
      const rejected = classified.kind === 'ok' ? ctx.check?.(transcript) : undefined;
      const classification: Classification = rejected ? { kind: 'transient', reason: rejected } : classified;
      const value = { classification, transcript, process };
      switch (classification.kind) {
        case 'ok':
        case 'timeout':
          if (classification.kind === 'timeout') bus.emit({ type: 'attempt_failed', iteration, attempt, kind: 'timeout', reason: classification.reason });
          return { kind: 'done', value };
        case 'fatal':
          // No credit left: another agent of the list takes over; without one this ends the run.
          if (classification.spent && roster && roster.seats.length > 1 && switchFrom(seat, Number.POSITIVE_INFINITY, classification.reason)) return { kind: 'again', reason: classification.reason, value };
          throw new RalphError(`agent setup error: ${classification.reason}`, { hint: classification.hint });
        case 'usage_limit': {
          const resetAt = classification.resetAt ?? deps.now();
          // When this agent may run again: the reset and a small margin (usageWaitMs).
          const until = deps.now() + usageWaitMs(resetAt, deps.now());
          // The same iteration goes on at once with the next agent not limited; only when all are does it wait.
          if (roster && switchFrom(seat, until, classification.reason)) return { kind: 'again', reason: classification.reason, value };
          const several = roster !== undefined && roster.seats.length > 1;
          const wakeAt = several ? (roster.earliestReset() ?? until) : until;
          const ms = Math.max(0, wakeAt - deps.now());
          if (ms > config.maxWait) {
            throw new RalphError(`usage limit resets at ${dayjs(several ? wakeAt : resetAt).format('YYYY-MM-DD HH:mm:ss')}, ${formatDuration(ms)} from now, longer than --max-wait ${formatDuration(config.maxWait)}: ${classification.reason}`, {
              hint: several ? 'every agent is limited: start ralph again after the reset, raise --max-wait, or add a --fallback' : 'start ralph again after the reset, or raise --max-wait',
            });
          }
          waits += 1;
          bus.emit({ type: 'attempt_failed', iteration, attempt, kind: 'usage_limit', reason: classification.reason });
          lastWaitReason = several ? `every agent is limited (${roster.state().map((item) => item.label).join(', ')}); ${seat.label}: ${classification.reason}` : classification.reason;
          // The provider's own reset lets workers that hit the same limit join one wait (usage-wait.ts).
          lastReset = several ? undefined : classification.resetAt;
          return { kind: 'wait', ms, reason: classification.reason, value };
        }
        case 'transient':
          bus.emit({ type: 'attempt_failed', iteration, attempt, kind: 'transient', reason: classification.reason });
          return { kind: 'retry', reason: classification.reason, value };
      }
    },
  });
  return { ...outcome.value, attempts: outcome.attempts, exhausted: outcome.exhausted, costUsd, inputTokens, outputTokens, agent: seat.label, spentBy };

  /** Marks `from` limited until `until`; true when another agent is free to go on (the switch is said). */
  function switchFrom(from: Seat, until: number, reason: string): boolean {
    roster!.limit(from, until, reason);
    const to = roster!.current();
    // Another agent, not this one again (a limit that has already passed is waited out as before).
    if (!to || to === from) return false;
    bus.emit({ type: 'agent_switch', iteration, from: from.label, to: to.label, until, reason });
    return true;
  }
}
