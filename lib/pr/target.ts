// --pr before the run: where the branch is pushed and which branch the pull request goes into, and what would
// stop either (no remote, no gh, gh not logged in, a detached HEAD). Part of the one preflight: the dry run
// says the same. Local questions go to git through simple-git; what may reach the network (ls-remote, gh)
// runs through Deps.exec, with a timeout and no terminal to prompt on.
import type { Deps } from '../deps.ts';
import { quietEnv, type Git } from '../repo/git.ts';
import { findOnPath } from '../process/zx.ts';

export interface PrTarget {
  remote: string;
  /** The branch, pushed under the same name. */
  branch: string;
  /** `origin/001-demo` when the branch already tracks its namesake there; otherwise set on the first push. */
  upstream?: string;
  /** The branch tracks another one (`origin/main`): left as it is, the push still goes to its namesake. */
  tracksOther?: string;
  /** The remote's default branch: the pull request goes into it. */
  base: string;
  /** Where `base` was read: `origin/HEAD`, `git ls-remote` or `gh repo view`. */
  baseFrom: string;
  /** --pr-draft: the pull request stays a draft even when every task is done. */
  keepDraft: boolean;
  /** gh's path. */
  gh: string;
}

export interface TargetContext {
  git: Git;
  root: string;
  branch?: string;
  deps: Deps;
  keepDraft: boolean;
}

/** The first non-empty line of a command's output, for a one-line message. */
export function firstLine(text: string, fallback: string): string {
  return text.split('\n').map((line) => line.trim()).find(Boolean) ?? fallback;
}

/** Resolves the --pr target; every reason it cannot be used goes to `problems` (then undefined). */
export async function resolvePrTarget(ctx: TargetContext, problems: string[]): Promise<PrTarget | undefined> {
  const { git, deps, branch } = ctx;
  const found: string[] = [];
  const exec = (bin: string, args: string[], timeoutMs = 30_000) => deps.exec(bin, args, { cwd: ctx.root, env: quietEnv(deps.env), timeoutMs });
  if (!branch) found.push('--pr pushes the current branch and opens a pull request from it, but HEAD is detached: check out the feature branch');
  const gh = findOnPath('gh', deps.env);
  let ghReady = false;
  if (!gh) {
    found.push("--pr opens the pull request with GitHub's CLI, but 'gh' is not on PATH: install it (https://cli.github.com: apt install gh, brew install gh or winget install GitHub.cli), then gh auth login");
  } else {
    const auth = await exec(gh, ['auth', 'status']);
    if (auth.exitCode === 0) ghReady = true;
    else found.push(`--pr: gh is not logged in to GitHub (${firstLine(`${auth.stderr}\n${auth.stdout}`, `gh auth status exited ${auth.exitCode}`)}): run gh auth login, or set GH_TOKEN`);
  }
  const remotes = (await git.attempt(['remote'])).output.split('\n').map((line) => line.trim()).filter(Boolean);
  const configured = branch ? (await git.attempt(['config', '--get', `branch.${branch}.remote`])).output.trim() : '';
  const remote = configured && remotes.includes(configured) ? configured : remotes.includes('origin') ? 'origin' : undefined;
  if (!remote) {
    found.push(`--pr needs a remote to push to: the branch has no upstream and there is no 'origin'${remotes.length > 0 ? ` (remotes: ${remotes.join(', ')})` : ''} (git remote add origin URL, or git branch --set-upstream-to REMOTE/BRANCH)`);
  }
  let base: { name: string; from: string } | undefined;
  if (remote && branch) {
    const resolved = await defaultBranch(git, remote, exec, ghReady ? gh : undefined);
    if ('problem' in resolved) found.push(resolved.problem);
    else if (resolved.name === branch) found.push(`--pr opens a pull request from the current branch into the default branch of ${remote}, but the current branch is that branch (${branch}): check out a feature branch (git switch -c NAME)`);
    else base = resolved;
  }
  problems.push(...found);
  if (found.length > 0 || !remote || !branch || !gh || !base) return undefined;
  const merge = (await git.attempt(['config', '--get', `branch.${branch}.merge`])).output.trim();
  const tracked = configured === remote && merge.startsWith('refs/heads/') ? merge.slice('refs/heads/'.length) : undefined;
  return {
    remote,
    branch,
    ...(tracked === branch ? { upstream: `${remote}/${branch}` } : tracked ? { tracksOther: `${remote}/${tracked}` } : {}),
    base: base.name,
    baseFrom: base.from,
    keepDraft: ctx.keepDraft,
    gh,
  };
}

type Exec = (bin: string, args: string[], timeoutMs?: number) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

/**
 * The remote's default branch: its HEAD as the clone recorded it (no network), else as the remote says
 * (`git ls-remote --symref`), else as GitHub says (`gh repo view`).
 */
async function defaultBranch(git: Git, remote: string, exec: Exec, gh: string | undefined): Promise<{ name: string; from: string } | { problem: string }> {
  const recorded = (await git.attempt(['symbolic-ref', '--short', '-q', `refs/remotes/${remote}/HEAD`])).output.trim();
  if (recorded.startsWith(`${remote}/`)) return { name: recorded.slice(remote.length + 1), from: `${remote}/HEAD` };
  const listed = await exec('git', ['ls-remote', '--symref', remote, 'HEAD']);
  const named = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(listed.stdout)?.[1];
  if (listed.exitCode === 0 && named) return { name: named, from: 'git ls-remote' };
  const why = listed.exitCode === 0 ? `${remote} names no HEAD branch` : firstLine(listed.stderr, `git ls-remote exited ${listed.exitCode}`);
  if (gh) {
    const viewed = await exec(gh, ['repo', 'view', '--json', 'defaultBranchRef']);
    try {
      const name = (JSON.parse(viewed.stdout) as { defaultBranchRef?: { name?: string } }).defaultBranchRef?.name;
      if (viewed.exitCode === 0 && name) return { name, from: 'gh repo view' };
    } catch {
      // not JSON: said below with git's reason
    }
  }
  return { problem: `--pr cannot tell the default branch of ${remote} to open the pull request into (${why}): set it with git remote set-head ${remote} --auto, or git remote set-head ${remote} BRANCH` };
}
