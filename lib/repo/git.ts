import { accessSync, constants, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as SimpleGitModule from 'simple-git';
import type { SimpleGit } from 'simple-git';
import { isRalphFile } from './paths.ts';
import { RalphError } from '../errors.ts';
import { parseStatusV2, type WorkTreeState } from './status.ts';

// Required, not imported: under tsx, simple-git's CommonJS build loads in about a third of the time its
// ESM build takes through the loader hooks (median of 10 starts under load: ~100 vs ~270 ms).
const { simpleGit } = createRequire(import.meta.url)('simple-git') as typeof SimpleGitModule;

/** No prompt from git (credentials) or gh, whatever the terminal: ralph runs unattended. */
export function quietEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GIT_TERMINAL_PROMPT: '0', GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1' };
}

/**
 * simple-git 4 drops every ambient GIT_* variable unless allowed; these only say who commits and how git
 * finds its config, which users of CI, containers and tmux sessions rely on.
 */
const ALLOWED_GIT_ENV = [
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_CONFIG_GLOBAL',
] as const;

/** Past this many bytes of paths, a commit's paths go through a file (the command line has a limit). */
const PATHS_ON_COMMAND_LINE = 64 * 1024;

export { changedNow, parseStatusV2, type WorkTreeState } from './status.ts';

/** The paths in the git dir a start reads (git's objects, the exclude file, the hooks): asked with the layout. */
const LAID_OUT = ['objects', 'info/exclude', 'hooks'] as const;

/** The git facts and actions a run needs, through simple-git. */
export class Git {
  private readonly git: SimpleGit;
  private sha1: Promise<boolean> | undefined;
  private hooks: Promise<boolean> | undefined;
  private asked: Promise<string[] | undefined> | undefined;

  constructor(readonly cwd: string) {
    this.git = simpleGit({ baseDir: cwd, allowEnvironment: [...ALLOWED_GIT_ENV] });
  }

  /**
   * What a start asks of the repository's layout, in one git instead of five (each git a fork of ralph and a
   * start of git): the work tree's top, the common git dir and LAID_OUT's paths, one a line, asked once.
   * Undefined when git refuses (outside a work tree): each is then asked alone, as before.
   */
  private layout(): Promise<string[] | undefined> {
    this.asked ??= this.git.raw(['rev-parse', '--show-toplevel', '--git-common-dir', ...LAID_OUT.flatMap((name) => ['--git-path', name])]).then(
      (output) => {
        const lines = output.split('\n');
        return lines.length >= 2 + LAID_OUT.length ? lines : undefined;
      },
      () => undefined,
    );
    return this.asked;
  }

  /** The work tree's top folder, or undefined outside a git work tree. */
  async root(): Promise<string | undefined> {
    const layout = await this.layout();
    if (layout) return layout[0];
    try {
      return (await this.git.revparse(['--show-toplevel'])).trim();
    } catch {
      return undefined;
    }
  }

  /** The git dir the worktrees share (the main one's), absolute; undefined when git cannot tell. */
  async commonDir(): Promise<string | undefined> {
    const layout = await this.layout();
    const found = layout ? layout[1] : (await this.git.raw(['rev-parse', '--git-common-dir']).catch(() => '')).trim();
    return found ? path.resolve(this.cwd, found) : undefined;
  }

  /** The current branch; undefined on a detached HEAD. */
  async branch(): Promise<string | undefined> {
    try {
      const name = (await this.git.raw(['symbolic-ref', '--short', '-q', 'HEAD'])).trim();
      return name || undefined;
    } catch {
      return undefined;
    }
  }

  /** HEAD's commit, or undefined in a repository without commits. */
  async head(): Promise<string | undefined> {
    try {
      return (await this.git.revparse(['HEAD'])).trim();
    } catch {
      return undefined;
    }
  }

  /** HEAD and the uncommitted paths, from one `git status` process. */
  async state(): Promise<WorkTreeState> {
    try {
      return parseStatusV2(await this.git.raw(['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all']));
    } catch (error) {
      throw new RalphError(`git status failed: ${(error as Error).message.split('\n')[0]}`);
    }
  }

