// --pr: the work handed over as a pull request. The session adds a Handover to its event bus: each iteration
// that lands a commit on the branch has it pushed (./push.ts); at the end of a run that got going, finish()
// pushes what is left and opens one draft pull request into the remote's default branch, or rewrites the
// summary in the one a run opened before, and marks it ready for review when every task is done.
import path from 'node:path';
import type { CommitGuard } from '../repo/commit-set.ts';
import type { Deps } from '../deps.ts';
import { errorMessage } from '../errors.ts';
import type { EventSink, PullRequestRecord, RunEvent, RunSummary } from '../events.ts';
import { writeFileAtomic } from '../repo/fs-atomic.ts';
import type { Git } from '../repo/git.ts';
import { ensurePrivateDir, PRIVATE_FILE } from '../repo/private-files.ts';
import { renderSummaryBlock, withSummaryBlock } from './body.ts';
import { Gh, type OpenPullRequest } from './gh.ts';
import { Pusher } from './push.ts';
import type { PrTarget } from './target.ts';

export { resolvePrTarget, type PrTarget } from './target.ts';

export interface HandoverOptions {
  target: PrTarget;
  git: Git;
  deps: Deps;
  root: string;
  sessionId: string;
  guard?: CommitGuard;
  /** The pull request's title (the feature's name), already redacted. */
  title: string;
  /** The run's signal: a Ctrl+C stops a push under way. */
  signal: AbortSignal;
  /** Whether `ralph stop` asked the run to stop (lib/control): no push after it. */
  stopRequested?: () => boolean;
  info(message: string): void;
  warn(message: string): void;
  /** --remote to the same remote: every landing is a push already; only the end pushes (and opens the PR). */
  landedByRemote?: boolean;
}

export class Handover implements EventSink {
  private readonly pusher: Pusher;

  constructor(private readonly o: HandoverOptions) {
    this.pusher = new Pusher({ target: o.target, git: o.git, deps: o.deps, root: o.root, guard: o.guard, info: o.info, warn: o.warn });
  }

  /** It reads the run's events like the view does: an iteration whose work is on the branch starts a push. */
  emit(event: RunEvent): void {
    // After `ralph stop`, as after Ctrl+C: no more network; the end says what is not pushed.
    if (event.type === 'iteration_end' && event.record.commit && !this.o.landedByRemote && !this.o.stopRequested?.()) this.pusher.landed(event.record.commit, this.o.signal);
  }

  /**
   * The end of a run that got going. Completed, limit reached or failed: the last push, then the pull
   * request opened or updated, and marked ready for review when every task is done (exit 0). Interrupted:
   * no more network, said so; the next run with --pr catches up.
   */
  async finish(summary: RunSummary, signal: AbortSignal): Promise<PullRequestRecord> {
    try {
      return await this.handOver(summary, signal);
    } catch (error) {
      // Whatever goes wrong here is said, never a failure of the run.
      const why = `unexpected error: ${(error as Error).message}`;
      this.o.warn(`--pr: ${why}`);
      return { target: `${this.o.target.remote}/${this.o.target.branch}`, pushed: false, none: why };
    }
  }

  private async handOver(summary: RunSummary, signal: AbortSignal): Promise<PullRequestRecord> {
    const { remote, branch } = this.o.target;
    const record: PullRequestRecord = { target: `${remote}/${branch}`, pushed: false };
    const head = await this.o.git.head();
    // What the run leaves uncommitted (said at its end) is on no pushed head: the remote lacks it.
    if (summary.uncommitted && summary.uncommitted.length > 0) record.notOnRemote = summary.uncommitted;
    if (summary.status === 'interrupted' || signal.aborted) {
      await this.pusher.settled();
      record.pushed = head !== undefined && this.pusher.pushed === head;
      if (!record.pushed && head) record.notPushed = await this.pusher.unpushed(head, this.pusher.blocked ?? 'the run was interrupted before its last push');
      record.none = 'the run was interrupted; the next run with --pr pushes what is left and opens or updates it';
      return record;
    }
    record.pushed = await this.pusher.flush(head, signal);
    if (!record.pushed && head) record.notPushed = await this.pusher.unpushed(head, this.pusher.blocked ?? this.pusher.failure ?? 'not pushed');
    if (this.pusher.blocked) return { ...record, none: 'the branch holds what ralph never pushes (said above)' };
    if (!record.pushed) return { ...record, none: `the branch could not be pushed, so the pull request is left as it is` };
    try {
      return { ...record, ...(await this.pullRequest(summary, head!, record.notOnRemote ?? [], signal)) };
    } catch (error) {
      const why = (error as Error).message;
      this.o.warn(`--pr: ${why}`);
      return { ...record, none: why };
    }
  }

