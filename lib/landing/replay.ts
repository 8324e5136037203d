// Replaying a worker's commits (lib/landing: where tasks are claimed and landed, one host or several): one at a time (a lock), each commit replayed on the feature branch's
// current head with its author and message, the source's state files left out, then the main worktree
// fast-forwarded. A conflict is never left in a file: the replay is undone and the conflicting paths named.
import type { Git } from '../repo/git.ts';
import { matchesAny } from '../repo/paths.ts';

/** Runs jobs one after another, in the order they asked; knows the feature branch's head between merges. */
export class MergeLock {
  private tail: Promise<unknown> = Promise.resolve();
  /**
   * The feature branch's head as the last finished merge left it. A worker starts its next task from here
   * without waiting for the merges queued meanwhile (a merge moves the branch more than once).
   */
  published: string | undefined;

  constructor(head?: string) {
    this.published = head;
  }

  run<T>(job: () => Promise<T>): Promise<T> {
    const next = this.tail.then(job, job);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export type Replay = { head: string; commits: number } | { conflict: string[] };

/**
 * Replays the commits `base..HEAD` of the worktree onto `target` (the feature branch's head), keeping each
 * commit's author and message and dropping its changes to `stateFiles`; commits that only touched those
 * vanish; `marks` are trailers added to each (who landed it). On a conflict the worktree is put back as it
 * was and the paths are returned.
 */
export async function replayOnto(tree: Git, base: string, target: string, stateFiles: readonly string[], marks: Record<string, string> = {}): Promise<Replay> {
  const original = await tree.head();
  const commits = (await tree.raw(['rev-list', '--reverse', `${base}..HEAD`])).split('\n').filter(Boolean);
  if (!original || commits.length === 0) return { head: target, commits: 0 };
  await tree.raw(['reset', '--hard', target]);
  let replayed = 0;
  for (const commit of commits) {
    const pick = await tree.attempt(['cherry-pick', '--no-commit', '--allow-empty', commit]);
    if (!pick.ok) {
      const unmerged = (await tree.raw(['diff', '--name-only', '--diff-filter=U'])).split('\n').filter(Boolean);
      const real = unmerged.filter((file) => !matchesAny(file, stateFiles));
      if (real.length > 0 || unmerged.length === 0) {
        await tree.attempt(['cherry-pick', '--abort']);
        await tree.raw(['reset', '--hard', original]);
        return { conflict: real.length > 0 ? real : [firstLine(pick.output)] };
      }
    }
    // The state files stay as the feature branch has them: ralph records the task's state itself.
    if (stateFiles.length > 0) await tree.raw(['reset', 'HEAD', '--', ...stateFiles]);
    const staged = await tree.hasStaged();
    if (staged) {
      await tree.raw(['commit', '--no-verify', '--allow-empty-message', '-C', commit, ...Object.entries(marks).flatMap(([key, value]) => ['--trailer', `${key}: ${value}`])]);
      replayed += 1;
    }
    // What is left (the state files' changes, a commit with nothing else) goes before the next pick.
    if (!staged || stateFiles.length > 0) await tree.raw(['reset', '--hard', 'HEAD']);
  }
  return { head: (await tree.head())!, commits: replayed };
}

/** `commit` cherry-picked onto `target` as it is (author, message); on a conflict the worktree goes back to `commit`. */
export async function pickOnto(tree: Git, commit: string, target: string): Promise<Replay> {
  await tree.raw(['reset', '--hard', target]);
  const pick = await tree.attempt(['cherry-pick', '--allow-empty', commit]);
  if (pick.ok) return { head: (await tree.head())!, commits: 1 };
  const unmerged = (await tree.raw(['diff', '--name-only', '--diff-filter=U'])).split('\n').filter(Boolean);
  await tree.attempt(['cherry-pick', '--abort']);
  await tree.raw(['reset', '--hard', commit]);
  return { conflict: unmerged.length > 0 ? unmerged : [firstLine(pick.output)] };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? 'git cherry-pick failed';
}


/** A commit message with trailers, as ralph writes them. */
export function commitText(message: string, trailers: Record<string, string>): string {
  const body = Object.entries(trailers).map(([key, value]) => `${key}: ${value}`);
  return body.length > 0 ? `${message}\n\n${body.join('\n')}\n` : `${message}\n`;
}
