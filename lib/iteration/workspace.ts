// Where an iteration runs, and how its result becomes part of the feature: in the repository itself (one
// agent), or in a worker's worktree whose commits ralph merges back (several agents).
import type { LeftOut } from '../repo/commit-set.ts';
import type { Git } from '../repo/git.ts';
import { isRalphFile, matchesAny } from '../repo/paths.ts';
import { reached } from '../recovery/crash-points.ts';
import type { GateResult } from '../gates.ts';
import type { IterationInfo, IterationResult, Snapshot, SnapshotPurpose, Task, TaskSource } from '../sources/types.ts';

/** What the iteration decided, handed to the workspace to record and (on a pass) merge. */
export interface Landing {
  task: Task;
  info: IterationInfo;
  result: IterationResult;
  /** HEAD of the workspace after the agent (its own commits included). */
  head?: string;
  /** What the agent's own commits add that ralph never commits (a secret, a private key). */
  unsafe?: LeftOut[];
  /** The uncommitted paths a `git status` after the agent (and the gates) listed. */
  changed?: readonly string[];
}

export interface Landed {
  /** The commit that now holds the iteration's work on the feature branch, when there is one. */
  commit?: string;
  /** The workspace's HEAD afterwards. */
  head?: string;
  /** Paths that conflicted when merging back: the work was kept, not merged. */
  conflict?: string[];
  /** A branch holding work that was not merged. */
  kept?: string;
  /** Why the iteration failed after all, when landing it did not work out. */
  reason?: string;
  /** The work was not merged because the agent's own commits hold what ralph never commits. */
  refused?: boolean;
  /** Time spent merging back (replay, fast-forward, state commit), waiting for the merge lock excluded. */
  mergeMs?: number;
  /** The gates run again on the merged result before it landed (several workers; absent when not needed). */
  mergeGates?: GateResult[];
  /** A conflict the agent was asked to resolve on the new head: whether it did (which files), or why not, and what the run cost. */
  resolve?: { ok: boolean; files?: string[]; why?: string; costUsd: number; inputTokens: number; outputTokens: number; durationMs: number };
  /** Changed paths ralph did not commit (the user's own, secrets, private keys), with why. */
  leftOut?: LeftOut[];
  /** The paths ralph's commit took, when it made one in the workspace (the rest stays as it was). */
  committed?: string[];
  /** The agent commits its own work but left this iteration's uncommitted: ralph committed it; the paths of its work (empty: only its task state). */
  forAgent?: string[];
}

/** What one of ralph's commits made, the paths it took (a folder for all it holds), and what it left out. */
export interface Committed {
  commit?: string;
  leftOut: LeftOut[];
  paths?: string[];
}

export interface Workspace {
  /** The worker (1-based) in its own worktree; undefined when the agent works in the repository. */
  readonly worker?: number;
  /** Where the agent and the gates run. */
  readonly cwd: string;
  readonly git: Git;
  /** Environment for the agent beside the source's own. */
  env(): Record<string, string | undefined>;
  /** The source's tasks as this workspace shows them (`progress`: right after the agent, see SnapshotPurpose). */
  snapshot(purpose?: SnapshotPurpose): Promise<Snapshot>;
  /** Records the iteration in the source and makes its work part of the feature branch. */
  land(landing: Landing): Promise<Landed>;
}

export interface InPlaceOptions {
  root: string;
  git: Git;
  source: TaskSource;
  /** Commits a passing iteration's work (commit policy on). */
  commit?: (task: Task, iteration: number, changed?: readonly string[]) => Promise<Committed>;
  /** Amends the source's state into the agent's own commit (the agent commits, ralph does not). */
  amendState?: () => Promise<Committed>;
  /**
   * The agent commits its own work (ralph's policy is off): `commit` then takes only what a passing
   * iteration left uncommitted, never the paths the user had changed before the run.
   */
  agentCommits?: { userPaths: ReadonlySet<string> };
}

/** The agent works in the repository: the source records there, and ralph commits when its policy says so. */
export function inPlaceWorkspace(options: InPlaceOptions): Workspace {
  const { source } = options;
  return {
    cwd: options.root,
    git: options.git,
    env: () => ({}),
    snapshot: (purpose) => source.snapshot(purpose),
    async land({ task, info, result, head, changed }) {
      await source.settle?.(result, info);
      reached('state_written', { iteration: info.iteration, outcome: result.kind });
      // After settle, so the source's own bookkeeping (status, history) lands in the same commit as the work.
      let commit: string | undefined;
      let leftOut: LeftOut[] = [];
      let committed: string[] | undefined;
      let forAgent: string[] | undefined;
      const pass = result.kind === 'pass';
      if (options.commit && pass && !options.agentCommits) {
        ({ commit, leftOut, paths: committed } = await options.commit(task, info.iteration, changed));
        if (commit) reached('work_committed', { iteration: info.iteration, commit });
        if (commit) await source.recordCommit?.(info.iteration, commit, head);
      } else {
        if (options.amendState && head && info.head && head !== info.head && (await options.git.madeSince(info.head))) {
          // The agent committed its work (beads' /sp:next, Spec Kit stories): the task state it just changed
          // joins that commit, so the tree stays clean; never a commit that is already on a remote.
          ({ commit, leftOut, paths: committed } = await options.amendState());
          if (commit) reached('work_committed', { iteration: info.iteration, commit });
        }
        if (options.agentCommits && options.commit && pass) {
          // What the agent left of a passing iteration (all of it, or what its own commit missed): ralph
          // commits it, so the tree ends clean; the user's earlier changes stay out, as in every commit of ralph's.
          const now = changed ?? (await options.git.state()).changed;
          const left = agentLeft(now, options.agentCommits.userPaths, committed ?? []);
          if (left.length > 0) {
            const made = await options.commit(task, info.iteration, changed);
            leftOut = mergeLeftOut(leftOut, made.leftOut);
            if (made.commit) {
              commit = made.commit;
              reached('work_committed', { iteration: info.iteration, commit });
              committed = [...(committed ?? []), ...(made.paths ?? [])];
              // The work it left, by name; its task state (a tick) goes without saying (the record's `done`).
              forAgent = left.filter((file) => matchesAny(file, made.paths ?? []) && !matchesAny(file, source.bookkeepingFiles()));
              await source.recordCommit?.(info.iteration, made.commit, head);
            }
          }
        }
      }
      // The agent may commit its own work: report the new HEAD.
      if (!commit && head && head !== info.head) commit = head;
      return { commit, head: commit ?? head, ...(leftOut.length > 0 ? { leftOut } : {}), ...(committed ? { committed } : {}), ...(forAgent ? { forAgent } : {}) };
    },
  };
}

/**
 * What an agent that commits its own work left uncommitted: the changed paths but ralph's own files, the
 * paths the user had changed before the run and what ralph just amended into the agent's commit. Pure.
 */
export function agentLeft(changed: readonly string[], userPaths: ReadonlySet<string>, amended: readonly string[]): string[] {
  return changed.filter((file) => !isRalphFile(file) && !userPaths.has(file) && !matchesAny(file, amended));
}

function mergeLeftOut(first: readonly LeftOut[], second: readonly LeftOut[]): LeftOut[] {
  const seen = new Set(first.map((item) => item.path));
  return [...first, ...second.filter((item) => !seen.has(item.path))];
}
