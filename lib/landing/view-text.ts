// --remote in words, the same in `ralph status`, the dry run, the run's last lines and its report: the
// claims on the remote one line each, and who landed what.
import { formatDuration } from '../duration.ts';
import type { RemoteSummary } from '../events.ts';
import { formatClock } from '../progress/describe.ts';
import type { ClaimView, RemoteView } from './view.ts';

const ago = (ms: number): string => `${formatDuration(Math.max(0, ms))} ago`;

/**
 * `claims on origin/feat:` and a line per claim (task, host, since, last renewal, expired); `none`, or why
 * they could not be read, on the heading's line. `here`: this clone's folder, to tell its own claims apart.
 */
export function claimLines(view: RemoteView, now: number, here?: string): string[] {
  const heading = `claims on ${view.name}/${view.branch}:`;
  if (view.error) return [`${heading} cannot be read: ${view.error}`];
  if (view.claims.length === 0) return [`${heading} none`];
  return [heading, ...view.claims.map((claim) => `  ${claimLine(claim, now, here)}`)];
}

/** `T003 held by host2 (pid 4242, /home/ann/feat) since 12:03:04 (3m 05s ago), renewed 20.0s ago`. */
export function claimLine(claim: ClaimView, now: number, here?: string): string {
  const since = Date.parse(claim.since);
  const renewed = Date.parse(claim.renewedAt);
  const mine = here !== undefined && claim.clone === here ? ', this clone' : '';
  const state = claim.expired ? `; expired (not renewed for ${formatDuration(Math.max(0, now - renewed))}): another host may take it over` : '';
  return `${claim.task} held by ${claim.host} (pid ${claim.pid}, ${claim.clone}${mine}) since ${formatClock(since, now)} (${ago(now - since)}), renewed ${ago(now - renewed)}${state}`;
}

/**
 * The tasks whose claims a dead run of this clone left: claims naming this clone and host, read while no
 * run of this clone holds its lock. A run's join releases them (RemoteClaims.dropLeftBehind).
 */
export function leftByThisClone(claims: ReadonlyArray<Pick<ClaimView, 'task' | 'clone' | 'host'>>, clone: string, host: string): string[] {
  return claims.filter((claim) => claim.clone === clone && claim.host === host).map((claim) => claim.task);
}

/** `the claim a killed run of this clone left on US-001` (a run says `released …`, a dry run `release …`). */
export function leftBehindText(tasks: readonly string[]): string {
  return `the ${tasks.length === 1 ? 'claim' : 'claims'} a killed run of this clone left on ${tasks.join(', ')}`;
}

/** The tasks live claims hold: a host that looks now would not start them. */
export function liveClaims(view: RemoteView): Set<string> {
  return new Set(view.claims.filter((claim) => !claim.expired).map((claim) => claim.task));
}

/** `landed here 2 (T001, T004), by other hosts 3 on origin/feat`; `landed` are this host's tasks, when known. */
export function landedText(remote: RemoteSummary, landed: readonly string[] = []): string {
  const ids = landed.length > 0 ? ` (${landed.join(', ')})` : '';
  return `landed here ${remote.landedHere}${ids}, by other hosts ${remote.landedElsewhere} on ${remote.name}/${remote.branch}`;
}
