// A host that died while a landing was under way (kill -9, a machine gone) leaves its clone's branch with
// commits the remote lacks (the landing was committed here, its push never went out) while the other hosts
// moved the remote's branch on. Those commits are told apart from a user's own by ralph's trailers naming
// this host (state.ts trailers(): Ralph-Task and Ralph-Host on every commit of a landing), never guessed.
// They are replayed on the remote's head; the task state ralph records in them (the source's state files)
// merges where only ralph writes: a log both sides appended to keeps both, an iteration record whose number
// the other hosts used meanwhile takes the next free one, a task list both ticked keeps both ticks, a JSON
// record both wrote keeps each side's task as that side left it (merge-state.ts). Any other conflict: the commits are kept on a
// `ralph-kept/` branch, and the run goes on from the remote's head.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../errors.ts';
import type { Git } from '../repo/git.ts';
import { matchesAny } from '../repo/paths.ts';
import type { PushOutcome } from './push-outcome.ts';
import { entryNumbers, mergeRecord, mergeTicks, renumberEntries, type Renumbered } from './merge-state.ts';

/** One commit of this clone the remote lacks, with ralph's trailers as it carries them. */
export interface Unpushed {
  sha: string;
  subject: string;
  task: string;
  host: string;
  iteration: string;
}

const FIELD = '\x1f';
const RECORD = '\x1e';

/** The commits `head..mine`, oldest first. */
export async function unpushedCommits(main: Git, head: string, mine: string): Promise<Unpushed[]> {
  const format = ['%H', '%s', '%(trailers:key=Ralph-Task,valueonly,separator=%x2C)', '%(trailers:key=Ralph-Host,valueonly,separator=%x2C)', '%(trailers:key=Ralph-Iteration,valueonly,separator=%x2C)'].join('%x1f');
  const out = await main.raw(['log', '--reverse', `--format=${format}%x1e`, `${head}..${mine}`]);
  return parseUnpushed(out);
}

export function parseUnpushed(out: string): Unpushed[] {
  return out
    .split(RECORD)
    .map((record) => record.replace(/^\n+/, ''))
    .filter(Boolean)
    .map((record) => {
      const [sha = '', subject = '', task = '', host = '', iteration = ''] = record.split(FIELD);
      return { sha, subject, task: task.trim(), host: host.trim(), iteration: iteration.trim() };
    });
}

/** The tasks ralph's landings on `host` among `commits` hold (a user's own commits name none). */
export function tasksLanded(commits: readonly Unpushed[], host: string): string[] {
  return [...new Set(commits.filter((commit) => commit.task && !commit.task.includes(',') && commit.host === host).map((commit) => commit.task))];
}

/** The first of `commits` that is not ralph's landing on `host` (a user's own commit), if any. */
export function notRalphs(commits: readonly Unpushed[], host: string): Unpushed | undefined {
  return commits.find((commit) => !commit.task || commit.task.includes(',') || commit.host !== host);
}

export interface ResumeOptions {
  main: Git;
  remote: string;
  branch: string;
  /** This host's name, as its commits' Ralph-Host trailer says it; this run's id (the kept branch's name). */
  host: string;
  run: string;
  stateFiles: readonly string[];
  /** Fetches the remote's branch: its head. */
  fetch(): Promise<string>;
  /** Pushes `head` as the remote's branch (never forced). */
  push(head: string): Promise<PushOutcome>;
  /** Shares a kept branch with the other hosts: where it is, when it went anywhere. */
  share(branch: string): Promise<string | undefined>;
  /** Deletes the claims of `tasks` an earlier run of this clone left: the tasks whose claim went. */
  dropLeftBehind(tasks: string[]): Promise<string[]>;
}

/**
 * This clone's branch (`mine`) and the remote's (`head`) have each moved on: when every commit of this
 * clone's is ralph's landing on this host, they are replayed on the remote's head and pushed (again on a
 * newer head when another host lands meanwhile), or kept on a branch when they conflict. The head this
 * clone is at afterwards and what was done, in a line; undefined when they are not all ralph's.
 */
