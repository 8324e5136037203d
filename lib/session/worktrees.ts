// The workers' git worktrees: one per worker under .ralph/worktrees/ (git-ignored with the rest of .ralph/),
// each on its own branch. A worktree is reset to the feature branch's head before every task; work that is
// not merged (a failed or interrupted iteration, a conflict) is kept on a `ralph-kept/…` branch, never lost.
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describeLeftOut, keepLeftOutFiles, type CommitGuard, type LeftOut } from '../repo/commit-set.ts';
import { Git, gitReason } from '../repo/git.ts';
import { excludeFromGit } from '../repo/exclude.ts';
import { matchesAny } from '../repo/paths.ts';

export const WORKTREES_DIR = path.join('.ralph', 'worktrees');
export const WORKER_BRANCH_PREFIX = 'ralph-worker/';
export const KEPT_BRANCH_PREFIX = 'ralph-kept/';
/** Untracked folders a worktree borrows from the repository by symlink, so gates and agents can run. */
const SHARED_DIRS = ['node_modules'];

/** What keep() did: the branch holding the work, and the files it would not commit (copied to `saved`). */
export interface Kept {
  branch?: string;
  leftOut: LeftOut[];
  saved?: string;
}

export interface Worktree {
  worker: number;
  dir: string;
  branch: string;
  git: Git;
  /** The commit the current task started from. */
  base?: string;
}

export function workerBranch(worker: number): string {
  return `${WORKER_BRANCH_PREFIX}w${worker}`;
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'task';
}

/** Creates, resets, keeps and removes the workers' worktrees of one repository. */
export class Worktrees {
  private readonly main: Git;

  /** `guard`: what a kept branch may hold (no secrets, no private keys); without one, everything. */
  constructor(
    readonly root: string,
    private readonly guard?: CommitGuard,
  ) {
    this.main = new Git(root);
  }

  dirOf(worker: number): string {
    return path.join(this.root, WORKTREES_DIR, `w${worker}`);
  }

  /** git's worktree bookkeeping (add, prune, remove) is not safe to run twice at once: one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private serial<T>(job: () => Promise<T>): Promise<T> {
    const next = this.queue.then(job, job);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** A fresh worktree for `worker` on its branch at `base`. */
  create(worker: number, base: string): Promise<Worktree> {
    return this.serial(() => this.add(worker, base));
  }

  private async add(worker: number, base: string): Promise<Worktree> {
    const dir = this.dirOf(worker);
    const branch = workerBranch(worker);
    // A folder left behind goes, with git's record of it. (The sweep at start-up already pruned: with no
    // folder there is nothing to prune, and a silent prune costs simple-git's 50 ms wait, see Git.raw.)
    if (existsSync(dir)) {
      rmSync(dir, { recursive: true, force: true });
      await this.main.attempt(['worktree', 'prune', '-v']);
    }
    mkdirSync(path.dirname(dir), { recursive: true });
    const added = await this.main.attempt(['worktree', 'add', '-B', branch, dir, base]);
    if (!added.ok) {
      // A record whose folder someone removed: prune it and try once more.
      await this.main.attempt(['worktree', 'prune', '-v']);
      await this.main.raw(['worktree', 'add', '-B', branch, dir, base]);
    }
    for (const name of await this.sharedDirs()) {
      const link = path.join(dir, name);
      if (existsSync(link)) continue;
      try {
        symlinkSync(path.join(this.root, name), link, 'dir');
      } catch {
        // an agent can still install dependencies itself
      }
    }
    return { worker, dir, branch, git: new Git(dir), base };
  }

  private shared: string[] | undefined;
  /**
   * The untracked folders worth sharing: present in the repository and ignored there. A symlink is not a
   * folder to a `node_modules/` pattern, so `/node_modules` goes to .git/info/exclude, or an agent's
   * `git add -A` would commit the link.
   */
  private async sharedDirs(): Promise<string[]> {
    if (this.shared) return this.shared;
    this.shared = [];
    for (const name of SHARED_DIRS) {
      if (!existsSync(path.join(this.root, name))) continue;
      if ((await this.main.attempt(['check-ignore', name])).output.trim() === '') continue;
      await excludeFromGit(this.main, `/${name}`);
      this.shared.push(name);
    }
    return this.shared;
  }

  /** Puts the worktree at `base` with nothing left over, then copies the main worktree's state files in. */
  async reset(tree: Worktree, base: string, stateFiles: readonly string[]): Promise<void> {
    await tree.git.raw(['reset', '--hard', base]);
    await tree.git.raw(['clean', '-fd']);
    tree.base = base;
    copyState(this.root, tree.dir, stateFiles);
  }

