// One clone's line to the remote (remote.ts is its only user): its fetches and pushes one at a time, a
// remote that does not answer waited out with backoff up to --remote-wait (then the run stops, saying what
// it was doing), and the remote's head as this clone last saw it.
import type { Deps } from '../deps.ts';
import { RemoteUnreachableError } from '../errors.ts';
import type { Git } from '../repo/git.ts';
import { backoffDelays } from '../retry.ts';
import { mustWork, noAnswer, type RemoteGit } from './remote-git.ts';
import { parsePushOutcome, type PushOutcome } from './push-outcome.ts';
import type { RemoteTarget } from './types.ts';

export interface LinkOptions {
  main: Git;
  /** git against the remote, from the clone (remote-git.ts). */
  git: RemoteGit;
  target: RemoteTarget;
  /** How long the remote may not answer before the run stops. */
  waitMs: number;
  deps: Deps;
  signal: AbortSignal;
  warn: (message: string) => void;
  info: (message: string) => void;
  /** The claims' refspec, fetched with the branch (claims.ts), when tasks are claimed with refs. */
  claimsSpec?: string;
}

export interface RemoteLink {
  git: RemoteGit;
  /** `refs/remotes/<remote>/<branch>`. */
  tracking: string;
  /** The remote's head as this clone last saw it (a fetch, a landing push), and when. */
  look: { head: string; at: number } | undefined;
  /** `job` (a git call that updates this clone's remote-tracking refs) after the ones before it. */
  oneAtATime<T>(job: () => Promise<T>): Promise<T>;
  /** Runs `op` until the remote answers; waits with backoff meanwhile, and gives up past --remote-wait. */
  reach<T>(what: string, op: () => Promise<{ noAnswer?: string; value?: T }>): Promise<T>;
  /** Fetches the branch and the claims; the remote head. */
  fetch(): Promise<string>;
  /** This clone's `sha` pushed as the feature branch (never forced): what the server did with it. */
  pushBranch(sha: string): Promise<PushOutcome>;
}

export function remoteLink(o: LinkOptions): RemoteLink {
  const { main, target } = o;
  const { git } = o;
  const tracking = `refs/remotes/${target.name}/${target.branch}`;
  let outage: { since: number; delays: Iterator<number> } | undefined;
  // The fetches and the landing push of this clone, one at a time: both update its remote-tracking refs, and
  // git refuses a ref another of its processes holds locked ("cannot lock ref").
  let traffic: Promise<unknown> = Promise.resolve();

  const link: RemoteLink = {
    git,
    tracking,
    look: undefined,

    oneAtATime<T>(job: () => Promise<T>): Promise<T> {
      const next = traffic.then(job, job);
      traffic = next.catch(() => undefined);
      return next;
    },

    async reach<T>(what: string, op: () => Promise<{ noAnswer?: string; value?: T }>): Promise<T> {
      for (;;) {
        const result = await op();
        if (!result.noAnswer) {
          if (outage) o.info(`${target.name} answers again after ${Math.round((o.deps.now() - outage.since) / 1000)} s`);
          outage = undefined;
          return result.value as T;
        }
        const now = o.deps.now();
        if (!outage) {
          outage = { since: now, delays: backoffDelays({ baseMs: 1_000, maxMs: 30_000, random: () => 0.5 + o.deps.random() / 2 }) };
          o.warn(`${target.name} does not answer (${result.noAnswer}): ${what} waits and tries again for up to ${Math.round(o.waitMs / 1000)} s`);
        }
        if (now - outage.since >= o.waitMs) throw new RemoteUnreachableError(`${target.name} did not answer for ${Math.round((now - outage.since) / 1000)} s (${result.noAnswer}) while ${what}`);
        await o.deps.sleep(Math.min(outage.delays.next().value, Math.max(0, outage.since + o.waitMs - now)), o.signal);
      }
    },

    /**
     * The cheapest look too: the server lists only these refs and sends a pack only when one moved (`git
     * ls-remote` gets every ref of the remote, refs/pull/*…).
     */
    fetch: () =>
      link.reach(`fetching ${target.name}/${target.branch}`, async () => {
        // Nothing ralph reads is in FETCH_HEAD; auto-maintenance, a process per fetch, runs with ralph's commits.
        const args = ['fetch', '--prune', '--no-tags', '--quiet', '--no-write-fetch-head', '--no-auto-maintenance', target.name, `+refs/heads/${target.branch}:${tracking}`, ...(o.claimsSpec ? [o.claimsSpec] : [])];
        let result = await link.oneAtATime(() => git(args));
        // A worker's worktree being added meanwhile has a placeholder HEAD (or no commondir yet) for a moment,
        // which fetch's connectivity check trips on; a git of the user's may hold a ref: a moment later all are gone.
        for (let again = 0; again < 5 && /bad object .*worktrees\/|worktrees\/[^/\s]+\/commondir|cannot lock ref/.test(result.stderr); again += 1) {
          await o.deps.sleep(50 * (again + 1), o.signal);
          result = await link.oneAtATime(() => git(args));
        }
        const why = noAnswer(result);
        if (why) return { noAnswer: why };
        mustWork(result, `git fetch ${target.name} ${target.branch}`);
        const head = (await main.raw(['rev-parse', '--verify', tracking])).trim();
        link.look = { head, at: o.deps.now() };
        return { value: head };
      }),

    async pushBranch(sha) {
      const branchRef = `refs/heads/${target.branch}`;
      return parsePushOutcome(await link.oneAtATime(() => git(['push', '--porcelain', '--no-verify', target.name, `${sha}:${branchRef}`])), { branch: branchRef });
    },
  };
  return link;
}