export async function resumeLanding(o: ResumeOptions, mine: string, head: string): Promise<{ head: string; message: string } | undefined> {
  const commits = await unpushedCommits(o.main, head, mine);
  if (commits.length === 0 || notRalphs(commits, o.host)) return undefined;
  const tasks = [...new Set(commits.map((commit) => commit.task))];
  const what = `this clone's ${commits.length === 1 ? 'commit' : `${commits.length} commits`} of ${tasks.join(', ')} that ${o.remote} lacks (a landing cut short)`;
  let at = head;
  for (let round = 1; ; round += 1) {
    const replayed = await replayUnpushed(o.main, commits, at, mine, o.stateFiles);
    if ('conflict' in replayed) {
      const kept = `ralph-kept/${o.run}/unpushed-${mine.slice(0, 12)}`;
      await o.main.raw(['branch', '-f', kept, mine]);
      await o.main.raw(['reset', '--keep', at]);
      const shared = await o.share(kept);
      const dropped = await o.dropLeftBehind(tasks);
      return { head: at, message: `${what} conflict with ${o.remote}/${o.branch} (${replayed.conflict.join(', ')}): kept on branch ${shared ?? kept}, and this clone moved to ${at.slice(0, 12)}; ${tasks.join(', ')} run again${released(dropped)}` };
    }
    const pushed = await o.push(replayed.head);
    if (pushed.kind === 'landed') {
      const dropped = await o.dropLeftBehind(tasks);
      return { head: replayed.head, message: `${what}: replayed on ${o.remote}/${o.branch} (${at.slice(0, 12)}) and pushed, up to ${replayed.head.slice(0, 12)}${released(dropped)}` };
    }
    await o.main.raw(['reset', '--keep', mine]);
    if (pushed.kind !== 'moved' || round >= 5) throw new RalphError(`could not push ${what} to ${o.remote}: ${pushed.why}; this clone is back at ${mine.slice(0, 12)}`);
    at = await o.fetch();
  }
}

/** What a message adds when the claims a killed run left were dropped. */
export const released = (tasks: readonly string[]): string => (tasks.length > 0 ? `; the claims the killed run left on ${tasks.join(', ')} released` : '');

export type Replayed = { head: string } | { conflict: string[] };

/**
 * Cherry-picks `commits` onto `onto` in the main worktree (HEAD moves; the user's uncommitted changes stay
 * unless they are in the way, then git refuses and so does this). Conflicts only in `stateFiles` that ralph
 * alone writes are settled as said above; otherwise the worktree goes back to `back` and the paths are returned.
 */
export async function replayUnpushed(main: Git, commits: readonly Unpushed[], onto: string, back: string, stateFiles: readonly string[]): Promise<Replayed> {
  await main.raw(['reset', '--keep', onto]);
  for (const commit of commits) {
    const pick = await main.attempt(['cherry-pick', '--allow-empty', '--keep-redundant-commits', commit.sha]);
    if (pick.ok) continue;
    const unmerged = (await main.raw(['diff', '--name-only', '--diff-filter=U'])).split('\n').filter(Boolean);
    const settled = unmerged.length > 0 && unmerged.every((file) => matchesAny(file, stateFiles)) ? await settleState(main, unmerged, commit) : undefined;
    if (settled) continue;
    await main.attempt(['cherry-pick', '--abort']);
    await main.raw(['reset', '--keep', back]);
    // The work's own paths name the conflict; the state files only when nothing else conflicts.
    const work = unmerged.filter((file) => !matchesAny(file, stateFiles));
    return { conflict: work.length > 0 ? work : unmerged.length > 0 ? unmerged : [pick.output.trim().split('\n')[0] ?? 'git cherry-pick failed'] };
  }
  return { head: (await main.head())! };
}

/**
 * Settles the conflicted state files of `commit`'s pick and commits it; false when one cannot be settled.
 * An iteration number the other hosts used meanwhile is taken once for the commit: by its iteration record
 * first (its name), else by its log entries; its JSON records and its trailer then say the same number.
 */
