// Claims that outlive their host (--remote, beads in server mode). A host killed with -9 leaves its beads
// in_progress under its workers' names (`ralph-<host>-wN`); nothing in bd ever frees them. So a host that
// holds a bead renews it every lease/3, and a claim of another host not renewed for a whole lease is taken
// over: put back to open and claimed again, by exactly one host.
//
// Only bd's own state is used. The renewal is `bd update ID --claim --actor ME --set-metadata
// ralph_renewed_at=<time>`: the claim part is bd's compare-and-set (beads 1.0.4+: it succeeds again for
// the holder of an in_progress bead, and fails for anyone else or a closed bead), and bd skips an
// issue's other updates when its claim fails, so the metadata write (which stamps updated_at, the time
// every `bd list` prints) happens only while this host still holds the bead. Metadata is bd's field for
// tools; no status, assignee, notes or description a person reads is touched.
//
// A takeover reopens the bead with the same guard, claiming as the dead holder (`--actor HOLDER`: bd's
// idempotent claim for the holder is the only compare-and-set bd offers, so bd's audit trail names the
// holder for that one write): if anyone renewed, took over or closed it meanwhile, the claim fails and
// the reopen is skipped. Then this host claims it as its own worker, atomically, and checks with `bd show`
// (claimForWorker). The two writes of the guarded reopen are two transactions in bd; a takeover that
// another finished inside that gap is caught by looking again after a short pause (TAKEOVER_SETTLE_MS).
//
// The lease line (beads' main since August 2026, 1.3.0) keeps leases itself: a claim carries
// `lease_expires_at` (5 minutes on), only `bd heartbeat ID` by the holder moves it (the metadata renewal
// does not), an expired claim stays in_progress and assigned (another actor's --claim is refused), and
// only `bd reclaim` frees it. There ralph renews with heartbeat, judges expiry by bd's lease, and takes a
// dead holder's bead over with `bd reclaim` scoped to that holder and that bead: one atomic write, so no pause.
import { ClaimLostError, errorMessage } from '../../errors.ts';
import type { Config } from '../../config/index.ts';
import type { Bd, BdIssue } from './bd.ts';
import { claimForWorker, parseActor, workerActor } from './workers.ts';
import type { Task } from '../types.ts';

/** How long a claim lives without renewal: 10 minutes unless config `lease` (ms) says otherwise. */
export const DEFAULT_LEASE_MS = 600_000;
/** The bd metadata key a renewal stamps (bd keys: letters, digits, `_` and `.`). */
export const RENEWED_KEY = 'ralph_renewed_at';
/** The pause before a host that took a bead over looks again (see the top of this file). */
export const TAKEOVER_SETTLE_MS = 2000;

export function leaseOf(config: Config): number {
  const lease = config.extra.get('lease');
  return typeof lease === 'number' && lease > 0 ? lease : DEFAULT_LEASE_MS;
}

/**
 * A claim this host may take over: in_progress under another host's ralph worker, and not written for
 * longer than the lease. Claims without a host (a run without --remote) or of a person are never taken.
 */
export function expiredClaim(issue: BdIssue, host: string, now: number, lease: number): boolean {
  if (issue.status !== 'in_progress') return false;
  const holder = parseActor(issue.assignee);
  if (holder?.host === undefined || holder.host === host) return false;
  // bd's own lease, where it keeps one: the holder stopped renewing it by heartbeat.
  if (issue.lease_expires_at) return now > Date.parse(issue.lease_expires_at);
  const written = Date.parse(issue.updated_at ?? '');
  return Number.isFinite(written) && now - written > lease;
}

/** `bd update` arguments that do `edits` only while `actor` may claim `id` (see the top of this file). */
function guarded(id: string, actor: string, edits: string[]): string[] {
  return ['update', id, '--claim', '--actor', actor, ...edits];
}

/** What a renewal found: still held, done (closed), or held by someone else now. */
export type Renewal = { kind: 'held' } | { kind: 'closed' } | { kind: 'lost'; holder: string; status: string };

