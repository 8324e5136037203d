// What recovery would settle, for --dry-run: the same findings as recoverRun() (./index.ts), read without
// acting, each as a `would recover: …` line, and the tasks as the run will see them once it has recovered.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { listPaths } from '../repo/commit-set.ts';
import type { Git } from '../repo/git.ts';
import { recordedAgentsAlive, recordedAgentsEnd } from '../process/agent-pid.ts';
import type { Snapshot, TaskSource } from '../sources/types.ts';
import { mergedSince, readEvidence } from './index.ts';
import { forcedByUser, stepAtLeast, type InFlight } from './journal.ts';

export interface RecoveryPlan {
  /** One line per thing a real run would settle first. */
  lines: string[];
  /** The tasks once recovered, when recovery changes what is ready (else undefined: the source as it is). */
  snapshot?: Snapshot;
  /** The uncommitted paths the run will hold as the user's once recovered (a dead run's work is not theirs). */
  userPaths: string[];
}

/** Reads what a dead run left and says what a real run would do with it; changes nothing. */
export async function planRecovery(root: string, git: Git, source: TaskSource, remote = false): Promise<RecoveryPlan> {
  const lines: string[] = [];
  const agents = recordedAgentsAlive(root);
  if (agents.length > 0) lines.push(`stop ${agents.length === 1 ? 'the agent' : `${agents.length} agents`} (process group ${agents.join(', ')}) a killed run left running`);
  const evidence = await readEvidence(root, git, source.workers.stateFiles(), recordedAgentsEnd(root));
  if (evidence.later) lines.push(`${listPaths(evidence.later)}: changed after the agent of the run that died had ended: yours, left out of ralph's commits`);
  const who = forcedByUser(evidence.previous?.ended) ? 'the run forced to exit (a second Ctrl+C)' : 'the run that died';
  if (evidence.leftovers.length > 0) lines.push(`${listPaths(evidence.leftovers)}: the work of ${who}, not yours: it goes with its task's work`);
  const inflight = evidence.previous?.inflight ?? [];
  // The source is read only when there is something to judge (beads: each read is a bd process), as
  // recovery reads it: what is done now, not what the preflight read.
  const done = new Set(inflight.length > 0 ? (await source.snapshot('progress')).done.map((task) => task.id) : []);
  const redo: string[] = [];
  for (const entry of inflight) {
    const line = describeInFlight(entry, done.has(entry.taskId));
    if (line) lines.push(line);
    // A worker's task done where every worktree sees it, its work never merged: recoverRun() gives it to redo().
    if (entry.worker !== undefined && source.redo && !remote && done.has(entry.taskId) && !(await mergedSince(git, entry))) {
      redo.push(entry.taskId);
      lines.push(`iteration ${entry.iteration} (${entry.taskId}, worker ${entry.worker}): ${entry.taskId} shows done but its work never reached the branch: reopen it, to be done again`);
    }
  }
  const view = await source.afterRecovery?.(redo);
  if (view) lines.push(...view.messages);
  const worktrees = path.join(root, '.ralph', 'worktrees');
  const left = existsSync(worktrees) ? readdirSync(worktrees).filter((name) => /^w\d+$/.test(name)) : [];
  if (left.length > 0) lines.push(`keep what worktree${left.length === 1 ? '' : 's'} ${left.join(', ')} hold${left.length === 1 ? 's' : ''} unmerged on ralph-kept/… branches, then remove ${left.length === 1 ? 'it' : 'them'}`);
  return { lines, userPaths: evidence.userPaths, ...(view ? { snapshot: view.snapshot } : {}) };
}

/** What recovery does with one iteration a dead run had under way (by the last step it completed). */
function describeInFlight(entry: InFlight, showsDone: boolean): string | undefined {
  const label = `iteration ${entry.iteration} (${entry.taskId})`;
  if (entry.worker !== undefined) return undefined;
  if (stepAtLeast(entry.step, 'work_committed')) return undefined;
  if (stepAtLeast(entry.step, 'state_written')) return entry.outcome === 'pass' ? `${label}: recorded as passed, not committed: commit it (unless it landed before the run died)` : undefined;
  if (showsDone) return `${label}: ${entry.taskId} shows done but was never judged: run the gates on its work; passed: record and commit it; failed: reopen it`;
  return undefined;
}
