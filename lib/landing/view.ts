// What `ralph status`, `ralph serve` and the dry run show of the remote: the feature's claims there (who
// holds what, since when) and where its branch is. They read beside a run and never get in its way: the
// claims are fetched into a namespace of their own (refs/ralph-view/…), not the run's refs/ralph-seen/…,
// because a run decides on the claims its last fetch brought together with the branch (RemoteDock
// elsewhere()): a fresher set written there by a viewer would make a task landed in between look neither
// claimed nor done. Nothing is pushed, and every git command has a short timeout: a remote that does not
// answer is one line, not a hang.
import type { Deps } from '../deps.ts';
import { Git } from '../repo/git.ts';
import { claimsPrefix, isExpired, readClaimRefs, refPart } from './claims.ts';
import { mustWork, noAnswer, remoteGit } from './remote-git.ts';

/** Longest one look at the remote may take (the run's own commands wait much longer: they must not give up). */
export const VIEW_TIMEOUT_MS = 10_000;

/** A claim as people and `--json` see it. */
export interface ClaimView {
  task: string;
  host: string;
  /** The holder's clone (its folder on its host), run (session id) and process. */
  clone: string;
  run: string;
  pid: number;
  /** When it was claimed, and last renewed (ISO, the holder's clock). */
  since: string;
  renewedAt: string;
  /** Not renewed within the lease: another host may take the task over. */
  expired: boolean;
}

/** The feature's claims on the remote, or why they could not be read. */
export interface RemoteView {
  name: string;
  branch: string;
  claims: ClaimView[];
  /** One line: the remote does not answer, there is no remote of that name, … */
  error?: string;
}

export interface ViewOptions {
  /** The clone to read from (its git directory takes the fetched claims). */
  root: string;
  deps: Deps;
  remote: string;
  branch: string;
  /** The lease a claim lives unrenewed (--lease): what `expired` is measured against. */
  leaseMs: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Where a viewer keeps the claims it fetched: apart from the run's, see above. */
export function viewPrefix(remote: string, branch: string): string {
  return `refs/ralph-view/${refPart(remote)}/${refPart(branch)}/claims/`;
}

/** Fetches the feature's claims (nothing else) and reads them; never throws for the remote's sake. */
export async function readRemoteClaims(o: ViewOptions): Promise<RemoteView> {
  const view: RemoteView = { name: o.remote, branch: o.branch, claims: [] };
  const main = new Git(o.root);
  const missing = await missingRemote(main, o.remote);
  if (missing) return { ...view, error: missing };
  const seen = viewPrefix(o.remote, o.branch);
  const prefix = claimsPrefix(o.branch);
  const fetch = ['fetch', '--prune', '--no-tags', '--quiet', '--no-write-fetch-head', '--no-auto-maintenance', o.remote, `+${prefix}*:${seen}*`];
  const result = await remoteGit(o.deps, o.root, o.signal)(fetch, o.timeoutMs ?? VIEW_TIMEOUT_MS);
  const why = noAnswer(result);
  if (why) return { ...view, error: `${o.remote} does not answer (${why})` };
  try {
    mustWork(result, `git fetch ${o.remote} (the claims)`);
    const now = o.deps.now();
    const claims = await readClaimRefs(main, seen, prefix);
    view.claims = claims
      .map((claim) => ({ task: claim.task, host: claim.host, clone: claim.clone, run: claim.run, pid: claim.pid, since: iso(claim.since), renewedAt: iso(claim.renewedAt), expired: isExpired(claim, o.leaseMs, now) }))
      .sort((a, b) => a.since.localeCompare(b.since) || a.task.localeCompare(b.task));
    return view;
  } catch (error) {
    return { ...view, error: (error as Error).message };
  }
}

/** The feature branch on the remote: its head, null when the remote has no such branch; or why it is not known. */
export async function remoteBranchHead(o: Omit<ViewOptions, 'leaseMs'>): Promise<{ head: string | null } | { error: string }> {
  const missing = await missingRemote(new Git(o.root), o.remote);
  if (missing) return { error: missing };
  const ref = `refs/heads/${o.branch}`;
  const result = await remoteGit(o.deps, o.root, o.signal)(['ls-remote', '--heads', o.remote, ref], o.timeoutMs ?? VIEW_TIMEOUT_MS);
  const why = noAnswer(result);
  if (why) return { error: `${o.remote} does not answer (${why})` };
  try {
    const line = mustWork(result, `git ls-remote ${o.remote}`).split('\n').find((item) => item.endsWith(`\t${ref}`));
    return { head: line ? line.split('\t')[0]! : null };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** Said before any network: git's own message for a missing remote reads like a network failure. */
async function missingRemote(main: Git, name: string): Promise<string | undefined> {
  if ((await main.attempt(['remote', 'get-url', name])).ok) return undefined;
  return `this repository has no remote named ${name} (git remote -v lists them; git remote add ${name} URL)`;
}

function iso(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}
