// Recovery: the one step that finds and settles what a run that died left behind, after the lock is taken
// and before the loop's first decision. It is the only code that reasons about "a run died here": the
// agents it left running, the iterations it had under way (./journal.ts: the last durable step of each),
// the uncommitted paths that were its work and not the user's, the tasks its source still shows in an
// iteration, the workers' worktrees. It returns what it settled as data; --dry-run prints the same list
// from planRecovery() without acting.
import { statSync } from 'node:fs';
import path from 'node:path';
import { listPaths, type CommitGuard } from '../repo/commit-set.ts';
import { isRalphFile } from '../repo/paths.ts';
import type { GateResult } from '../gates.ts';
import type { Git } from '../repo/git.ts';
import type { Committed } from '../iteration/workspace.ts';
import { matchesAny } from '../repo/paths.ts';
import type { IterationInfo, IterationResult, Task, TaskSource } from '../sources/types.ts';
import { reached } from './crash-points.ts';
import { removeDeadGitLocks, removeDeadSocketDirs, removeDeadTemps } from './leftover-locks.ts';
import { forcedByUser, hashPath, Journal, readJournal, stepAtLeast, type InFlight, type JournalData } from './journal.ts';

/** One thing recovery settled (or, in a dry run, would settle), as one line. */
export interface Settled {
  kind: 'agent' | 'iteration' | 'task' | 'worktree' | 'leftovers';
  message: string;
  /** Said as news, not as a warning: what a run forced to exit (a second Ctrl+C) left, as it was meant to. */
  quiet?: boolean;
}

/** Which uncommitted paths are the user's, told apart from a dead run's work by that run's journal. */
export interface Evidence {
  previous?: JournalData;
  /** The user's own uncommitted paths: ralph's commits leave them out. */
  userPaths: string[];
  /** Uncommitted paths the run that died left (its agents' work, not the user's): they go with the task's work. */
  leftovers: string[];
  /** Of the user's paths, those changed after the dead run's agents had ended (see AgentsEnd). */
  later?: string[];
}

/**
 * When the agents a killed run left ended (lib/process/agent-pid.ts, ns since the epoch) against when each
 * path last changed: its ctime, which the kernel sets from the same clock at each change and nobody sets back
 * (`touch -d`, `tar x` and `cp -p` set the mtime), so the agent's last change is never later than its end.
 */
export interface AgentsEnd {
  endedNs: bigint;
  /** The path's ctime (a deleted path: its nearest folder's, which its deletion changed), or undefined: unknown. */
  changedNs: (file: string) => bigint | undefined;
}

/** A path's ctime in ns, or for a path that is gone, its nearest existing folder's. */
export function changedNs(root: string, file: string): bigint | undefined {
  for (let at = file; ; at = path.dirname(at)) {
    try {
      return statSync(path.join(root, at), { bigint: true }).ctimeNs;
    } catch {
      if (at === '.' || at === path.dirname(at)) return undefined;
    }
  }
}

/** Reads the evidence a dead run left against the work tree now (pure but for the reads). */
export async function readEvidence(root: string, git: Git, stateFiles: readonly string[], endedNs?: bigint, changedNow?: readonly string[]): Promise<Evidence> {
  const previous = readJournal(root);
  const changed = (changedNow ?? (await git.state()).changed).filter((file) => !isRalphFile(file));
  const end = endedNs === undefined ? undefined : { endedNs, changedNs: (file: string) => changedNs(root, file) };
  return splitChanged(changed, previous, stateFiles, (file) => hashPath(root, file), end);
}

/**
 * The split itself: a path the dead run's journal names as the user's stays theirs. A run that died (no end
 * recorded) may have an agent that wrote on after it: any other path is its work, but one changed after
 * its agents had ended (`end`, when that is known): that is the user's, since. A run that ended through its
 * door recorded its work then: only those paths, with the content they had, are its work; the rest changed
 * since, the user's.
 */
