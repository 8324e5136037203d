// Merging a worker's commits back: one at a time (a lock), each commit replayed on the feature branch's
// current head with its author and message, the source's state files left out, then the main worktree
// fast-forwarded. A conflict is never left in a file: the replay is undone and the conflicting paths named.
import type { Git } from '../git.ts';
import { isUnder } from './worktrees.ts';

/** Runs jobs one after another, in the order they asked. */
export class MergeLock {
  private tail: Promise<unknown> = Promise.resolve();

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
 * vanish. On a conflict the worktree is put back as it was and the paths are returned.
 */
export async function replayOnto(tree: Git, base: string, target: string, stateFiles: readonly string[]): Promise<Replay> {
  const original = await tree.head();
  const commits = (await tree.raw(['rev-list', '--reverse', `${base}..HEAD`])).split('\n').filter(Boolean);
  if (!original || commits.length === 0) return { head: target, commits: 0 };
  await tree.raw(['reset', '-q', '--hard', target]);
  let replayed = 0;
  for (const commit of commits) {
    const pick = await tree.attempt(['cherry-pick', '--no-commit', '--allow-empty', commit]);
    if (!pick.ok) {
      const unmerged = (await tree.raw(['diff', '--name-only', '--diff-filter=U'])).split('\n').filter(Boolean);
      const real = unmerged.filter((file) => !isUnder(file, stateFiles));
      if (real.length > 0 || unmerged.length === 0) {
        await tree.attempt(['cherry-pick', '--abort']);
        await tree.raw(['reset', '-q', '--hard', original]);
        return { conflict: real.length > 0 ? real : [firstLine(pick.output)] };
      }
    }
    // The state files stay as the feature branch has them: ralph records the task's state itself.
    if (stateFiles.length > 0) await tree.raw(['reset', '-q', 'HEAD', '--', ...stateFiles]);
    if (await tree.hasStaged()) {
      await tree.raw(['commit', '-q', '--no-verify', '--allow-empty-message', '-C', commit]);
      replayed += 1;
    }
    await tree.attempt(['cherry-pick', '--quit']);
    await tree.raw(['reset', '-q', '--hard', 'HEAD']);
  }
  return { head: (await tree.head())!, commits: replayed };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? 'git cherry-pick failed';
}
