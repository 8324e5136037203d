// How a run's --pr outcome reads: the last lines of the run, the report's fact, the end notice.
import type { PullRequestRecord } from '../events.ts';

/** `https://github.com/o/r/pull/1 (draft, created)`, or `none (why)`. */
export function pullRequestText(pr: PullRequestRecord): string {
  if (pr.url) return `${pr.url} (${pr.draft ? 'draft' : 'ready for review'}, ${pr.action ?? 'found'})`;
  return `none (${pr.none ?? 'not opened'})`;
}

/** The closing lines of a run with --pr: what is not pushed (when something is not), then the pull request. */
export function pullRequestLines(pr: PullRequestRecord): string[] {
  return [...(pr.pushed || !pr.notPushed ? [] : [`not pushed: ${pr.notPushed}`]), `pull request: ${pullRequestText(pr)}`];
}