export function splitChanged(changed: readonly string[], previous: JournalData | undefined, stateFiles: readonly string[], hash: (file: string) => string | null = () => null, end?: AgentsEnd): Evidence {
  if (!previous) return { userPaths: [...changed], leftovers: [] };
  const theirs = new Set(Object.keys(previous.userPaths));
  const ended = previous.ended?.work;
  // A tie goes to the agent: its last change is at or before its end on the same clock; a person is later.
  const isLater = (file: string): boolean => ended === undefined && end !== undefined && (end.changedNs(file) ?? end.endedNs) > end.endedNs;
  const later = changed.filter((file) => !theirs.has(file) && !matchesAny(file, stateFiles) && isLater(file));
  const runs = (file: string): boolean => (ended === undefined ? !later.includes(file) : file in ended && ended[file] === hash(file));
  return {
    previous,
    // The task state aside: ralph commits it with the task state (unless it was the user's before).
    userPaths: changed.filter((file) => theirs.has(file) || (!matchesAny(file, stateFiles) && !runs(file))),
    leftovers: changed.filter((file) => !theirs.has(file) && !matchesAny(file, stateFiles) && runs(file)),
    ...(later.length > 0 ? { later } : {}),
  };
}

export interface RecoveryContext {
  root: string;
  sessionId: string;
  git: Git;
  source: TaskSource;
  maxIterations: number;
  /** Ends the agent groups a killed run left running, and says when its agents ended (lib/process/agent-pid.ts). */
  stopOrphans: () => Promise<{ message?: string; endedNs?: bigint }>;
  /** The guard of this run's commits, made once the user's paths are known. */
  makeGuard: (userPaths: readonly string[]) => CommitGuard;
  /** The run's gates, in the repository. */
  gates?: (iteration: number, cwd: string) => Promise<GateResult[]>;
  /** ralph's commit of a passing task (commits on, one worker). */
  commit?: (guard: CommitGuard, task: Task, iteration: number) => Promise<Committed>;
  /** Amends the source's state files into HEAD (a landing's last step); `iteration`: its trailer's new number. */
  amendState?: (guard: CommitGuard, iteration?: number) => Promise<Committed>;
  /**
   * --remote: a bead another host closed may have landed on the remote, not yet here; a worker's task that
   * shows done is never reopened then (the landing's own recovery replays what this clone had merged).
   */
  remote?: boolean;
  /** Keeps and removes the workers' worktrees and branches a killed run left (`who`: that run, as the messages name it). */
  sweep: (guard: CommitGuard, who?: string) => Promise<string[]>;
  /** Said between the steps: the start's notes about the user's paths. */
  notes?: (evidence: Evidence) => void;
}

export interface Recovery {
  settled: Settled[];
  guard: CommitGuard;
  journal: Journal;
  evidence: Evidence;
}