  /**
   * Keeps what the worktree holds beyond its base (commits, and uncommitted changes as one WIP commit) on a
   * `ralph-kept/<session>/<task>-i<iteration>` branch; the branch name, or undefined when there was nothing.
   */
  async keep(tree: Worktree, label: { session: string; task: string; iteration: number | string }, stateFiles: readonly string[]): Promise<Kept> {
    const dirty = (await tree.git.changedSince(undefined)).files.filter((file) => !matchesAny(file, stateFiles) && !SHARED_DIRS.includes(file));
    let leftOut: LeftOut[] = [];
    if (dirty.length > 0) {
      const set = this.guard ? this.guard.forWorktree().decide(tree.dir, dirty) : { paths: dirty, leftOut: [] };
      leftOut = set.leftOut;
      const message = `ralph: work in progress on ${label.task} (iteration ${label.iteration}, not merged)`;
      await tree.git.commitPaths(set.paths, message, { 'Ralph-Task': label.task }, { noVerify: true });
    }
    const saved = keepLeftOutFiles(this.root, tree.dir, leftOut, `${safeName(label.session)}/${safeName(label.task)}-i${label.iteration}`);
    const head = await tree.git.head();
    if (!head || head === tree.base) return { leftOut, saved };
    // Work the feature branch already holds is not worth a branch of its own.
    const feature = `refs/heads/${await this.featureBranchName()}`;
    if (await tree.git.contains(feature, head)) return { leftOut, saved };
    // Nor work whose every change the feature branch holds as it is: a landing whose commit was amended with
    // the task's state there (a run killed after its merge leaves the worktree at the commit before).
    if (await holdsChanges(tree.git, feature, head, stateFiles)) return { leftOut, saved };
    const name = `${KEPT_BRANCH_PREFIX}${safeName(label.session)}/${safeName(label.task)}-i${label.iteration}`;
    await this.main.raw(['branch', '-f', name, head]);
    return { branch: name, leftOut, saved };
  }

  private feature: string | undefined;
  /** The branch the main worktree is on (the feature branch). */
  async featureBranchName(): Promise<string> {
    this.feature ??= (await this.main.branch()) ?? 'HEAD';
    return this.feature;
  }

  /**
   * Removes the worktrees and their branches (git's bookkeeping pruned once, the branches deleted in one
   * call); returns what git refused, one line per branch it could not delete.
   */
  removeAll(trees: readonly Worktree[]): Promise<string[]> {
    return this.serial(async () => {
      if (trees.length === 0) return [];
      // The folders go, then git forgets them in one prune (`worktree remove` prints nothing: simple-git
      // would wait 50 ms after each, see Git.raw).
      for (const tree of trees) rmSync(tree.dir, { recursive: true, force: true });
      await this.main.attempt(['worktree', 'prune', '-v']);
      const deleted = await this.main.attempt(['branch', '-D', ...trees.map((tree) => tree.branch)]);
      if (deleted.ok) return [];
      // One branch git could not delete (gone already) stops the others in the same call: one by one then.
      const refused: string[] = [];
      for (const tree of trees) {
        const one = await this.main.attempt(['branch', '-D', tree.branch]);
        if (!one.ok && (await this.main.attempt(['rev-parse', '--verify', '--quiet', `refs/heads/${tree.branch}`])).ok) refused.push(`could not delete the worker branch ${tree.branch}: ${gitReason(one.output, 'git branch -D failed')}`);
      }
      return refused;
    });
  }

  private async drop(tree: Worktree): Promise<void> {
    await this.main.attempt(['worktree', 'remove', '--force', tree.dir]);
    rmSync(tree.dir, { recursive: true, force: true });
    await this.main.attempt(['worktree', 'prune']);
    await this.main.attempt(['branch', '-D', tree.branch]);
  }

