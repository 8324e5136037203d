// What --remote needs before anything runs, each missing thing as one line: a remote of that name, a branch
// checked out, commits (work travels as commits), and a task source whose state can be shared.
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import os from 'node:os';
import type { Config } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { gitReason, type Git } from '../repo/git.ts';
import type { TaskSource } from '../sources/types.ts';
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

export async function remoteTarget(git: Git, config: Config, source: TaskSource, branch: string | undefined, root: string, problems: string[], deps?: Deps): Promise<RemoteTarget | undefined> {
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
  // A converge pass works in the main worktree, alone: no claim, no landing on the remote yet.
  if (config.extra.get('converge') === true) found.push(`--converge cannot run with --remote ${name} yet: once the hosts are done, run ralph --converge on one of them without --remote (then push)`);
  const state = source.remoteState?.() ?? 'files';
  if (typeof state === 'object') found.push(state.problem);
  // A remote that does not answer now is a mistake to fix (a URL, a key, a VPN), not an outage to wait out.
  if (url.ok && deps) {
    const { remoteGit } = await import('./remote-git.ts');
    const listed = await remoteGit(deps, root)(['ls-remote', '--heads', name], 30_000);
    if (listed.exitCode !== 0) found.push(`--remote ${name} (${url.output.trim()}) does not answer: ${gitReason(listed.stderr, 'git ls-remote failed')}`);
  }
  problems.push(...found);
  if (found.length > 0 || !branch || typeof state === 'object') return undefined;
  const host = remoteHost(config, root)!;
  return { name, branch, ...host, claims: state === 'files' ? 'refs' : 'database' };
}

// Who this host is to the others: a name people read (`--host-name`, else the machine's), and an id unique
// per clone (two clones on one machine are two hosts) that stays the same from run to run, so a restarted
// host recognises the claims its killed run left in a shared database.
export function hostName(configured: string | undefined): string {
  return configured?.trim() || os.hostname() || 'host';
}

export function hostId(name: string, root: string): string {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // the path as given
  }
  const tag = createHash('sha1').update(real).digest('hex').slice(0, 4);
  return `${name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'host'}-${tag}`;
}