/** Everything a dead run left, settled in order; returns what was settled, the run's guard and its journal. */
export async function recoverRun(ctx: RecoveryContext): Promise<Recovery> {
  const settled: Settled[] = [];
  // An agent still running would go on editing the tree: stopped before anything is read.
  const orphans = await ctx.stopOrphans();
  if (orphans.message) settled.push({ kind: 'agent', message: orphans.message });
  // What a process killed mid-write leaves: git's lock files (git refuses to work past them), ralph's temp files.
  const locks = await removeDeadGitLocks(ctx.git);
  if (locks.length > 0) settled.push({ kind: 'leftovers', message: `removed the lock files a git killed mid-command left (${listPaths(locks)}): no process holds them` });
  removeDeadSocketDirs();
  const changed = (await ctx.git.state()).changed;
  const temps = removeDeadTemps(ctx.root, changed);
  if (temps.length > 0) settled.push({ kind: 'leftovers', message: `removed the half-written temp files a killed run left (${listPaths(temps)})` });
  const stateFiles = ctx.source.workers.stateFiles();
  // The tree as read just now, unless temp files went since.
  const evidence = await readEvidence(ctx.root, ctx.git, stateFiles, orphans.endedNs, temps.length === 0 ? changed : undefined);
  const guard = ctx.makeGuard(evidence.userPaths);
  ctx.notes?.(evidence);
  const previous = evidence.previous;
  // This run's journal carries the user's paths (with their hash from the first run that saw them) and the
  // dead run's unsettled iterations, so a crash during recovery loses nothing either.
  const userPaths: Record<string, string | null> = {};
  for (const file of evidence.userPaths) userPaths[file] = previous?.userPaths[file] !== undefined ? previous.userPaths[file]! : hashPath(ctx.root, file);
  const journal = new Journal(ctx.root, { session: ctx.sessionId, pid: process.pid, startedAt: new Date().toISOString(), userPaths, inflight: previous?.inflight ?? [] });
  journal.listen();
  const changedMeanwhile = evidence.userPaths.filter((file) => previous?.userPaths[file] !== undefined && hashPath(ctx.root, file) !== previous.userPaths[file]);
  if (changedMeanwhile.length > 0) settled.push({ kind: 'leftovers', message: `yours from before the run and changed since it began (${listPaths(changedMeanwhile)}): still yours, left out of ralph's commits` });
  if (evidence.later) settled.push({ kind: 'leftovers', message: `changed after the agent of the run that died had ended (${count(evidence.later)}: ${listPaths(evidence.later)}): yours, left out of ralph's commits` });
  // A run forced to exit (a second Ctrl+C) wrote its end at once: what it left is what the user chose to stop.
  const forced = forcedByUser(previous?.ended);
  if (evidence.leftovers.length > 0) {
    const who = forced ? 'the run forced to exit (a second Ctrl+C)' : 'the run that died';
    settled.push({ kind: 'leftovers', message: `uncommitted work ${who} left (${count(evidence.leftovers)}: ${listPaths(evidence.leftovers)}) is its agents' work, not yours: it goes with its task's work`, quiet: forced });
  }
  // The workers' worktrees first: what they hold unmerged goes to a kept branch, judged against the branch
  // as the dead run left it (a landing completed below amends its commit).
  // A forced exit leaves its workers' worktrees as it leaves its task: said as news, like the rest of it.
  for (const message of await ctx.sweep(guard, forced ? 'the run forced to exit (a second Ctrl+C)' : undefined)) settled.push({ kind: 'worktree', message, quiet: forced });
  for (const entry of [...journal.inflight]) {
    const message = entry.worker === undefined ? await settleInFlight(ctx, guard, journal, entry, evidence.leftovers) : await settleLanding(ctx, guard, journal, entry);
    if (message) settled.push({ kind: 'iteration', message });
  }
  for (const message of await ctx.source.recover()) settled.push({ kind: 'task', message, quiet: forced });
  return { settled, guard, journal, evidence };
}

const count = (paths: readonly string[]): string => (paths.length === 1 ? '1 path' : `${paths.length} paths`);

/**
 * The tasks the source shows done now, the dead run's agents stopped: read as after an agent run (`progress`:
 * what it finished, current), never from what the start read before it held the lock (its preflight, while an
 * orphaned agent may still have been closing its bead: beads would reuse that list when `bd ready` agrees).
 */
async function finished(source: TaskSource): Promise<Task[]> {
  return (await source.snapshot('progress')).done;
}

/** The commit at HEAD when it is ralph's commit of this iteration (the run died after committing it). */
async function landedAt(git: Git, entry: InFlight): Promise<string | undefined> {
  const head = await git.head();
  if (!head || head === entry.head) return undefined;
  const body = await git.raw(['log', '-1', '--format=%B', head]).catch(() => '');
  const task = /^Ralph-Task: (.+)$/m.exec(body)?.[1]?.trim();
  const iteration = /^Ralph-Iteration: (\d+)$/m.exec(body)?.[1];
  return task === entry.taskId && Number(iteration) === entry.iteration ? head : undefined;
}