/**
 * Renews `actor`'s claim of `id`, only while `actor` holds it: by `bd heartbeat` where bd keeps leases
 * (`heartbeat`), else by stamping updated_at through bd's metadata.
 */
export async function renewClaim(bd: Bd, id: string, actor: string, now: number, heartbeat = false): Promise<Renewal> {
  let issue: BdIssue | undefined;
  if (heartbeat) {
    const beat = await bd.command(['heartbeat', id, '--actor', actor]);
    if (beat.ok) return { kind: 'held' };
    issue = await bd.show(id);
  } else {
    const done = await bd.attempt(guarded(id, actor, ['--set-metadata', `${RENEWED_KEY}=${new Date(now).toISOString()}`]));
    issue = done.ok ? done.issues.find((item) => item.id === id) : await bd.show(id);
  }
  if (issue?.status === 'in_progress' && issue.assignee === actor) return { kind: 'held' };
  if (issue?.status === 'closed') return { kind: 'closed' };
  return { kind: 'lost', holder: issue?.assignee || 'nobody', status: issue ? issue.status : 'deleted' };
}

/** The `bd update` arguments of releaseClaim(). */
export const releaseArgs = (id: string, holder: string): string[] => guarded(id, holder, ['--status', 'open', '--assignee', '']);

/** Puts `issue` back to open, unassigned, only if `holder` still holds it; whether it did. */
export async function releaseClaim(bd: Bd, issue: BdIssue, holder: string): Promise<boolean> {
  return (await bd.attempt(releaseArgs(issue.id, holder))).ok;
}

export interface Takeover {
  /** The claim's holder as the ready list saw it. */
  holder: string;
  worker: number;
  host: string;
  lease: number;
  now(): number;
  /** Waits TAKEOVER_SETTLE_MS. */
  settle(): Promise<void>;
  /** bd has `bd reclaim` (the lease line): the takeover is one reclaim of that bead from that holder. */
  reclaim?: boolean;
}

/**
 * Takes `task`, an expired claim, for this host's worker; throws ClaimLostError when the holder renewed
 * it since the list was read, or another host got it first.
 */
export async function takeOver(bd: Bd, task: Task, { holder, worker, host, lease, now, settle, reclaim }: Takeover): Promise<void> {
  const actor = workerActor(worker, host);
  const seen = await bd.show(task.id);
  if (!seen) throw new ClaimLostError(`${task.id} no longer exists in beads`);
  // A retry of this iteration: the bead is already this worker's.
  if (seen.status === 'in_progress' && seen.assignee === actor) return;
  if (seen.assignee !== holder || !expiredClaim(seen, host, now(), lease)) {
    throw new ClaimLostError(`${task.id} is no longer ${holder}'s expired claim (now ${seen.status}${seen.assignee ? `, ${seen.assignee}` : ''}, written ${seen.updated_at ?? 'at an unknown time'}) before worker ${worker} could take it over`);
  }
  if (reclaim) {
    // Scoped to that bead and that holder: a live claim of anyone, or this bead in other hands, is left alone.
    const freed = await bd.command(['reclaim', '--id', task.id, '--assignee', holder, '--older-than', '0s']);
    if (!freed.ok) throw new ClaimLostError(`could not reclaim ${task.id} from ${holder}: ${freed.error}`);
  } else {
    await releaseClaim(bd, seen, holder);
  }
  // Whether the release was this host's or another's, only one claim of the open bead succeeds.
  await claimForWorker(bd, task, worker, host);
  if (!reclaim) await settle();
  const after = await bd.show(task.id).catch((error: unknown) => {
    throw new ClaimLostError(`could not check the takeover of ${task.id}: ${errorMessage(error)}`);
  });
  if (after?.status !== 'in_progress' || after.assignee !== actor) {
    throw new ClaimLostError(`${task.id} was taken over by ${after?.assignee || 'someone else'} at the same time as worker ${worker}`);
  }
}
