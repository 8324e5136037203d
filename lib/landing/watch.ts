// Watching the remote cheaply: `git ls-remote` lists the feature branch and the claims in one round trip and
// sends no pack, where a fetch also negotiates, updates refs and starts git's auto-maintenance. A host that
// looks at the remote (before it picks a task, while it waits on other hosts' claims, after a claim) lists
// the refs first and fetches only when one it mirrors moved, appeared or went; a landing still fetches.
import type { Git } from '../repo/git.ts';

/** The refs ralph mirrors from the remote: the branch's head, and the claims by their ref on the remote. */
export interface RefsView {
  branch: string | undefined;
  claims: ReadonlyMap<string, string>;
}

/** `git ls-remote` output as a view of `branchRef` and of the refs under `claimsPrefix` (none: no claims). */
export function parseListed(stdout: string, branchRef: string, claimsPrefix?: string): RefsView {
  let branch: string | undefined;
  const claims = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const [sha, ref] = line.trim().split('\t');
    if (!sha || !ref) continue;
    // ls-remote matches its patterns against the end of a ref's name: only the exact ones count.
    if (ref === branchRef) branch = sha;
    else if (claimsPrefix && ref.startsWith(claimsPrefix)) claims.set(ref, sha);
  }
  return { branch, claims };
}

/** The refs whose sha differs between the remote and this clone's mirror of it: none means no fetch is needed. */
export function movedRefs(remote: RefsView, mirror: RefsView, branchRef: string): string[] {
  const moved: string[] = [];
  if (remote.branch !== mirror.branch) moved.push(branchRef);
  for (const [ref, sha] of remote.claims) if (mirror.claims.get(ref) !== sha) moved.push(ref);
  for (const ref of mirror.claims.keys()) if (!remote.claims.has(ref)) moved.push(ref);
  return moved;
}

/** This clone's mirror: its remote-tracking ref of the branch, and the claims under `seenPrefix` named as on the remote. */
export async function readMirror(main: Git, tracking: string, claims?: { seenPrefix: string; prefix: string }): Promise<RefsView> {
  const out = await main.raw(['for-each-ref', '--format=%(objectname)%09%(refname)', tracking, ...(claims ? [claims.seenPrefix] : [])]);
  let branch: string | undefined;
  const mirrored = new Map<string, string>();
  for (const line of out.split('\n')) {
    const [sha, ref] = line.split('\t');
    if (!sha || !ref) continue;
    if (ref === tracking) branch = sha;
    else if (claims && ref.startsWith(claims.seenPrefix)) mirrored.set(`${claims.prefix}${ref.slice(claims.seenPrefix.length)}`, sha);
  }
  return { branch, claims: mirrored };
}