/** Whether a commit of this iteration (its trailers) is on the branch since the iteration began. */
export async function mergedSince(git: Git, entry: InFlight): Promise<boolean> {
  const bodies = await git.raw(['log', '-n', '200', '--format=%B%x00', entry.head ? `${entry.head}..HEAD` : 'HEAD']).catch(() => '');
  return bodies.split('\0').some((body) => /^Ralph-Task: (.+)$/m.exec(body)?.[1]?.trim() === entry.taskId && Number(/^Ralph-Iteration: (\d+)$/m.exec(body)?.[1]) === entry.iteration);
}

/**
 * One iteration the dead run had under way, by the last step it completed. Committed: nothing to do.
 * Recorded as passed, not committed: committed now. Not yet judged while the source shows its task done (the
 * agent finished it, alone or as an orphan after ralph died): judged now, as the run would have, by the
 * gates, then recorded and committed, or recorded as failed and the task reopened; its work stays in the
 * tree for the next attempt. Not done: the source puts the task back (below, source.recover()).
 */
async function settleInFlight(ctx: RecoveryContext, guard: CommitGuard, journal: Journal, entry: InFlight, leftovers: readonly string[]): Promise<string | undefined> {
  const label = `iteration ${entry.iteration} (${entry.taskId})`;
  const landed = await landedAt(ctx.git, entry);
  if (landed) {
    journal.end(entry.iteration);
    return `${label} had landed in ${landed.slice(0, 12)} when the run died: nothing to redo`;
  }
  const task: Task = { id: entry.taskId, title: entry.title, status: 'in_iteration' };
  const info: IterationInfo = { iteration: entry.iteration, maxIterations: ctx.maxIterations, sessionId: entry.session };
  // The source's record written, the journal not told yet (a kill in between): as if it had been.
  const shown = (await finished(ctx.source)).find((item) => item.id === entry.taskId);
  if (!stepAtLeast(entry.step, 'state_written') && (await ctx.source.recorded?.(entry.iteration, entry.taskId))) {
    entry = { ...entry, step: 'state_written', ...(shown ? { outcome: 'pass' } : {}) };
  }
  if (stepAtLeast(entry.step, 'state_written')) {
    if (entry.outcome === 'pass' && ctx.commit) {
      const made = await ctx.commit(guard, task, entry.iteration);
      if (made.commit) reached('work_committed', { iteration: entry.iteration, commit: made.commit });
      journal.end(entry.iteration);
      return `${label} was recorded as passed but not committed when the run died: ${made.commit ? `committed now as ${made.commit.slice(0, 12)}` : 'nothing left to commit'}`;
    }
    journal.end(entry.iteration);
    return undefined;
  }
  if (!shown) {
    journal.end(entry.iteration);
    return undefined;
  }
  const gates = ctx.gates ? await ctx.gates(entry.iteration, ctx.root) : [];
  reached('gates_run', { iteration: entry.iteration });
  const failed = gates.filter((gate) => !gate.passed).map((gate) => gate.name);
  const where = leftovers.length > 0 ? ` (${count(leftovers)}: ${listPaths(leftovers)})` : '';
  const reason = failed.length === 0 ? `adopted after a crash: the run died while ${entry.taskId} was in iteration ${entry.iteration}; the task showed done and its work${where} ${gates.length > 0 ? 'passed the gates' : 'was in the tree (no gates configured)'}` : `after a crash: ${entry.taskId} showed done, but the work the dead run left failed the gates (${failed.join(', ')})`;
  const result: IterationResult = { iteration: entry.iteration, task: shown, kind: failed.length === 0 ? 'pass' : 'fail', reason, tasksDone: failed.length === 0 ? [entry.taskId] : [], filesChanged: [...leftovers], claimedComplete: false, agentText: '', durationMs: 0, gates };
  if (result.kind === 'fail') await ctx.source.reopen(shown, reason, info);
  await ctx.source.settle?.(result, info);
  reached('state_written', { iteration: entry.iteration, outcome: result.kind });
  let made: Committed | undefined;
  if (result.kind === 'pass' && ctx.commit) {
    made = await ctx.commit(guard, shown, entry.iteration);
    if (made.commit) reached('work_committed', { iteration: entry.iteration, commit: made.commit });
  }
  journal.end(entry.iteration);
  return result.kind === 'pass'
    ? `${label}: the run died before judging it; ${entry.taskId} showed done, so its work${where} was judged now: ${gates.length > 0 ? 'the gates passed' : 'no gates'}; adopted${made?.commit ? ` and committed as ${made.commit.slice(0, 12)}` : ''}`
    : `${label}: the run died before judging it; ${entry.taskId} showed done but its work failed the gates (${failed.join(', ')}): reopened, and the work stays in the tree for its next attempt`;
}

