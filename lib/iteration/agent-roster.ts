// Agents as a list (--fallback): the primary, then the fallbacks in order, each with its own usage-limit
// state. An iteration runs on the first one that is not limited; when it hits a limit the same iteration
// goes on at once with the next; only when every one is limited does the session wait, for the earliest
// reset. Once the primary's reset has passed it is first again. The adapters stay pure data: the choice is
// the iteration's (runAgent), the state is here, shared by every worker of the session.
import os from 'node:os';
import path from 'node:path';
import { isolationArgs } from '../agents/isolation.ts';
import type { Agent } from '../agents/types.ts';
import type { IterationRecord } from '../events.ts';
import type { Command } from '../process/runner.ts';

/** One agent of the list: an adapter with its model (and, for the primary, its profile and extra arguments). */
export interface Seat {
  /** How it is named everywhere: `claude`, `claude:sonnet`, `codex`. */
  label: string;
  agent: Agent;
  model?: string;
  profile?: string;
  extraArgs: readonly string[];
}

/** A seat's name: the CLI, and the model when one is set. */
export function seatLabel(agent: string, model: string | undefined): string {
  return model ? `${agent}:${model}` : agent;
}

/** What starting a seat's agent depends on besides the seat. */
export interface SeatLaunch {
  prompt: string;
  /** Where the agent works (a worker's worktree, or the repository). */
  cwd: string;
  /** The repository: ralph's scratch folder for --isolate is under its .ralph/. */
  root: string;
  /** ralph's environment (HOME, the CLI's config folder). */
  env: NodeJS.ProcessEnv;
  /** --isolate: the CLI started without the user's hooks, plugins and MCP servers. */
  isolate: boolean;
  /** False for --dry-run: --isolate names its files without writing them. */
  write?: boolean;
  /** Extra environment for the agent (the source's, the worker's). */
  extraEnv?: Record<string, string | undefined>;
  /** --sandbox: the command wrapped for `cwd`. */
  wrap?: (command: Command, cwd: string, agent: Agent) => Command;
}

/** The command that starts a seat's agent: the run and the dry run both build it here, so they cannot differ. */
export function seatCommand(seat: Seat, launch: SeatLaunch): Command {
  const { cwd, env } = launch;
  const isolation = launch.isolate ? isolationArgs(seat.agent, { cwd, home: env.HOME ?? os.homedir(), env, scratch: path.join(launch.root, '.ralph', 'isolation'), ...(launch.write === false ? { write: false } : {}) }) : undefined;
  const base = seat.agent.command({ prompt: launch.prompt, model: seat.model, profile: seat.profile, extraArgs: seat.extraArgs, cwd, isolationArgs: isolation });
  const full = launch.extraEnv ? { ...base, env: { ...base.env, ...launch.extraEnv } } : base;
  return launch.wrap ? launch.wrap(full, cwd, seat.agent) : full;
}

export interface SeatState {
  label: string;
  /** Limited until then (epoch ms); Infinity when no wait helps (credit spent); absent when free. */
  limitedUntil?: number;
  reason?: string;
}

/** The session's list of agents and their limits. */
export class AgentRoster {
  private readonly limits = new Map<Seat, { until: number; reason: string }>();

  constructor(
    readonly seats: readonly Seat[],
    private readonly now: () => number,
  ) {
    if (seats.length === 0) throw new Error('an agent roster needs at least one agent');
  }

  get primary(): Seat {
    return this.seats[0]!;
  }

  /** The first seat free now (a limit whose time has passed is forgotten), or undefined when all are limited. */
  current(): Seat | undefined {
    const now = this.now();
    for (const seat of this.seats) {
      const limit = this.limits.get(seat);
      if (limit && limit.until > now) continue;
      if (limit) this.limits.delete(seat);
      return seat;
    }
    return undefined;
  }

  /** Marks `seat` limited until `until` (later limits win; Infinity: for the rest of the run). */
  limit(seat: Seat, until: number, reason: string): void {
    const known = this.limits.get(seat);
    if (!known || until > known.until) this.limits.set(seat, { until, reason });
  }

  /** When the first limited seat is free again; undefined when none will be (or none is limited). */
  earliestReset(): number | undefined {
    const times = [...this.limits.values()].map((limit) => limit.until).filter((until) => Number.isFinite(until));
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  /** Every seat's state, in order (for status.json, `ralph status` and the summary). */
  state(): SeatState[] {
    const now = this.now();
    return this.seats.map((seat) => {
      const limit = this.limits.get(seat);
      return limit && limit.until > now ? { label: seat.label, limitedUntil: limit.until, reason: limit.reason } : { label: seat.label };
    });
  }
}

/** One agent's share of a run (--fallback): iterations it finished, what it spent, and its limit at the end. */
export interface AgentTotals {
  agent: string;
  iterations: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  /** Limited when the run ended: until then (ISO), or null for the rest of the run. */
  limitedUntil?: string | null;
}

/** Per agent of the list, from the iteration records (an iteration's cost goes to the agents that spent it). */
export function agentTotals(records: readonly IterationRecord[], roster: AgentRoster): AgentTotals[] | undefined {
  if (roster.seats.length < 2) return undefined;
  const totals = new Map(roster.seats.map((seat) => [seat.label, { agent: seat.label, iterations: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 } as AgentTotals]));
  for (const record of records) {
    const label = record.agent ?? roster.primary.label;
    const own = totals.get(label);
    if (own) own.iterations += 1;
    const spent = record.spentBy ?? { [label]: { costUsd: record.costUsd - (record.review?.costUsd ?? 0), inputTokens: record.inputTokens - (record.review?.inputTokens ?? 0), outputTokens: record.outputTokens - (record.review?.outputTokens ?? 0) } };
    for (const [agent, usage] of Object.entries(spent)) {
      const total = totals.get(agent);
      if (!total) continue;
      total.costUsd += usage.costUsd;
      total.inputTokens += usage.inputTokens;
      total.outputTokens += usage.outputTokens;
    }
  }
  for (const state of roster.state()) {
    if (state.limitedUntil !== undefined) totals.get(state.label)!.limitedUntil = Number.isFinite(state.limitedUntil) ? new Date(state.limitedUntil).toISOString() : null;
  }
  return [...totals.values()];
}
