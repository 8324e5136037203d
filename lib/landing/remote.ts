// Several hosts: the feature branch on a git remote is where work lands, and (for sources whose state is in
// files) where tasks are claimed (claims.ts). A landing fetches the remote head, brings the main worktree
// there, and pushes the new head together with the release of the task's claim in one atomic push: the
// server refuses it when another host landed first (the caller replays on the new head and tries again) or
// when the claim is not this run's any more (what the server did is read per ref: push-outcome.ts). A remote
// that does not answer is waited for, with backoff, up to --remote-wait; then the run stops and says what is
// kept where. A clone whose own landing was cut short (a killed run) replays it when it joins (unpushed.ts).
import type { Config } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { ClaimLostError, RalphError } from '../errors.ts';
import { gitReason, type Git } from '../repo/git.ts';
import { RemoteClaims, type Holder } from './claims.ts';
import { mustWork, noAnswer, remoteGit } from './remote-git.ts';
import { remoteLink, type LinkOptions } from './remote-link.ts';
import { parsePushOutcome, type PushOutcome } from './push-outcome.ts';
import { DEFAULT_LEASE_MS, DEFAULT_REMOTE_WAIT_MS } from './preflight.ts';
import { MergeLock } from './replay.ts';
import { released, resumeLanding, tasksLanded, unpushedCommits } from './unpushed.ts';
import type { Claim, Dock, RemoteTarget } from './types.ts';
import { reached } from '../recovery/crash-points.ts';
import { leftBehindText } from './view-text.ts';

/** The link's own options (remote-link.ts: the clone, the remote, how long it may be silent, what to say), and: */
export interface RemoteOptions extends Pick<LinkOptions, 'main' | 'target' | 'waitMs' | 'deps' | 'signal' | 'warn' | 'info'> {
  me: Holder;
  leaseMs: number;
  head: string | undefined;
  /** The source's state files (a landing cut short is replayed with them: unpushed.ts). */
  stateFiles?: () => readonly string[];
}

export interface RemoteDock extends Dock {
  readonly remote: RemoteTarget;
  /**
   * At the start of a run: the branch on the remote (pushed there by the first host), this clone's branch
   * at its head (fast-forwarded, or its own new commits pushed); one message per thing done.
   */
  join(): Promise<string[]>;
  /** A forced exit: this run's claims released in one bounded synchronous try (claims.ts releaseNow()). */
  releaseNow(): void;
}

/** The run's dock on the remote `target`, joined (./remote.ts join()): what it did said through `info`. */
export async function joinRemote(o: { main: Git; root: string; target: RemoteTarget; config: Config; run: string; deps: Deps; signal: AbortSignal; warn: (message: string) => void; info: (message: string) => void; stateFiles?: () => readonly string[] }): Promise<RemoteDock> {
  const dock = remoteDock({
    ...o,
    me: { host: o.target.host, clone: o.root, run: o.run, pid: process.pid },
    leaseMs: (o.config.extra.get('lease') as number | undefined) ?? DEFAULT_LEASE_MS,
    waitMs: (o.config.extra.get('remote-wait') as number | undefined) ?? DEFAULT_REMOTE_WAIT_MS,
    head: await o.main.head(),
  });
  for (const message of await dock.join()) o.info(message);
  return dock;
}

