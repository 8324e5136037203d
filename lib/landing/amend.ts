// Recovery's last step of a landing a killed run merged into the feature branch but did not record: the
// source's state amended into the landing's commit (lib/recovery/index.ts settleLanding). With several hosts
// (--remote) only a commit the remote does not have yet: the join then pushes or replays it with its state
// (remote.ts join()); a commit already pushed is never rewritten.
import type { CommitGuard } from '../repo/commit-set.ts';
import type { Git } from '../repo/git.ts';
import type { Committed } from '../iteration/workspace.ts';
import { renumberedMessage } from './state.ts';
import type { RemoteTarget } from './types.ts';

/**
 * Amends the state files into HEAD, unless HEAD is on the remote's branch as this clone last saw it;
 * `iteration`: the number the record took instead of the trailer's (another host's record held it), which
 * the trailer then says too (a later replay renumbers by it: unpushed.ts).
 */
export async function amendLanding(git: Git, guard: CommitGuard, stateFiles: readonly string[], remote?: Pick<RemoteTarget, 'name' | 'branch'>, iteration?: number): Promise<Committed> {
  const head = await git.head();
  if (remote && head) {
    const tracking = `refs/remotes/${remote.name}/${remote.branch}`;
    const seen = await git.attempt(['rev-parse', '--verify', '--quiet', tracking]);
    if (seen.ok && (await git.contains(tracking, head))) return { leftOut: [] };
  }
  const made = await guard.commit(git, '', {}, { only: stateFiles, amend: true, noVerify: true });
  const renumbered = iteration === undefined ? undefined : await renumberedMessage(git, iteration);
  if (renumbered === undefined) return made;
  await git.raw(['commit', '--no-verify', '--amend', '--cleanup=verbatim', '-m', renumbered]);
  return { ...made, commit: (await git.head()) ?? made.commit };
}
