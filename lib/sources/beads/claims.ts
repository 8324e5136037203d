// ralph's own claims in bd, given back. A worker's bead carries the worker's actor as assignee (`ralph-w2`,
// with --remote `ralph-<host>-w2`); whatever ends a run (complete, a failure, the iteration limit, Ctrl+C),
// the beads it still holds go back to open, and a run that starts takes back what a dead run of this clone
// left. A claim is given back as its holder (`--actor`): the lease line (beads 1.3) refuses a change of an
// in_progress bead's status or assignee by anyone but its assignee, and every bd takes it from the holder.
import { errorMessage } from '../../errors.ts';
import { parseBdArray, type Bd, type BdIssue } from './bd.ts';
import { releaseArgs, releaseClaim } from './lease.ts';
import { parseActor } from './workers.ts';
import { openBlockers } from './state.ts';
import type { Snapshot, Task } from '../types.ts';

/** Whether `issue` is held by a worker of this run's kind: hostless on one machine, this host's with --remote. */
export function heldByRalph(issue: BdIssue, host: string | undefined): boolean {
  const actor = parseActor(issue.assignee);
  return issue.status === 'in_progress' && actor !== undefined && actor.host === host;
}

/**
 * Puts `issue` back to open, unassigned, as its holder. With --remote only while the holder still holds it
 * (bd's compare-and-set claim, beads-lease.ts); on one machine ralph holds the lock, so the bead is its own.
 * Returns bd's reason when it refused.
 */
export async function giveBack(bd: Bd, issue: BdIssue, remote: boolean): Promise<string | undefined> {
  const holder = issue.assignee!;
  if (remote) return (await releaseClaim(bd, issue, holder)) ? undefined : `${holder} no longer holds it`;
  const done = await bd.attempt(giveBackArgs(issue.id, holder));
  return done.ok ? undefined : done.error;
}

/** The `bd update` of giveBack() on one machine: open again, unassigned, as its holder. */
const giveBackArgs = (id: string, holder: string): string[] => ['update', id, '--status', 'open', '--assignee', '', '--actor', holder];

/**
 * A forced exit: of the beads this run's workers claimed (`held`: bead id → holder), those bd still shows
 * in_progress under that holder, each with the `bd update` that gives it back (as giveBack() would). Pure.
 */
export function releasesNow(held: ReadonlyMap<string, string>, shown: readonly BdIssue[], remote: boolean): string[][] {
  return shown.filter((issue) => issue.status === 'in_progress' && issue.assignee !== undefined && held.get(issue.id) === issue.assignee).map((issue) => (remote ? releaseArgs(issue.id, issue.assignee!) : giveBackArgs(issue.id, issue.assignee!)));
}

/**
 * A forced exit (a second Ctrl+C): the beads this run's workers hold, given back at once, synchronously:
 * `bd show` of them, then one `bd update` each still held, all within `timeoutMs` (`run` is bd, sync, with
 * --json, bounded). What bd does not answer in time stays claimed for the next start to take back.
 */
export function releaseHeldNow(run: (args: string[], timeoutMs: number) => string | undefined, held: ReadonlyMap<string, string>, remote: boolean, timeoutMs: number): void {
  if (held.size === 0) return;
  const deadline = Date.now() + timeoutMs;
  let shown: BdIssue[];
  try {
    shown = parseBdArray(run(['show', ...held.keys()], timeoutMs) ?? '', 'bd show');
  } catch {
    return;
  }
  for (const args of releasesNow(held, shown, remote)) {
    const left = deadline - Date.now();
    if (left <= 0) return;
    run(args, left);
  }
}

/**
 * What a run left in_progress (`reason` says which run), put back to open. On one machine every in_progress
 * bead is orphaned (this run holds the lock): a worker's as its holder, an agent's own claim as before; on a
 * database other clones share (`shared`), a --remote host's claim is that host's and left alone. With
 * --remote only this host's claims. Returns a warning per bead, and per bead bd would not give back.
 */
export async function putBackOrphans(bd: Bd, children: BdIssue[], host: string | undefined, reason: string, shared = false): Promise<string[]> {
  const warnings: string[] = [];
  for (const child of children.filter((issue) => isOrphan(issue, host, shared))) {
    const actor = parseActor(child.assignee);
    let refused: string | undefined;
    try {
      if (actor || host !== undefined) refused = await giveBack(bd, child, host !== undefined);
      else await bd.setStatus(child.id, 'open');
    } catch (error) {
      refused = errorMessage(error);
    }
    if (refused) {
      warnings.push(`${child.id} "${child.title}" was left in_progress by ${reason}${child.assignee ? ` (assignee ${child.assignee})` : ''} and could not be put back to open: ${refused}`);
      continue;
    }
    delete child.assignee;
    child.status = 'open';
    warnings.push(`${child.id} "${child.title}" was left in_progress by ${reason}; put back to open`);
  }
  return warnings;
}