async function settleState(main: Git, files: readonly string[], commit: Unpushed): Promise<boolean> {
  let message = (await main.raw(['log', '-1', '--format=%B', commit.sha])).replace(/\n+$/, '\n');
  const staged = await Promise.all(files.map(async (file) => ({ file, stages: await Promise.all([1, 2, 3].map((stage) => main.attempt(['show', `:${stage}:${file}`]).then((shown) => (shown.ok ? shown.output : undefined)))) })));
  const from = Number(commit.iteration);
  let moved: number | undefined;
  const rest: typeof staged = [];
  for (const item of staged) {
    const [base, ours, theirs] = item.stages;
    // Added on both sides: an iteration record (named by its number) takes the next free number.
    const taken = base === undefined && ours !== undefined && theirs !== undefined ? await renumber(main, item.file, theirs, commit.iteration) : undefined;
    if (taken) moved = Number(taken);
    else rest.push(item);
  }
  // The logs before the JSON records: a log's entries may take a new number, which the records then say too.
  rest.sort((a, b) => Number(a.stages[1] !== undefined && isJson(a.stages[1])) - Number(b.stages[1] !== undefined && isJson(b.stages[1])));
  for (const { file, stages } of rest) {
    const [base, ours] = stages;
    let theirs = stages[2];
    // A log whose entries the other hosts numbered `from` too: this host's entries take the number free after theirs.
    const start = base ?? (ours !== undefined && theirs !== undefined ? sharedStart(ours, theirs) : undefined);
    if (commit.iteration && ours !== undefined && !isJson(ours) && theirs !== undefined && start !== undefined && theirs.startsWith(start)) {
      const numbers = entryNumbers(ours);
      moved ??= numbers.includes(from) ? Math.max(from, ...numbers) + 1 : undefined;
      if (moved !== undefined) theirs = start + renumberEntries(theirs.slice(start.length), { from, to: moved });
    }
    const merged = mergeStateFile(base, ours, theirs, commit.task, moved === undefined ? undefined : { from, to: moved });
    if (merged === undefined) return false;
    writeFileSync(path.join(main.cwd, file), merged);
    await main.raw(['add', '--', file]);
  }
  if (moved !== undefined) message = message.replace(new RegExp(`^Ralph-Iteration: ${commit.iteration}$`, 'm'), `Ralph-Iteration: ${moved}`);
  await main.raw(['commit', '--no-verify', '--allow-empty', '-m', message]);
  return true;
}

/**
 * A state file both sides changed, merged: a JSON record (each side's task as that side left it), a task
 * list whose boxes both ticked, a log both appended to (or both began: the other hosts' lines, then this
 * host's). Undefined when none of these fits.
 */
export function mergeStateFile(base: string | undefined, ours: string | undefined, theirs: string | undefined, task: string, renumbered?: Renumbered): string | undefined {
  if (ours === undefined || theirs === undefined) return undefined;
  // Before the log's rule: two records both began would read as one appended to the other.
  if (isJson(ours) && isJson(theirs)) return mergeRecord(base, ours, theirs, task, renumbered);
  return mergeTicks(base, ours, theirs) ?? appendedBoth(base ?? sharedStart(ours, theirs), ours, theirs);
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** The whole lines both texts begin with. */
export function sharedStart(a: string, b: string): string {
  let end = 0;
  for (let at = 0; at < Math.min(a.length, b.length) && a[at] === b[at]; at += 1) if (a[at] === '\n') end = at + 1;
  return a.slice(0, end);
}

/** Both sides only appended to `base`: the other hosts' lines, then this host's. */
export function appendedBoth(base: string | undefined, ours: string | undefined, theirs: string | undefined): string | undefined {
  if (base === undefined || ours === undefined || theirs === undefined) return undefined;
  if (!ours.startsWith(base) || !theirs.startsWith(base)) return undefined;
  const mine = theirs.slice(base.length);
  return `${ours}${ours.endsWith('\n') || ours === '' ? '' : '\n'}${mine}`;
}

/**
 * Both sides added `file`, an iteration record named by its number (`…-<N>.json`, N the commit's
 * Ralph-Iteration): the other hosts keep N, this host's record takes the next number free among its
 * siblings, in its name and its `iterationNumber`. Returns that number.
 */
async function renumber(main: Git, file: string, theirs: string, iteration: string): Promise<string | undefined> {
  const name = path.posix.basename(file);
  const at = iteration ? name.lastIndexOf(`-${iteration}.`) : -1;
  if (at < 0) return undefined;
  const [before, after] = [name.slice(0, at + 1), name.slice(at + 1 + iteration.length)];
  const dir = path.posix.dirname(file);
  const siblings = (await main.raw(['ls-files', '--', dir])).split('\n').filter(Boolean).map((item) => path.posix.basename(item));
  const numbers = siblings.filter((item) => item.startsWith(before) && item.endsWith(after)).map((item) => Number(item.slice(before.length, item.length - after.length))).filter(Number.isInteger);
  const next = String(Math.max(Number(iteration), ...numbers) + 1);
  const target = path.posix.join(dir, `${before}${next}${after}`);
  // The work tree holds conflict markers: the other hosts' record goes back as they wrote it.
  await main.raw(['checkout', '--ours', '--', file]);
  writeFileSync(path.join(main.cwd, target), theirs.replace(new RegExp(`("iterationNumber"\\s*:\\s*)${iteration}\\b`), `$1${next}`));
  await main.raw(['add', '--', file, target]);
  return next;
}
