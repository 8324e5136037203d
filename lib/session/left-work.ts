// Work an iteration left in the tree when the run ended before its verdict (Ctrl+C, a stop, a usage limit
// past --max-wait, the output closed). It stays where the agent left it (ralph throws no work away), and
// it is not the user's: the next start would otherwise note it as "uncommitted changes from before the
// run" and leave it out of every commit, so the task ran again without its work ever being committed.
// `.ralph/left-work.json` names those paths until a commit of ralph's takes them.
import { iterationEnded } from '../recovery/crash-points.ts';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../repo/fs-atomic.ts';
import { PRIVATE_FILE } from '../repo/private-files.ts';
import { listPaths, type CommitGuard } from '../repo/commit-set.ts';
import { isRalphFile, matchesAny } from '../repo/paths.ts';
import { errorMessage } from '../errors.ts';
import type { EventBus } from '../events.ts';
import type { Git } from '../repo/git.ts';
import type { IterationInfo, Task, TaskSource } from '../sources/types.ts';

export interface LeftWork {
  taskId: string;
  iteration: number;
  paths: string[];
}

const fileOf = (root: string): string => path.join(root, '.ralph', 'left-work.json');

function read(root: string): LeftWork[] {
  try {
    const data = JSON.parse(readFileSync(fileOf(root), 'utf8')) as { left?: unknown };
    return Array.isArray(data.left) ? data.left.filter((item): item is LeftWork => typeof item?.taskId === 'string' && Number.isInteger(item.iteration) && Array.isArray(item.paths)) : [];
  } catch {
    return [];
  }
}

function write(root: string, left: LeftWork[]): void {
  if (left.length === 0) rmSync(fileOf(root), { force: true });
  else writeFileAtomic(fileOf(root), `${JSON.stringify({ left }, null, 2)}\n`, { mode: PRIVATE_FILE });
}

/**
 * What the iteration left: the tree's changed paths, minus the user's own from before the run, the
 * source's state files and ralph's files. Pure.
 */
export function leftPaths(changed: readonly string[], userPaths: ReadonlySet<string>, stateFiles: readonly string[]): string[] {
  return changed.filter((file) => !userPaths.has(file) && !isRalphFile(file) && !matchesAny(file, stateFiles)).sort();
}

/** Records the paths an unfinished iteration left (nothing when it left none). */
export function recordLeftWork(root: string, entry: LeftWork): void {
  if (entry.paths.length === 0) return;
  write(root, [...read(root).filter((item) => item.iteration !== entry.iteration), entry]);
}

/**
 * At a start, once the lock is held: the recorded paths that are still uncommitted (not the user's), and
 * one line saying so. Paths a commit took since are forgotten.
 */
export function takeLeftWork(root: string, changed: readonly string[], ralphCommits = true): { paths: Set<string>; notes: string[] } {
  const now = new Set(changed);
  const left = read(root).map((item) => ({ ...item, paths: item.paths.filter((file) => now.has(file)) })).filter((item) => item.paths.length > 0);
  write(root, left);
  const notes = left.map((item) => `uncommitted work of iteration ${item.iteration} on ${item.taskId}, which did not finish (${item.paths.length === 1 ? '1 path' : `${item.paths.length} paths`}: ${listPaths(item.paths)}), is ralph's, not yours: ${item.taskId} runs again with it${ralphCommits ? ", and ralph's next commit takes it" : ''}`);
  return { paths: new Set(left.flatMap((item) => item.paths)), notes };
}

/**
 * An iteration ended without its verdict (a signal, a stop, a failure, the output closed): its task goes back
 * (source.abandon), and in the repository itself what its agent left is recorded as the task's. Never throws:
 * what cannot be put back now, the next start's recovery does.
 */
export async function abandonIteration(ctx: { root: string; source: TaskSource; bus: EventBus; git: Git; guard?: CommitGuard; inPlace: boolean }, task: Task, info: IterationInfo, error: unknown): Promise<void> {
  try {
    const said = await ctx.source.abandon?.(task, info, errorMessage(error).split('\n')[0] || 'failed');
    if (said) ctx.bus.emit({ type: 'info', message: said });
    // A worker's leftovers are kept on a ralph-kept/ branch instead (worker.ts).
    if (ctx.inPlace && ctx.guard) recordLeftWork(ctx.root, { taskId: task.id, iteration: info.iteration, paths: leftPaths((await ctx.git.state()).changed, ctx.guard.userPaths, ctx.source.workers.stateFiles()) });
    // Settled here (its task back, its work on record): the run's journal no longer has it under way, so the
    // next start is a plain one, not recovery after a death.
    iterationEnded(info.iteration);
  } catch (failure) {
    ctx.bus.emit({ type: 'warning', message: `could not put ${task.id} back after iteration ${info.iteration}: ${errorMessage(failure)} (the next start does)` });
  }
}
