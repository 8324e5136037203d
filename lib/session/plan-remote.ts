// --dry-run --remote: the remote and the feature branch there, the claims other hosts hold now, and the
// first tasks this host would take. It only looks: `git ls-remote` for the branch, and a fetch of the claims
// into refs/ralph-view/ (a namespace no run reads, see lib/landing/view.ts); nothing is pushed or claimed.
import type { Deps } from '../deps.ts';
import { formatDuration } from '../duration.ts';
import { DEFAULT_LEASE_MS, DEFAULT_REMOTE_WAIT_MS } from '../landing/preflight.ts';
import type { RemoteTarget } from '../landing/types.ts';
import { claimLines, leftBehindText, leftByThisClone, liveClaims } from '../landing/view-text.ts';
import { readRemoteClaims, remoteBranchHead, type ClaimView, type RemoteView } from '../landing/view.ts';
import type { Prepared } from './prepare.ts';

/** What `--json` says of the remote in a dry run. */
export interface RemotePlan {
  name: string;
  branch: string;
  host: string;
  /** The branch's head on the remote; null when the remote has no such branch yet (or did not answer). */
  head: string | null;
  exists: boolean | null;
  /** `refs`: claimed with refs on the remote; `database`: the task source's shared database holds the claims. */
  claimsIn: RemoteTarget['claims'];
  claims: ClaimView[];
  /** The tasks this host would start first, up to --parallel. */
  first: Array<{ id: string; title: string }>;
  error?: string;
}

/**
 * The remote as it is now: the plan's lines, its JSON, the tasks live claims hold (not to be shown as
 * first) and, when `lockFree` (no run of this clone lives), what recovery would do there: release the claims
 * a dead run of this clone left (`recover`; those tasks are free for the run).
 */
export async function lookAtRemote(prepared: Prepared, target: RemoteTarget, deps: Deps, lockFree = true): Promise<{ lines: string[]; plan: RemotePlan; held: Set<string>; recover: string[] }> {
  const { root, config } = prepared;
  const leaseMs = (config.extra.get('lease') as number | undefined) ?? DEFAULT_LEASE_MS;
  const waitMs = (config.extra.get('remote-wait') as number | undefined) ?? DEFAULT_REMOTE_WAIT_MS;
  const plan: RemotePlan = { name: target.name, branch: target.branch, host: target.host, head: null, exists: null, claimsIn: target.claims, claims: [], first: [] };
  const lines = [`remote: ${target.name}, shared branch ${target.branch}; this host is ${target.host} (${target.hostId}), lease ${formatDuration(leaseMs)}`];
  const branch = await remoteBranchHead({ root, deps, remote: target.name, branch: target.branch });
  if ('error' in branch) {
    plan.error = branch.error;
    lines.push(`  ${branch.error}: a real run waits for it up to ${formatDuration(waitMs)} (--remote-wait); the tasks below are as this clone sees them, without the claims`);
    return { lines, plan, held: new Set(), recover: [] };
  }
  plan.head = branch.head;
  plan.exists = branch.head !== null;
  const mine = await prepared.git.head();
  if (branch.head === null) lines.push(`  ${target.name} has no branch ${target.branch} yet: a real run creates it at this clone's HEAD`);
  else lines.push(`  ${target.name}/${target.branch} is at ${branch.head.slice(0, 12)}${branch.head === mine ? " (this clone's HEAD)" : `; this clone's HEAD is ${mine?.slice(0, 12) ?? 'none'}: a real run first brings the two together, so the tasks below may be behind`}`);
  if (target.claims === 'database') {
    lines.push(`  claims: in ${prepared.source.name}'s shared database, not as refs on ${target.name}`);
    return { lines, plan, held: new Set(), recover: [] };
  }
  const view = await readRemoteClaims({ root, deps, remote: target.name, branch: target.branch, leaseMs });
  plan.claims = view.claims;
  if (view.error) plan.error = view.error;
  lines.push(...claimLines(view, deps.now(), root).map((line) => `  ${line}`));
  return { lines, plan, ...claimsToRecover(view, root, target.host, lockFree) };
}

/**
 * The tasks live claims hold, and what recovery would do with the claims: those a dead run of this clone
 * left (this clone and host, while `lockFree`: no run of this clone lives) are released, their tasks free.
 */
export function claimsToRecover(view: RemoteView, clone: string, host: string, lockFree: boolean): { held: Set<string>; recover: string[] } {
  const held = liveClaims(view);
  const left = lockFree && !view.error ? leftByThisClone(view.claims, clone, host) : [];
  for (const task of left) held.delete(task);
  return { held, recover: left.length > 0 ? [`release ${leftBehindText(left)}`] : [] };
}