  private async pullRequest(summary: RunSummary, head: string, notOnRemote: readonly string[], signal: AbortSignal): Promise<Partial<PullRequestRecord>> {
    const { remote, branch, base } = this.o.target;
    const gh = new Gh(this.o.target.gh, this.o.root, this.o.deps, signal);
    const found = await gh.find(branch);
    const block = renderSummaryBlock(summary, { branch, target: `${remote}/${branch}`, notOnRemote });
    const file = path.join(this.o.root, '.ralph', 'pr', `${summary.sessionId}.md`);
    ensurePrivateDir(path.dirname(file));
    let pr: OpenPullRequest;
    let action: NonNullable<PullRequestRecord['action']>;
    if (found && summary.records.length === 0) {
      // A run with nothing to do keeps the summary of the run that did the work.
      pr = found;
      action = 'unchanged';
    } else if (found) {
      writeFileAtomic(file, withSummaryBlock(found.body, block), { mode: PRIVATE_FILE });
      await gh.editBody(found.number, file);
      pr = found;
      action = 'updated';
      this.o.info(`pull request #${pr.number} updated with this run's summary: ${pr.url}`);
    } else {
      // GitHub refuses a pull request without a commit of its own: say so instead of passing on its error.
      const ahead = await this.o.git.attempt(['rev-list', '--count', head, '--not', `refs/remotes/${remote}/${base}`]);
      if (ahead.ok && ahead.output.trim() === '0') return { none: `${branch} has no commit that ${base} lacks` };
      writeFileAtomic(file, withSummaryBlock('', block), { mode: PRIVATE_FILE });
      const created = await gh.create({ base, head: branch, title: this.o.title, bodyFile: file }).catch(async (error: unknown) => {
        // Another host opened it meanwhile (several hosts end at once): GitHub refuses a second one, and
        // that one is ours to update.
        const opened = /already exists/.test(errorMessage(error)) ? await gh.find(branch) : undefined;
        if (!opened) throw error;
        return opened;
      });
      if ('body' in created) {
        writeFileAtomic(file, withSummaryBlock(created.body, block), { mode: PRIVATE_FILE });
        await gh.editBody(created.number, file);
        pr = created;
        action = 'updated';
        this.o.info(`pull request #${pr.number}, which another host opened meanwhile, updated with this run's summary: ${pr.url}`);
      } else {
        pr = { ...created, isDraft: true, body: '' };
        action = 'created';
        this.o.info(`pull request #${pr.number} opened as a draft into ${base}: ${pr.url}`);
      }
    }
    let draft = pr.isDraft;
    // Ready only when the pushed head holds every task's work and state: done here but uncommitted is not done there.
    if (draft && summary.exitCode === 0 && !this.o.target.keepDraft) {
      if (notOnRemote.length > 0) {
        this.o.info(`pull request #${pr.number} stays a draft: every task is done here, but ${remote}/${branch} lacks what stays uncommitted`);
      } else {
        await gh.ready(pr.number);
        draft = false;
        this.o.info(`pull request #${pr.number} marked ready for review: every task is done`);
      }
    }
    return { number: pr.number, url: pr.url, action, draft };
  }
}

/** The dry run's line (and --json) for --pr: where the branch goes, and which pull request a run would open or update. */
export async function planPr(target: PrTarget, root: string, deps: Deps): Promise<{ line: string; json: Record<string, unknown> }> {
  const { remote, branch, base } = target;
  let existing: OpenPullRequest | undefined;
  let lookup = '';
  try {
    existing = await new Gh(target.gh, root, deps).find(branch);
  } catch (error) {
    lookup = ` (could not look for an open one: ${(error as Error).message})`;
  }
  const upstream = target.upstream ? `upstream ${target.upstream}` : target.tracksOther ? `the branch tracks ${target.tracksOther}, left as it is` : `upstream ${remote}/${branch}, set on the first push`;
  const pr = existing ? `update pull request #${existing.number} (${existing.url})` : `open a draft pull request into ${base} (the default branch of ${remote}, from ${target.baseFrom})${lookup}`;
  const ready = target.keepDraft ? 'kept a draft (--pr-draft)' : 'marked ready for review once every task is done';
  return {
    line: `pr: push ${branch} to ${remote} as work lands (${upstream}; never forced), then ${pr}; ${ready}`,
    json: { remote, branch, base, upstream: target.upstream ?? null, keepDraft: target.keepDraft, existing: existing ? { number: existing.number, url: existing.url, isDraft: existing.isDraft } : null },
  };
}
