// What the loop runs with, cut along its concerns: what every iteration needs (the iteration's own context
// but where it works), how finished work lands, and what the loop decides with. session/index.ts builds one
// object of all three; each part of the loop takes only the part it reads.
import type { Control } from '../control/index.ts';
import type { IterationRecord } from '../events.ts';
import type { IterationContext, IterationOutput } from '../iteration/context.ts';
import type { Committed } from '../iteration/workspace.ts';
import type { Dock } from '../landing/types.ts';
import type { Git } from '../repo/git.ts';
import type { Task } from '../sources/types.ts';
import type { BreakerLimits } from './breaker.ts';
import type { Convergence } from './converge.ts';

/** What every iteration runs with, wherever it works (lib/iteration/context.ts, less the workspace and the signal the pool gives it). */
export type IterationScope = Omit<IterationContext, 'workspace' | 'signal' | 'claimedOnRemote'>;

/** How a finished iteration's work lands: the main worktree, ralph's commits there, and where tasks are claimed. */
export interface LandingScope {
  git: Git; // of the repository (the main worktree)
  /** Commits a passing iteration's work (commit on, one worker); `amendState` adds the source's state to the agent's own commit instead (it commits, ralph not). */
  commit?: (task: Task, iteration: number, changed?: readonly string[]) => Promise<Committed>;
  amendState?: () => Promise<Committed>;
  /** The agent commits its own work: `commit` takes only what a passing iteration left uncommitted (see inPlaceWorkspace). */
  agentCommits?: { userPaths: ReadonlySet<string> };
  /** Commits what a passing hook pass left (whatever the number of workers: a pass runs alone, in the repository). */
  commitPass?: (task: Task, iteration: number, changed?: readonly string[]) => Promise<Committed>;
  /** Commits what a converge pass appended. */
  commitState?: (message: string, iteration: number) => Promise<Committed>;
  /** --remote: where every host claims and lands (lib/landing/remote.ts); absent: this host alone. */
  dock?: Dock;
}

/** What the loop decides with: the session, its budget and records, steering and the converge cycle. */
export interface LoopScope {
  signal: AbortSignal;
  sessionId: string;
  maxIterations: number;
  /** The records so far, kept by the caller (an interruption still reports them). */
  records: IterationRecord[];
  breaker: BreakerLimits; // the no-progress breaker's limits (./breaker.ts)
  /** `ralph stop` / `ralph pause` from another terminal (lib/control); absent when nobody can steer. */
  control?: Pick<Control, 'gate' | 'changed'>;
  /** --converge: passes once every task is done (./converge.ts). */
  convergence?: Convergence;
}

export type LoopContext = IterationScope & LandingScope & LoopScope;

/** How an iteration started by the pool ended: its output, or the error that ended it. */
export type Ended = { slot: number; task: Task; output: IterationOutput } | { slot: number; task: Task; error: unknown };