  /**
   * After a run that could not clean up (kill -9): keeps the leftover worktrees' unmerged work on kept
   * branches, removes the worktrees and the worker branches. Returns one message per thing done.
   */
  async sweep(session: string, stateFiles: readonly string[], who = 'a killed run'): Promise<string[]> {
    const messages: string[] = [];
    const base = path.join(this.root, WORKTREES_DIR);
    // A `git worktree add` killed half way leaves its record locked ("initializing"): no prune or add gets
    // past it. Every worktree under .ralph/worktrees is ralph's, and this run holds the lock.
    const listed = (await this.main.attempt(['worktree', 'list', '--porcelain'])).output.split('\n\n');
    for (const entry of listed) {
      const where = /^worktree (.+)$/m.exec(entry)?.[1];
      if (where && /^locked/m.test(entry) && path.resolve(where).startsWith(`${base}${path.sep}`)) await this.main.attempt(['worktree', 'unlock', where]);
    }
    const leftovers = existsSync(base) ? readdirSync(base).filter((name) => /^w\d+$/.test(name)) : [];
    for (const name of leftovers) {
      const worker = Number(name.slice(1));
      const dir = path.join(base, name);
      const tree: Worktree = { worker, dir, branch: workerBranch(worker), git: new Git(dir) };
      try {
        if (existsSync(path.join(dir, '.git')) && !addCutShort(dir)) {
          const kept = await this.keep(tree, { session, task: `w${worker}-leftover`, iteration: 'x' }, stateFiles);
          if (kept.branch) messages.push(`${who} left unmerged work in worktree ${name}: kept on branch ${kept.branch}`);
          if (kept.saved) messages.push(`not committed: ${kept.leftOut.map(describeLeftOut).join('; ')}: copied to ${kept.saved}`);
        }
      } catch (error) {
        messages.push(`could not keep the work left in ${dir}: ${(error as Error).message}; the worktree is left in place`);
        continue;
      }
      await this.drop(tree);
      messages.push(`removed the worktree ${path.join(WORKTREES_DIR, name)} ${who} left behind`);
    }
    // Nothing to prune when git knows of no worktree but the main one (a record whose folder is gone is listed too).
    if (leftovers.length > 0 || listed.filter((entry) => /^worktree /m.test(entry)).length > 1) await this.main.attempt(['worktree', 'prune']);
    const branches = (await this.main.attempt(['for-each-ref', '--format=%(refname:short)', `refs/heads/${WORKER_BRANCH_PREFIX}`])).output.split('\n').filter(Boolean);
    for (const branch of branches) {
      const merged = (await this.main.contains('HEAD', branch)) || (await holdsChanges(this.main, 'HEAD', branch, stateFiles));
      if (!merged) {
        const kept = `${KEPT_BRANCH_PREFIX}${safeName(session)}/${safeName(branch.slice(WORKER_BRANCH_PREFIX.length))}-leftover`;
        await this.main.attempt(['branch', '-f', kept, branch]);
        messages.push(`worker branch ${branch} held unmerged commits: kept as ${kept}`);
      }
      await this.main.attempt(['branch', '-D', branch]);
    }
    return messages;
  }
}

/**
 * A `git worktree add` killed before its checkout: HEAD still the placeholder git writes first (all zeros),
 * so nothing of a task can be in it, and every git command that reads all HEADs (a fetch) trips on it.
 */
function addCutShort(dir: string): boolean {
  try {
    const gitdir = /^gitdir: (.+)$/m.exec(readFileSync(path.join(dir, '.git'), 'utf8'))?.[1]?.trim();
    return gitdir !== undefined && /^0+$/.test(readFileSync(path.resolve(dir, gitdir, 'HEAD'), 'utf8').trim());
  } catch {
    return false;
  }
}

/** Whether `feature` has every path `head` changed since their merge base (state files aside) as `head` has it. */
async function holdsChanges(git: Git, feature: string, head: string, stateFiles: readonly string[]): Promise<boolean> {
  const base = await git.attempt(['merge-base', feature, head]);
  if (!base.ok || !base.output.trim()) return false;
  const changed = (await git.raw(['diff', '--name-only', '--no-renames', base.output.trim(), head])).split('\n').filter((file) => file && !matchesAny(file, stateFiles));
  if (changed.length === 0) return false;
  return (await git.raw(['--literal-pathspecs', 'diff', '--name-only', '--no-renames', feature, head, '--', ...changed])).trim() === '';
}

/** Branches holding work ralph kept instead of merging, newest name last. */
export async function keptBranches(git: Git): Promise<string[]> {
  return (await git.attempt(['for-each-ref', '--format=%(refname:short)', `refs/heads/${KEPT_BRANCH_PREFIX}`])).output.split('\n').filter(Boolean).sort();
}

/** The main worktree's state files, copied over the worktree's (or removed there when the main has none). */
function copyState(root: string, dir: string, stateFiles: readonly string[]): void {
  for (const file of stateFiles) {
    const from = path.join(root, file);
    const to = path.join(dir, file);
    rmSync(to, { recursive: true, force: true });
    if (!existsSync(from)) continue;
    mkdirSync(path.dirname(to), { recursive: true });
    cpSync(from, to, { recursive: lstatSync(from).isDirectory() });
  }
}