  /**
   * Files changed since `base`: committed since then and uncommitted now (commits count as progress);
   * `committed`: those the commits since `base` changed.
   */
  async changedSince(base: string | undefined, now?: WorkTreeState): Promise<{ files: string[]; committed: string[]; head?: string }> {
    const state = now ?? (await this.state());
    const committed = new Set<string>();
    if (base && state.head && base !== state.head) {
      try {
        for (const line of (await this.git.raw(['diff', '--name-only', `${base}..${state.head}`])).split('\n')) if (line) committed.add(line);
      } catch (error) {
        throw new RalphError(`git could not list changed files: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    const files = new Set([...state.changed, ...committed]);
    return { files: [...files].filter((file) => !isRalphFile(file)).sort(), committed: [...committed].filter((file) => !isRalphFile(file)).sort(), head: state.head };
  }

  /**
   * Commits exactly `paths` (new, changed or deleted), with trailers: whatever else is changed or staged (the
   * user's own work) stays as it is. `amend` folds them into HEAD instead. Undefined when nothing changed.
   * Paths are literal (no glob or pathspec magic); a huge set goes through a file, so any number fits.
   */
  async commitPaths(paths: readonly string[], message: string, trailers: Record<string, string>, options: { amend?: boolean; noVerify?: boolean } = {}): Promise<string | undefined> {
    if (paths.length === 0) return undefined;
    // A usual set goes on the command line; a huge one (thousands of paths) through a file in the git dir.
    const list = paths.reduce((sum, file) => sum + file.length + 1, 0) > PATHS_ON_COMMAND_LINE ? await this.gitPath('RALPH_COMMIT_PATHS') : undefined;
    if (list) writeFileSync(list, `${paths.join('\0')}\0`);
    const from = list ? [`--pathspec-from-file=${list}`, '--pathspec-file-nul'] : ['--', ...paths];
    try {
      await this.raw(['--literal-pathspecs', 'add', '-A', '--verbose', ...from]);
      const text = options.amend ? ['--amend', '--no-edit'] : ['-m', `${message}\n\n${Object.entries(trailers).map(([key, value]) => `${key}: ${value}`).join('\n')}\n`];
      // core.abbrev=40: git names the new commit in full, so no rev-parse is needed (as simple-git's commit()).
      const result = await this.attempt(['-c', 'core.abbrev=40', '--literal-pathspecs', 'commit', '--only', ...(options.noVerify ? ['--no-verify'] : []), ...text, ...from]);
      const made = /^\[\S+(?: \([^)]+\))? ([0-9a-f]+)\]/m.exec(result.output)?.[1];
      if (!made) {
        // Nothing to commit is not a failure (git exits 1 saying so on stdout, which simple-git calls success).
        if (result.ok || /nothing (added )?to commit|no changes added to commit/.test(result.output)) return undefined;
        throw new RalphError(`git commit failed: ${result.output.trim().split('\n').slice(0, 3).join(' ')}`, { hint: 'set a git identity (git config user.name / user.email) or pass --no-commit' });
      }
      return /^[0-9a-f]{40}$/.test(made) && (await this.usesSha1()) ? made : this.head();
    } finally {
      if (list) rmSync(list, { force: true });
    }
  }

  /** Asks now, in parallel, what every commit needs and is asked once: the object format, the commit hooks. */
  async warmUp(): Promise<void> {
    await Promise.all([this.usesSha1(), this.commitHooks()]);
  }

  /** Whether the repository names objects by SHA-1 (40 hex digits), asked once. */
  private usesSha1(): Promise<boolean> {
    this.sha1 ??= this.attempt(['rev-parse', '--show-object-format']).then((answer) => answer.ok && answer.output.trim() === 'sha1');
    return this.sha1;
  }

  /**
   * Whether `git commit` runs a hook here that could change files (pre-commit and kin, in core.hooksPath
   * or the git dir), looked at once: without one, a commit of everything leaves a clean work tree.
   */
  commitHooks(): Promise<boolean> {
    this.hooks ??= this.gitPath('hooks').then((dir) => {
      if (!dir) return true;
      return ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-merge-commit', 'reference-transaction', 'post-index-change'].some((name) => {
        try {
          accessSync(path.join(dir, name), constants.X_OK);
          return true;
        } catch {
          return false;
        }
      });
    });
    return this.hooks;
  }

  /**
   * Runs any git command; its stdout. Throws a RalphError naming the command when git fails.
   * simple-git waits 50 ms more after a command that printed nothing (its completion plugin, to catch late
   * output): ralph's own write commands on the loop's path run without `-q` (and `add` with `--verbose`)
   * so that they print what they did, which ralph ignores.
   */
  async raw(args: readonly string[]): Promise<string> {
    try {
      return await this.git.raw([...args]);
    } catch (error) {
      throw new RalphError(`git ${args.join(' ')} failed: ${(error as Error).message.trim().split('\n').slice(0, 3).join(' ')}`, { cause: error });
    }
  }

  /** Whether anything is staged (simple-git reads a silent non-zero exit as success: ask for names). */
  async hasStaged(): Promise<boolean> {
    return (await this.raw(['diff', '--cached', '--name-only'])).trim() !== '';
  }

  /** Whether HEAD is a commit made since `base` (not reachable from it) that no remote-tracking branch holds yet. */
  async madeSince(base: string): Promise<boolean> {
    const [fresh, published] = await Promise.all([this.attempt(['rev-list', '--max-count=1', `${base}..HEAD`]), this.attempt(['for-each-ref', '--count=1', '--contains', 'HEAD', '--format=%(refname)', 'refs/remotes/'])]);
    return fresh.ok && fresh.output.trim() !== '' && published.ok && published.output.trim() === '';
  }

  /** Whether `commit` is reachable from `from` (ancestor or the same commit). */
  async contains(from: string, commit: string): Promise<boolean> {
    const [base, wanted] = await Promise.all([this.attempt(['merge-base', from, commit]), this.attempt(['rev-parse', '--verify', '-q', `${commit}^{commit}`])]);
    return base.ok && wanted.ok && base.output.trim() !== '' && base.output.trim() === wanted.output.trim();
  }

  /** Like raw(), but a failure is data: `{ ok: false, output }`. Only failures that print something count. */
  async attempt(args: readonly string[]): Promise<{ ok: boolean; output: string }> {
    try {
      return { ok: true, output: await this.git.raw([...args]) };
    } catch (error) {
      return { ok: false, output: (error as Error).message };
    }
  }

  /** Uncommitted paths under `pathspecs` that git does not ignore (changed, new or deleted). */
  async changedUnder(pathspecs: readonly string[]): Promise<string[]> {
    if (pathspecs.length === 0) return [];
    return parseStatusV2(await this.raw(['status', '--porcelain=v2', '-z', '--untracked-files=all', '--', ...pathspecs])).changed;
  }

  /** Why git could not commit as someone (no user.name / user.email, none to guess), or undefined when it can. */
  async identityProblem(): Promise<string | undefined> {
    try {
      await this.git.raw(['var', 'GIT_AUTHOR_IDENT']);
      await this.git.raw(['var', 'GIT_COMMITTER_IDENT']);
      return undefined;
    } catch (error) {
      const lines = (error as Error).message.split('\n').map((line) => line.trim()).filter(Boolean);
      return (lines.find((line) => line.startsWith('fatal:')) ?? lines[0] ?? 'unknown').replace(/^fatal:\s*/, '');
    }
  }

  /** A path inside the git dir (worktree-aware), absolute. */
  async gitPath(name: string): Promise<string | undefined> {
    const index = (LAID_OUT as readonly string[]).indexOf(name);
    const layout = index === -1 ? undefined : await this.layout();
    if (layout) return path.resolve(this.cwd, layout[2 + index]!);
    try {
      const found = (await this.git.raw(['rev-parse', '--git-path', name])).trim();
      return path.resolve(this.cwd, found);
    } catch {
      return undefined;
    }
  }

  async recentCommits(count: number): Promise<string[]> {
    try {
      return (await this.git.raw(['log', '--oneline', `-${count}`])).split('\n').filter(Boolean);
    } catch {
      return [];
    }
  }
}

/**
 * git's own reason in a failed command's output, in one line: its first error or fatal line with the lines
 * that go on from it (the files it names, the cause after "unable to connect to HOST:"), up to the next such
 * line and without its advice; else its first line.
 */
export function gitReason(output: string, fallback = 'git failed'): string {
  const lines = output.split('\n').map((line) => line.trim()).filter(Boolean);
  const said = (line: string): boolean => /^(?:error|fatal):/.test(line);
  const at = lines.findIndex(said);
  if (at < 0) return lines[0] ?? fallback;
  const next = lines.findIndex((line, index) => index > at && said(line));
  const more = lines.slice(at + 1, next < 0 ? undefined : next).filter((line) => !/^(?:please|aborting|hint:)/i.test(line)).slice(0, 5);
  return [lines[at], ...more].join(' ');
}
