// The session's side of recovery (lib/recovery/ does the settling): what a run that died left is settled
// with this run's means (its gates, its commits, its sweep of worktrees), said, and the dead session given
// its end. Loaded with the rest of what only a real run needs.
import { errorMessage } from '../errors.ts';
import { amendLanding } from '../landing/amend.ts';
import type { Committed } from '../iteration/workspace.ts';
import { stopOrphanedAgent } from '../process/agent-pid.ts';
import { recoverRun } from '../recovery/index.ts';
import { forcedByUser, type Journal } from '../recovery/journal.ts';
import type { GateResult } from '../gates.ts';
import type { Redactor } from '../redact/index.ts';
import { CommitGuard, startNotes } from '../repo/commit-set.ts';
import { fileSystemError } from '../repo/fs-errors.ts';
import { changedNow } from '../repo/git.ts';
import { isRalphFile } from '../repo/paths.ts';
import type { Task } from '../sources/types.ts';
import { closeDeadSession } from './dead-session.ts';
import { takeLeftWork } from './left-work.ts';
import type { Prepared } from './prepare.ts';
import { Worktrees } from './worktrees.ts';

export interface StartRecovery {
  prepared: Prepared;
  sessionId: string;
  redactor: Redactor;
  now: () => number;
  warn: (message: string) => void;
  info: (message: string) => void;
  gates?: (iteration: number, cwd: string) => Promise<GateResult[]>;
  /** ralph's commit of a passing task. */
  commitTask: (guard: CommitGuard, task: Task, iteration: number) => Promise<Committed>;
}

/**
 * Everything a run that died left (lib/recovery/): its agents, its iterations under way, its work in the
 * tree told apart from the user's own changes, tasks left in an iteration, worktrees, a session with no
 * end. What the user had changed before the run stays theirs: left out of every commit of ralph's (the
 * guard). Returns the run's journal, its guard, and what a forced exit writes of the journal.
 */
export async function recoverAtStart(ctx: StartRecovery): Promise<{ journal: Journal; guard: CommitGuard; forcedEnd: (exitCode?: number) => void }> {
  const { prepared, sessionId, redactor, warn } = ctx;
  const { root, git, source, config } = prepared;
  const commitOn = prepared.commitMode === 'ralph';
  let left: { paths: ReadonlySet<string>; notes: string[] } = { paths: new Set(), notes: [] };
  const recovery = await recoverRun({
    root,
    sessionId,
    git,
    source,
    maxIterations: prepared.maxIterations,
    stopOrphans: () => stopOrphanedAgent(root, config.killGrace),
    // Read once the lock is held: before it, the changes could be another run's state in flight. Work an
    // iteration of an earlier run left when that run ended before its verdict is not the user's either.
    makeGuard: (userPaths) => {
      left = takeLeftWork(root, userPaths, commitOn);
      return new CommitGuard(new Set(userPaths.filter((file) => !left.paths.has(file) && !isRalphFile(file))), () => source.workers.stateFiles(), redactor);
    },
    notes: (evidence) => {
      for (const note of startNotes(evidence.userPaths.filter((file) => !left.paths.has(file)), source.workers.stateFiles(), prepared.commitMode)) warn(note);
      for (const note of left.notes) ctx.info(note);
    },
    gates: ctx.gates,
    // Work a dead run's agent left is adopted with ralph's commit in every mode but --no-commit (as a live run commits what an agent leaves).
    commit: prepared.commitMode !== 'off' && config.parallel === 1 && !prepared.remote ? ctx.commitTask : undefined,
    // --remote: a landing merged here but killed before its push is recorded into its commit all the same
    // (the join pushes or replays it with its state); a commit the remote has is never amended.
    amendState: commitOn && (config.parallel > 1 || prepared.remote) ? (guard, iteration) => amendLanding(git, guard, source.workers.stateFiles(), prepared.remote, iteration) : undefined,
    sweep: (guard, who) => new Worktrees(root, guard).sweep(sessionId, source.workers.stateFiles(), who),
    remote: prepared.remote !== undefined,
  });
  const { journal, guard } = recovery;
  for (const item of recovery.settled) {
    if (item.quiet) ctx.info(item.message);
    else warn(item.message);
  }
  // The session the dead run left without an end: ended now, its report written (not "running" forever).
  // A run forced to exit (a second Ctrl+C) ended as the user asked: its session's end is news, with its code.
  const ended = recovery.evidence.previous?.ended;
  // (A last-resort exit, an error no code caught, writes no code: said as a death.)
  const forced = forcedByUser(ended) ? { exitCode: ended!.exitCode! } : undefined;
  const died = await closeDeadSession(root, sessionId, async () => (await source.snapshot()).remaining.length, (dead) => redactor.deep(dead), ctx.now(), forced).catch((error: unknown) => `could not record the end of the session a dead run left: ${fileSystemError(error)?.message ?? errorMessage(error)}`);
  if (died && forced && !died.startsWith('could not')) ctx.info(died);
  else if (died) warn(died);
  // A forced exit ends the journal at once, with the work in the tree then: the next start puts the task
  // back as after a clean end, and what the user changes meanwhile stays theirs.
  const forcedEnd = (exitCode?: number): void => journal.closeNow(() => changedNow(root).filter((file) => !isRalphFile(file) && !(file in journal.userPaths)), exitCode);
  return { journal, guard, forcedEnd };
}