export function remoteDock(o: RemoteOptions): RemoteDock {
  const { main, target } = o;
  const lock = new MergeLock(o.head);
  const git = remoteGit(o.deps, main.cwd);
  const refs = target.claims === 'refs' ? new RemoteClaims({ main, git, remote: target.name, branch: target.branch, me: o.me, leaseMs: o.leaseMs, now: () => o.deps.now(), warn: o.warn, env: o.deps.env }) : undefined;
  const link = remoteLink({ ...o, git, ...(refs ? { claimsSpec: refs.fetchSpec } : {}) });
  const { tracking, oneAtATime, reach, fetch, pushBranch } = link;

  /** The main worktree fast-forwarded to `head`; why not, when git refused (the user's changes in the way). */
  const forward = async (head: string): Promise<string | undefined> => {
    const moved = await main.attempt(['merge', '--ff-only', '--no-stat', head]);
    return moved.ok ? undefined : gitReason(moved.output);
  };

  /**
   * The claims an earlier run of this clone left (killed before it released them) go, once whatever it had
   * landed here is on the remote: this run holds the clone's lock, so that run is dead, and its tasks are
   * this run's to settle (recovery put back what it had not landed). Never before: another host would take
   * a task whose landing still waits in this clone, and do it twice.
   */
  const dropLeftBehind = async (): Promise<string[]> => {
    const dropped = (await refs?.dropLeftBehind()) ?? [];
    return dropped.length > 0 ? [`released ${leftBehindText(dropped)}`] : [];
  };

  /** The main worktree (at `mine`) brought to the remote head `head`; never past this clone's own commits. */
  const goTo = async (mine: string | undefined, head: string): Promise<string> => {
    if (mine === head) return head;
    if (mine && !(await main.contains(head, mine))) {
      throw new RalphError(`this clone's ${target.branch} (${mine.slice(0, 12)}) and ${target.name}/${target.branch} (${head.slice(0, 12)}) have each moved on: ralph never force-pushes; git pull --rebase ${target.name} ${target.branch} (or drop this clone's commits), then run again`);
    }
    const why = await forward(head);
    if (why) throw new RalphError(`the main worktree cannot move to ${target.name}/${target.branch} (${head.slice(0, 12)}): ${why}; commit or stash what is in the way`);
    lock.published = head;
    return head;
  };

  const dock: RemoteDock = {
    remote: target,
    lock,

    releaseNow() {
      refs?.releaseNow();
    },

    async target(freshMs) {
      const mine = await main.head();
      if (freshMs !== undefined && link.look && link.look.head === mine && o.deps.now() - link.look.at <= freshMs) return mine;
      return goTo(mine, await fetch());
    },

    async publish(tasks) {
      const taskIds = typeof tasks === 'string' ? [tasks] : [...tasks];
      const head = await main.head();
      if (!head) throw new RalphError('nothing to publish: the main worktree has no commit');
      const branchRef = `refs/heads/${target.branch}`;
      // One push at a time with the claims' pushes (a renewal must not move the claim under the push that
      // releases it); the waits between pushes outside that queue, so the tasks still at work keep their claims.
      const attempt = async (): Promise<PushOutcome> => {
        for (const taskId of taskIds) {
          const lost = refs?.lostReason(taskId);
          if (lost) return { kind: 'lost', why: lost, ref: refs!.refOf(taskId) };
        }
        // A batch is one push: the branch, and the release of every claim of its tasks.
        const release = taskIds.flatMap((taskId) => refs?.releaseArgs(taskId) ?? []);
        const claims = refs ? taskIds.filter((taskId) => refs.releaseArgs(taskId).length > 0).map((taskId) => refs.refOf(taskId)) : [];
        // What the server did is read from its answer per ref (push-outcome.ts), never from stderr's words.
        return parsePushOutcome(await oneAtATime(() => git(['push', '--porcelain', '--no-verify', '--atomic', target.name, `${head}:${branchRef}`, ...release])), { branch: branchRef, claims });
      };
      const outcome = await reach(`landing ${taskIds.join(', ')}`, async () => {
        const result = refs ? await refs.serial(attempt) : await attempt();
        // Work this host cannot publish holds no claim meanwhile: renewed, it would keep the task from every
        // other host for as long as the remote is out of reach from here.
        for (const taskId of taskIds) {
          if (result.kind === 'unreachable') refs?.pause(taskId);
          else refs?.resume(taskId);
        }
        return result.kind === 'unreachable' ? { noAnswer: result.why } : { value: result };
      });
      switch (outcome.kind) {
        case 'landed':
          // One atomic push: the branch and the claims' release (the test hook's two names for one step).
          reached('pushed');
          // (A failure to update this clone's own tracking ref afterwards is no refusal: the next fetch sets it.)
          for (const taskId of taskIds) await refs?.released(taskId);
          if (refs) reached('claim_released');
          lock.published = head;
          link.look = { head, at: o.deps.now() };
          return { kind: 'landed' };
        case 'lost': {
          const taskId = taskIds.find((id) => refs?.refOf(id) === outcome.ref) ?? taskIds[0]!;
          const why = refs?.lostReason(taskId) ?? `the claim of ${taskId} is not this run's any more (its lease ran out and another host took it over)`;
          refs?.forget(taskId);
          return { kind: 'lost', why, task: taskId };
        }
        // Another host landed first, or the server found a ref moved under the push: the next round sees what moved.
        case 'moved':
          return { kind: 'moved' };
        default:
          throw new RalphError(`${target.name} refused the landing of ${taskIds.join(', ')}: ${outcome.why}`);
      }
    },

    async rewind(to) {
      await main.raw(['reset', '--keep', to]);
      lock.published = to;
    },

    async claim(taskId, seenAt, isOpen) {
      if (!refs) return;
      const seen = (await refs.read()).find((claim) => claim.task === taskId);
      try {
        if (!(refs.holds(taskId) && seen && refs.isMine(seen))) await reach(`claiming ${taskId}`, async () => ({ noAnswer: await refs.claim(taskId, seen) }));
      } catch (error) {
        link.look = undefined; // the claims this clone saw are out of date: the next look fetches
        throw error;
      }
      reached('claimed');
      const fetched = await fetch();
      if (fetched === seenAt) return;
      // Under the lock: a landing of this host's under way may show a tick it then takes back. The head this
      // fetch saw holds every landing that released a claim before this one; a new look if this host's moved it.
      const open = await lock.run(async () => {
        await (link.look?.head === fetched ? goTo(await main.head(), fetched) : this.target());
        return isOpen();
      });
      if (!open) throw new ClaimLostError(`${taskId} was just landed by another host`);
    },

    lost: (taskId) => refs?.lostReason(taskId),

    async release(taskId) {
      await refs?.release(taskId);
      if (refs) reached('claim_released');
    },

    async elsewhere() {
      // The claims of the last fetch, the one that brought the branch (target()): fetched apart, a task
      // landed in between would look neither claimed nor done.
      const out = new Map<string, Claim>();
      if (!refs) return out;
      for (const claim of await refs.read()) if (!refs.isMine(claim) && !refs.expired(claim)) out.set(claim.task, claim);
      return out;
    },

    async share(branch) {
      const pushed = parsePushOutcome(await oneAtATime(() => git(['push', '--porcelain', '--no-verify', target.name, `refs/heads/${branch}:refs/heads/${branch}`])), { branch: `refs/heads/${branch}` });
      if (pushed.kind === 'landed') return `${target.name}/${branch}`;
      o.warn(`could not push the kept branch ${branch} to ${target.name}: ${pushed.why}; it is in this clone only`);
      return undefined;
    },

    async join() {
      const messages: string[] = [];
      const mine = await main.head();
      if (!mine) throw new RalphError('--remote: the repository has no commit to share: commit first');
      const listed = await reach('looking for the branch', async () => {
        const result = await git(['ls-remote', '--heads', target.name, `refs/heads/${target.branch}`]);
        const why = noAnswer(result);
        return why ? { noAnswer: why } : { value: mustWork(result, `git ls-remote ${target.name}`) };
      });
      if (!listed.trim()) {
        const created = await pushBranch(mine);
        if (created.kind !== 'landed') throw new RalphError(`could not create ${target.name}/${target.branch}: ${created.why}`);
        messages.push(`${target.name} had no branch ${target.branch}: created it at ${mine.slice(0, 12)} (this clone's)`);
      }
      const head = await fetch();
      if (head !== mine && (await main.contains(mine, head))) {
        // This clone's own commits on the branch go to the remote first: every host starts from them.
        const pushed = await pushBranch(mine);
        if (pushed.kind !== 'landed') throw new RalphError(`could not push this clone's ${target.branch} (${mine.slice(0, 12)}) to ${target.name}: ${pushed.why}`);
        // Among them a landing a killed run committed and never pushed: the claims it left go with it.
        const dropped = (await refs?.dropLeftBehind(tasksLanded(await unpushedCommits(main, head, mine), target.host))) ?? [];
        messages.push(`pushed this clone's new commits on ${target.branch} (up to ${mine.slice(0, 12)}) to ${target.name}${released(dropped)}`);
        lock.published = mine;
        return [...messages, ...(await dropLeftBehind())];
      }
      if (head !== mine && !(await main.contains(head, mine))) {
        // This clone's own unpushed landing (a run killed before its push): replayed on the remote's head.
        const resumed = await resumeLanding({ main, remote: target.name, branch: target.branch, host: target.host, run: o.me.run, stateFiles: o.stateFiles?.() ?? [], fetch, push: pushBranch, share: (branch) => dock.share(branch), dropLeftBehind: async (tasks) => (await refs?.dropLeftBehind(tasks)) ?? [] }, mine, head);
        if (resumed) {
          lock.published = resumed.head;
          link.look = { head: resumed.head, at: o.deps.now() };
          return [...messages, resumed.message, ...(await dropLeftBehind())];
        }
      }
      const at = await lock.run(() => this.target());
      if (at && at !== mine) messages.push(`this clone's ${target.branch} moved to ${target.name}'s head ${at.slice(0, 12)}`);
      return [...messages, ...(await dropLeftBehind())];
    },

    async close() {
      const messages: string[] = [];
      await refs?.releaseAll();
      // Every host ends at the remote's head: one quick try, no waiting (the run is over).
      const fetched = await oneAtATime(() => git(['fetch', '--no-tags', '--quiet', target.name, `+refs/heads/${target.branch}:${tracking}`], 30_000));
      if (fetched.exitCode !== 0) {
        messages.push(`could not fetch ${target.name}/${target.branch} at the end: this clone may be behind it (git pull --ff-only)`);
        return messages;
      }
      const head = (await main.raw(['rev-parse', '--verify', tracking])).trim();
      const mine = await main.head();
      if (mine !== head && mine && (await main.contains(head, mine))) {
        const why = await forward(head);
        if (why) messages.push(`could not bring this clone to ${target.name}/${target.branch} (${head.slice(0, 12)}): ${why}`);
      }
      return messages;
    },
  };
  return dock;
}

