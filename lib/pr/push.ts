// --pr during the run: the branch pushed as work lands. Each push is a plain `git push REMOTE SHA:refs/heads/
// BRANCH` of the commit that landed (not of whatever HEAD is by then), one at a time: never --force, so a
// remote that moved refuses it, which is a warning, tried again at the next landing and at the end. Before
// each push, the commits the remote does not have yet are read for what ralph never commits (a secret value,
// an environment file, a private key: CommitGuard); one found stops every push of the run.
import { describeLeftOut, type CommitGuard } from '../repo/commit-set.ts';
import type { Deps, ExecResult } from '../deps.ts';
import { parsePushOutcome } from '../landing/push-outcome.ts';
import { quietEnv, type Git } from '../repo/git.ts';
import { count } from '../progress/tasks-left.ts';
import { firstLine, type PrTarget } from './target.ts';

const PUSH_TIMEOUT_MS = 10 * 60_000;

export interface PusherOptions {
  target: PrTarget;
  git: Git;
  deps: Deps;
  root: string;
  guard?: CommitGuard;
  info(message: string): void;
  warn(message: string): void;
}

const short = (sha: string): string => sha.slice(0, 7);

/** Why `git push --porcelain` of `branch` did not land, in a line (push-outcome.ts reads it); undefined when it did. */
export function pushFailure(result: ExecResult, remote: string, branch: string): string | undefined {
  const outcome = parsePushOutcome(result, { branch: `refs/heads/${branch}` });
  const reason = (why: string): string => /\((.+)\)\s*$/.exec(why)?.[1] ?? why;
  switch (outcome.kind) {
    case 'landed':
      return undefined;
    case 'moved':
      return `${remote}/${branch} has commits this branch lacks (${reason(outcome.why)}): merge them (git pull --no-rebase ${remote} ${branch}); ralph never force-pushes`;
    case 'refused':
      return /^\[(remote )?rejected\]/.test(outcome.why) ? `${remote} refused it (${outcome.why.startsWith('[remote') ? 'remote ' : ''}rejected: ${reason(outcome.why)})` : outcome.why;
    default:
      return outcome.why;
  }
}

export class Pusher {
  private queue: Promise<void> = Promise.resolve();
  private wanted: string | undefined;
  /** The last commit known to be on the remote branch (pushed by this run, or found there). */
  pushed: string | undefined;
  /** Why the last push did not go through; cleared by one that does. */
  failure: string | undefined;
  /** What the branch holds that must never be pushed: no push, and no pull request, for the rest of the run. */
  blocked: string | undefined;
  private hasUpstream: boolean;

  constructor(private readonly o: PusherOptions) {
    this.hasUpstream = o.target.upstream !== undefined || o.target.tracksOther !== undefined;
  }

  /** A commit landed on the branch: pushed once the pushes before it are done (only the latest when several wait). */
  landed(commit: string, signal?: AbortSignal): void {
    this.wanted = commit;
    this.queue = this.queue.then(() => this.push(signal));
  }

  /** Waits for the pushes under way, then pushes `head` (the end of the run); true when it is on the remote. */
  async flush(head: string | undefined, signal?: AbortSignal): Promise<boolean> {
    await this.queue;
    if (head) {
      this.wanted = head;
      await this.push(signal);
    }
    return head !== undefined && this.pushed === head;
  }

  /** Waits for the pushes under way. */
  settled(): Promise<void> {
    return this.queue;
  }

  /** `2 commits up to e4f5a6b: <why>`: what of `head` the remote lacks, and why. */
  async unpushed(head: string, why: string): Promise<string> {
    const ahead = await this.o.git.attempt(['rev-list', '--count', head, '--not', `--remotes=${this.o.target.remote}`]);
    const commits = Number(ahead.output.trim());
    return `${ahead.ok && Number.isFinite(commits) && commits > 0 ? count(commits, 'commit') : 'the branch'} up to ${short(head)}: ${why}`;
  }

  private async push(signal?: AbortSignal): Promise<void> {
    const sha = this.wanted;
    if (!sha || this.blocked || sha === this.pushed || signal?.aborted) return;
    const { remote, branch } = this.o.target;
    try {
      const unsafe = await this.unsafeIn(sha);
      if (unsafe) {
        this.blocked = unsafe;
        this.o.warn(`--pr: nothing more is pushed in this run and no pull request is opened: ${unsafe}; take it out of the branch's history (git log -p HEAD --not --remotes=${remote}), then run again`);
        return;
      }
      const result = await this.o.deps.exec('git', ['push', '--porcelain', remote, `${sha}:refs/heads/${branch}`], { cwd: this.o.root, env: quietEnv(this.o.deps.env), timeoutMs: PUSH_TIMEOUT_MS, signal });
      const why = pushFailure(result, remote, branch);
      if (why) {
        // Said once per reason: an offline night is one warning, not one per iteration.
        if (why !== this.failure) this.o.warn(`--pr: could not push ${short(sha)} to ${remote}/${branch}: ${why}; tried again when the next iteration lands and at the end`);
        this.failure = why;
        return;
      }
      this.pushed = sha;
      this.failure = undefined;
      const upToDate = /^=\t/m.test(result.stdout);
      let upstream = '';
      if (!this.hasUpstream) {
        // Like `git push -u`, which sets nothing when what is pushed is a commit rather than the branch.
        const set = await this.o.git.attempt(['branch', `--set-upstream-to=${remote}/${branch}`, branch]);
        this.hasUpstream = true;
        upstream = set.ok ? `; ${remote}/${branch} is the branch's upstream from now on` : `; could not make ${remote}/${branch} its upstream (${firstLine(set.output, 'git branch failed')})`;
      }
      if (!upToDate || upstream) this.o.info(`pushed ${short(sha)} to ${remote}/${branch}${upToDate ? ' (already there)' : ''}${upstream}`);
    } catch (error) {
      this.failure = `git push failed: ${(error as Error).message}`;
      this.o.warn(`--pr: ${this.failure}`);
    }
  }

  /** What the commits `sha` adds to what the remote has hold that ralph never commits, said in a line; else undefined. */
  private async unsafeIn(sha: string): Promise<string | undefined> {
    if (!this.o.guard) return undefined;
    const { remote } = this.o.target;
    const patch = await this.o.git.attempt(['log', '-p', '--unified=0', '--no-color', '--no-ext-diff', '--no-renames', '--format=', sha, '--not', `--remotes=${remote}`]);
    if (!patch.ok) return `the commits to push could not be read for secrets (${firstLine(patch.output, 'git log failed')})`;
    const found = this.o.guard.inPatch(patch.output);
    return found.length > 0 ? `the commits to push (${short(sha)} and those before it that ${remote} lacks) add ${found.map(describeLeftOut).join('; ')}` : undefined;
  }
}