/**
 * A worker's iteration: before its work was merged, the sweep kept what its worktree held and the source puts
 * the task back. Merged into the branch (its commit at HEAD) but not recorded: recorded now, the state amended
 * into that commit, as the landing would have. Recorded: the state amended, if that was still to do.
 */
async function settleLanding(ctx: RecoveryContext, guard: CommitGuard, journal: Journal, entry: InFlight): Promise<string | undefined> {
  // HEAD carrying the iteration's trailers is the proof it was merged, whatever step the journal had
  // learned (a kill between the fast-forward and the journal's write leaves it a step behind).
  const landed = await landedAt(ctx.git, entry);
  const label = `iteration ${entry.iteration} (${entry.taskId}, worker ${entry.worker})`;
  if (!landed) {
    // Not merged (at HEAD or since the iteration began), yet done where every worktree sees it (beads: the
    // agent closed its bead): done again.
    const shown = ctx.source.redo && !ctx.remote && !(await mergedSince(ctx.git, entry)) ? (await finished(ctx.source)).find((item) => item.id === entry.taskId) : undefined;
    if (shown) await ctx.source.redo!(shown);
    journal.end(entry.iteration);
    return shown ? `${label}: ${entry.taskId} showed done, but the run died before its work reached the branch: reopened, to be done again (whatever its worktree held went to a ralph-kept branch, above)` : undefined;
  }
  if (!ctx.amendState) {
    journal.end(entry.iteration);
    return undefined;
  }
  const recorded = entry.step === 'state_written' || (await ctx.source.recorded?.(entry.iteration, entry.taskId)) === true;
  let number = entry.iteration;
  if (!recorded) {
    // --remote: this head holds the records other hosts landed before the merge, numbered on their own: one
    // may hold this number. The record takes the next free one, as the landing would have (landing/state.ts).
    const last = ctx.remote ? ((await ctx.source.lastIteration?.()) ?? 0) : 0;
    if (last >= number) number = last + 1;
    const task: Task = { id: entry.taskId, title: entry.title, status: 'in_iteration' };
    const info: IterationInfo = { iteration: number, maxIterations: ctx.maxIterations, sessionId: entry.session, worker: entry.worker };
    await ctx.source.workers.markDone([entry.taskId]);
    const reason = `merged as ${landed.slice(0, 12)} before the run died; recorded after the crash`;
    // The record names the work that commit holds, as the landing would have (the state files aside).
    const stateFiles = ctx.source.workers.stateFiles();
    const filesChanged = (await ctx.git.raw(['diff-tree', '--no-commit-id', '--name-only', '-r', '--root', landed]).catch(() => '')).split('\n').filter((file) => file && !matchesAny(file, stateFiles));
    await ctx.source.settle?.({ iteration: number, task, kind: 'pass', reason, tasksDone: [entry.taskId], filesChanged, claimedComplete: false, agentText: '', durationMs: 0, gates: [] }, info);
  }
  const made = await ctx.amendState(guard, number !== entry.iteration ? number : undefined);
  reached('state_written', { iteration: entry.iteration, outcome: 'pass' });
  journal.end(entry.iteration);
  return !recorded
    ? `${label} had been merged into the branch (${landed.slice(0, 12)}) when the run died: recorded now, its state ${made.commit ? 'amended into that commit' : 'already there'}`
    : `${label} had landed when the run died: ${made.commit ? 'its state amended into its commit' : 'nothing left to do'}`;
}