/** Whether putBackOrphans() puts `issue` back: in_progress, and this run's to put back (see there). */
export function isOrphan(issue: BdIssue, host: string | undefined, shared: boolean): boolean {
  if (issue.status !== 'in_progress') return false;
  const actor = parseActor(issue.assignee);
  return host === undefined ? !(shared && actor?.host !== undefined) : actor?.host === host;
}

/** --dry-run: what putBackOrphans() would do with `issue`, as a `would recover:` line says it. */
export function describePutBack(issue: BdIssue): string {
  const what = `${issue.id} "${issue.title}"`;
  return parseActor(issue.assignee)
    ? `give back ${what}, claimed by ${issue.assignee} for a run of this clone that is gone: open again, unassigned`
    : `put ${what} back to open: an interrupted run left it in_progress${issue.assignee ? ` (assignee ${issue.assignee})` : ''}`;
}

/**
 * --dry-run: the snapshot as the run will see it once recovery put `back` to open: each in the remaining
 * tasks, and ready unless `shown` (bd show of them) names an open blocker; ready in bd ready's order, by
 * priority, then oldest first (`children`: the epic's children as listed, with when each was made).
 */
export function snapshotOnceBack(snapshot: Snapshot, back: readonly BdIssue[], shown: readonly BdIssue[], children: readonly BdIssue[]): Snapshot {
  const ids = new Set(back.map((issue) => issue.id));
  const blockers = openBlockers(shown);
  const tasks = back.map((issue): Task => ({ id: issue.id, title: issue.title, status: 'open', priority: issue.priority, meta: { type: issue.issue_type } }));
  const made = new Map(children.map((issue) => [issue.id, issue.created_at ?? '']));
  const byPriority = (a: Task, b: Task): number => (a.priority ?? 2) - (b.priority ?? 2) || (made.get(a.id) ?? '').localeCompare(made.get(b.id) ?? '');
  return {
    ...snapshot,
    ready: [...snapshot.ready.filter((task) => !ids.has(task.id)), ...tasks.filter((task) => (blockers.get(task.id) ?? []).length === 0)].sort(byPriority),
    remaining: [...snapshot.remaining.filter((task) => !ids.has(task.id)), ...tasks],
    done: snapshot.done.filter((task) => !ids.has(task.id)),
  };
}

/**
 * --dry-run, on the children check() listed: what recover() would give back or put back, and the snapshot
 * as it (and recovery's `redo` of closed beads) would leave it; bd is read, never written.
 */
export async function recoveryView(bd: Bd, children: readonly BdIssue[], scope: { host: string | undefined; shared: boolean; redo: readonly string[] }, snapshot: () => Promise<Snapshot>): Promise<{ messages: string[]; snapshot: Snapshot }> {
  const orphans = children.filter((issue) => isOrphan(issue, scope.host, scope.shared));
  const back = [...orphans, ...children.filter((issue) => scope.redo.includes(issue.id) && issue.status === 'closed')];
  const now = await snapshot();
  return { messages: orphans.map(describePutBack), snapshot: back.length === 0 ? now : snapshotOnceBack(now, back, await bd.showMany(back.map((issue) => issue.id)), children) };
}

/**
 * After a worker's iteration: its bead, when `actor` still holds it (not closed), given back. False when it
 * held nothing, '' when it gave the bead back, else bd's reason.
 */
export async function giveBackAfter(bd: Bd, children: BdIssue[], taskId: string | undefined, actor: string, remote: boolean): Promise<string | false> {
  const bead = children.find((issue) => issue.id === taskId);
  if (!bead || bead.status !== 'in_progress' || bead.assignee !== actor) return false;
  const refused = await giveBack(bd, bead, remote).catch((error: unknown) => errorMessage(error));
  if (refused) return refused;
  bead.status = 'open';
  delete bead.assignee;
  return '';
}

/** At the end of a run: every bead this run's workers still hold, given back; one line saying which. */
export async function releaseAtEnd(bd: Bd, children: BdIssue[], host: string | undefined): Promise<string[]> {
  const released: string[] = [];
  const messages: string[] = [];
  for (const child of children.filter((issue) => heldByRalph(issue, host))) {
    const holder = child.assignee!;
    const refused = await giveBack(bd, child, host !== undefined).catch((error: unknown) => errorMessage(error));
    if (refused) messages.push(`could not give back ${child.id}, claimed by ${holder}: ${refused}`);
    else {
      released.push(`${child.id} (${holder})`);
      child.status = 'open';
      delete child.assignee;
    }
  }
  if (released.length > 0) messages.unshift(`gave back ${released.length === 1 ? 'the bead' : `${released.length} beads`} this run still held in beads: ${released.join(', ')}; open again for the next run`);
  return messages;
}
