// What an iteration runs with and what it gives back: the types the iteration and its reviewer both take,
// below both (index.ts and review.ts re-export them).
import path from 'node:path';
import type { Agent } from '../agents/types.ts';
import type { Config } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import type { EventBus, IterationRecord } from '../events.ts';
import type { GateResult } from '../gates.ts';
import type { Redactor } from '../redact/index.ts';
import type { CommitGuard } from '../repo/commit-set.ts';
import type { IterationInfo, Snapshot, TaskSource } from '../sources/types.ts';
import type { AgentRun, AgentRunContext, CommandWrap } from './agent-run.ts';
import type { AgentRoster } from './agent-roster.ts';
import type { UsageWait } from './usage-wait.ts';
import type { Workspace } from './workspace.ts';

/** The reviewer of a run: its adapter and model, and how --review named it. */
export interface Reviewer {
  agent: Agent;
  model?: string;
  /** `codex`, `claude:opus`: as given to --review. */
  label: string;
}

export interface IterationContext {
  /** The repository root: ralph's own files (.ralph/) live here. */
  root: string;
  /** Where the agent works and how its result lands (the repository itself, or a worker's worktree). */
  workspace: Workspace;
  config: Config;
  deps: Deps;
  source: TaskSource;
  agent: Agent;
  profile?: string;
  bus: EventBus;
  signal: AbortSignal;
  logDir: string;
  usageWait: UsageWait;
  /** Wraps the agent's command for the folder it works in (a sandbox). */
  wrap?: CommandWrap;
  /** Runs ralph's quality gates in `cwd` after an agent run; undefined when none are configured. */
  gates?: (iteration: number, cwd: string) => Promise<GateResult[]>;
  /** The independent reviewer (--review); undefined when off. */
  review?: Reviewer;
  /** Replaces secrets in the agent's output and in what the source records and ralph commits. */
  redactor?: Redactor;
  /** What ralph's commits may hold; remembers which left-out paths were already named. */
  guard?: CommitGuard;
  /** The session's agents in order (--fallback) and their usage limits. */
  roster?: AgentRoster;
  /**
   * --remote with claims as refs: the remote holds the task's claim, so the source's own (a mark in its
   * state files, which every host shares) is not made; a source whose database claims (beads) still does.
   */
  claimedOnRemote?: boolean;
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
  /** Paths that conflicted when the worker's commits were merged back (the task should run again). */
  conflict?: string[];
  /** Ends the run as failed once the iterations under way have ended (a converge pass that broke its contract). */
  failure?: string;
}

/** How the agent of a pass of the loop's own (a converge pass, a project's hook) runs: in the workspace, as the session's agent. */
export function passRunContext(ctx: IterationContext, info: IterationInfo): AgentRunContext {
  const { workspace } = ctx;
  return { root: ctx.root, cwd: workspace.cwd, config: ctx.config, deps: ctx.deps, agent: ctx.agent, profile: ctx.profile, bus: ctx.bus, signal: ctx.signal, logBase: path.join(ctx.logDir, `iteration-${info.iteration}`), env: { ...ctx.source.agentEnv?.(info), ...workspace.env() }, usageWait: ctx.usageWait, wrap: ctx.wrap, redactor: ctx.redactor, roster: ctx.roster };
}
