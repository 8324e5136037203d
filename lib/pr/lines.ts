// How a run's --pr outcome reads: the last lines of the run, the report's fact, the end notice.
import type { PullRequestRecord } from '../events.ts';

/** `https://github.com/o/r/pull/1 (draft, created)`, or `none (why)`. */
export function pullRequestText(pr: PullRequestRecord): string {
  if (pr.url) return `${pr.url} (${pr.draft ? 'draft' : 'ready for review'}, ${pr.action ?? 'found'})`;
  return `none (${pr.none ?? 'not opened'})`;
}

/** `2 paths uncommitted here: specs/001-demo/tasks.md, src/a.ts; commit and push them`, or undefined when the remote has it all. */
export function notOnRemoteText(pr: PullRequestRecord): string | undefined {
  const paths = pr.notOnRemote ?? [];
  if (paths.length === 0) return undefined;
  const shown = paths.length <= 5 ? paths.join(', ') : `${paths.slice(0, 5).join(', ')} and ${paths.length - 5} more`;
  return `${paths.length === 1 ? '1 path' : `${paths.length} paths`} uncommitted here: ${shown}; commit and push them`;
}

/** The closing lines of a run with --pr: what is not pushed, what is not even committed (when so), then the pull request. */
export function pullRequestLines(pr: PullRequestRecord): string[] {
  const missing = notOnRemoteText(pr);
  return [...(pr.pushed || !pr.notPushed ? [] : [`not pushed: ${pr.notPushed}`]), ...(missing ? [`not on the remote: ${missing}`] : []), `pull request: ${pullRequestText(pr)}`];
}
