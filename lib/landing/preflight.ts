// What --remote needs before anything runs, each missing thing as one line: a remote of that name, a branch
// checked out, commits (work travels as commits), and a task source whose state can be shared.
import type { Config } from '../config.ts';
import type { Git } from '../git.ts';
import type { TaskSource } from '../sources/types.ts';
import { hostId, hostName } from './host.ts';
import type { RemoteTarget } from './types.ts';

/** --lease and --remote-wait when not given. */
export const DEFAULT_LEASE_MS = 10 * 60_000;
export const DEFAULT_REMOTE_WAIT_MS = 30 * 60_000;

/** The remote named by --remote / RALPH_REMOTE / "remote", when one is. */
export function remoteName(config: Config): string | undefined {
  const name = (config.extra.get('remote') as string | undefined)?.trim();
  return name ? name : undefined;
}

/** This clone's host id for the source's context, when --remote is on. */
export function remoteHost(config: Config, root: string): { host: string; hostId: string } | undefined {
  if (!remoteName(config)) return undefined;
  const host = hostName(config.extra.get('host-name') as string | undefined);
  return { host, hostId: hostId(host, root) };
}

export async function remoteTarget(git: Git, config: Config, source: TaskSource, branch: string | undefined, root: string, problems: string[]): Promise<RemoteTarget | undefined> {
  const name = remoteName(config);
  if (!name) return undefined;
  const found: string[] = [];
  const url = await git.attempt(['remote', 'get-url', name]);
  if (!url.ok) {
    const remotes = (await git.attempt(['remote'])).output.split('\n').filter(Boolean);
    found.push(`--remote ${name}: this repository has no remote of that name (${remotes.length > 0 ? `it has: ${remotes.join(', ')}` : 'it has none'}; git remote add ${name} URL)`);
  }
  if (!branch) found.push(`--remote ${name} shares the current branch with the other hosts, but HEAD is detached: check out the feature branch`);
  if (config.extra.get('commit') === false) found.push(`--remote ${name} lands work on the remote as commits: drop --no-commit (or the commit: false setting)`);
  const state = source.remoteState?.() ?? 'files';
  if (typeof state === 'object') found.push(state.problem);
  problems.push(...found);
  if (found.length > 0 || !branch || typeof state === 'object') return undefined;
  const host = remoteHost(config, root)!;
  return { name, branch, ...host, claims: state === 'files' ? 'refs' : 'database' };
}
