// What ralph commits is a set of paths: what the run changed, never what the user had changed before it
// started, and never a file holding a secret. The decision is pure (decideCommitSet); reading the files
// for secret values is the one edge (CommitGuard.scan).
import { chmodSync, copyFileSync, existsSync, lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Git } from './git.ts';
import { ensurePrivateDir, PRIVATE_FILE } from './private-files.ts';
import type { Redactor } from '../redact/index.ts';
import { isRalphFile, matchesAny } from './paths.ts';

/** Why a changed path stays out of ralph's commit. */
export type LeftOutReason =
  /** The user had changed it before the run: left exactly as it is. */
  | { kind: 'user' }
  /** It holds the value of a secret variable of the run's environment. */
  | { kind: 'secret'; names: string[] }
  /** An environment file or a private key, by its name or its content: never committed by ralph. */
  | { kind: 'private'; what: string }
  /** Too big, or not readable, to be checked for secrets. */
  | { kind: 'unchecked'; bytes: number };

export interface LeftOut {
  path: string;
  why: LeftOutReason;
  /** Where a copy is kept when the file's own folder (a worker's worktree) is emptied. */
  savedTo?: string;
}

export interface CommitSet {
  /** The paths to commit (changed, new or deleted). */
  paths: string[];
  leftOut: LeftOut[];
}

/** Files bigger than this are not read for secrets: they are left out, and said so. */
export const MAX_SCANNED_BYTES = 64 * 1024 * 1024;

/** Environment files that are meant to be shared: templates without values. */
const SHAREABLE_ENV = /^\.env\.(example|sample|template|dist|defaults?|schema)$/i;
/** File names that hold credentials by convention. */
const PRIVATE_NAMES = /^(id_(rsa|dsa|ecdsa|ed25519)|\.netrc|\.pgpass|\.git-credentials|credentials)$/i;
const PRIVATE_EXTENSIONS = /\.(pem|key|p12|pfx|jks|keystore)$/i;

/** Whether a path names an environment file or a private key by convention (`.env`, `.env.local`, `id_rsa`, `*.pem`). Pure. */
export function privateByName(file: string): string | undefined {
  const base = path.posix.basename(file);
  if ((base === '.env' || base.startsWith('.env.')) && !SHAREABLE_ENV.test(base)) return 'an environment file';
  if (base.endsWith('.env') && base !== '.env' && !base.endsWith('.example.env')) return 'an environment file';
  if (PRIVATE_NAMES.test(base)) return 'a credentials file';
  if (PRIVATE_EXTENSIONS.test(base)) return 'a key or certificate file';
  return undefined;
}

const PRIVATE_KEY_HEADER = /-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----/;

/** What reading one path found: nothing, secret variable names, a private key, or that it was too big. */
export type ScanResult = { kind: 'clean' } | { kind: 'gone' } | { kind: 'secret'; names: string[] } | { kind: 'private'; what: string } | { kind: 'unchecked'; bytes: number };

export interface CommitPolicy {
  /** Paths the user had changed when the run started (relative, `/`-separated). */
  userPaths: ReadonlySet<string>;
  /** The task source's own state files and folders: ralph's, committed whoever changed them first. */
  bookkeeping: readonly string[];
  /** What a path holds, read from the work tree. */
  scan(file: string): ScanResult;
}

/** Splits the changed paths into what ralph commits and what it leaves out, with why. Pure but for `scan`. */
export function decideCommitSet(changed: readonly string[], policy: CommitPolicy): CommitSet {
  const paths: string[] = [];
  const leftOut: LeftOut[] = [];
  for (const file of changed) {
    const ours = matchesAny(file, policy.bookkeeping);
    if (!ours && policy.userPaths.has(file)) {
      leftOut.push({ path: file, why: { kind: 'user' } });
      continue;
    }
    const byName = ours ? undefined : privateByName(file);
    const found = policy.scan(file);
    if (found.kind === 'gone') {
      paths.push(file);
    } else if (found.kind === 'secret') {
      leftOut.push({ path: file, why: { kind: 'secret', names: found.names } });
    } else if (byName) {
      leftOut.push({ path: file, why: { kind: 'private', what: byName } });
    } else if (found.kind === 'private' || found.kind === 'unchecked') {
      leftOut.push({ path: file, why: found });
    } else {
      paths.push(file);
    }
  }
  return { paths, leftOut };
}

/** `changed` and the state files that exist (a folder stands for what it holds), each once. */
function withStateFiles(changed: readonly string[], state: readonly string[], cwd: string): string[] {
  const extra = state.map((file) => file.replace(/\/$/, '')).filter((file) => existsSync(path.join(cwd, file)));
  return [...changed.filter((file) => !matchesAny(file, extra)), ...extra];
}


/** How commits happen in a run: ralph commits each passing iteration, the agent commits its own work, or nobody (--no-commit). */
export type CommitMode = 'ralph' | 'agent' | 'off';

/**
 * What the run says, before it starts (and the dry run with it), about the changes it found: the user's own
 * stay out of ralph's commits; the source's state files go in. Pure.
 */
export function startNotes(changed: readonly string[], bookkeeping: readonly string[], mode: CommitMode): string[] {
  const files = changed.filter((file) => !isRalphFile(file)).sort();
  const ours = files.filter((file) => matchesAny(file, bookkeeping));
  const theirs = files.filter((file) => !matchesAny(file, bookkeeping));
  const notes: string[] = [];
  if (theirs.length > 0) {
    const list = `${theirs.length === 1 ? '1 path' : `${theirs.length} paths`}: ${listPaths(theirs)}`;
    notes.push(
      mode === 'ralph'
        ? `uncommitted changes from before the run (${list}) stay yours: ralph's commits leave them out, whatever the agent does to them`
        : mode === 'agent'
          ? `uncommitted changes from before the run (${list}): ralph's own commits leave them out, but the agent commits its work itself and may include them`
          : `uncommitted changes from before the run (${list}): ralph commits nothing in this run (--no-commit)`,
    );
  }
  if (ours.length > 0 && mode !== 'off') notes.push(`the task state ${listPaths(ours)} had uncommitted changes: ralph commits them with the task state`);
  return notes;
}

/** One line for a left-out path: `config.local.json (holds the value of ANTHROPIC_API_KEY)`. Never a value. */
export function describeLeftOut(item: LeftOut): string {
  return item.savedTo ? `${whyLeftOut(item)}, copied to ${item.savedTo}` : whyLeftOut(item);
}

function whyLeftOut(item: LeftOut): string {
  const why = item.why;
  switch (why.kind) {
    case 'user':
      return `${item.path} (changed before the run: left as you left it)`;
    case 'secret':
      return `${item.path} (holds the value of ${why.names.join(', ')})`;
    case 'private':
      return `${item.path} (${why.what}: never committed by ralph)`;
    case 'unchecked':
      return why.bytes > MAX_SCANNED_BYTES ? `${item.path} (${Math.round(why.bytes / 1024 / 1024)} MB: too big to check for secrets)` : `${item.path} (could not be read to check for secrets)`;
  }
}

/**
 * The prompt with a note on the user's own uncommitted work (an agent's `git add -A` would take it), the
 * task state aside (the agent ticks it). A bare slash command (beads' /sp:next) takes no text: unchanged.
 */
export function withUserWorkNote(prompt: string, userPaths: Iterable<string>, stateFiles: readonly string[]): string {
  const paths = [...userPaths].filter((file) => !matchesAny(file, stateFiles)).sort();
  if (paths.length === 0 || prompt.trimStart().startsWith('/')) return prompt;
  const note = `These paths held the user's own uncommitted changes before this run: ${listPaths(paths, 20)}. Leave them as they are: do not stage, commit, move or delete them. When you commit, add the files you changed by name (never \`git add -A\`, \`git add .\` or \`git commit -a\`).`;
  return `${prompt.trimEnd()}\n\n## Not yours to commit\n\n${note}\n`;
}

/** `a, b, c and 4 more`. */
export function listPaths(paths: readonly string[], most = 5): string {
  if (paths.length <= most) return paths.join(', ');
  return `${paths.slice(0, most).join(', ')} and ${paths.length - most} more`;
}

/**
 * The run's commit rules: the user's paths noted when the run started, the source's state files, and the
 * redactor's secret values. `decide(cwd, changed)` is what every commit of ralph's goes through.
 */
export class CommitGuard {
  constructor(
    readonly userPaths: ReadonlySet<string>,
    private readonly bookkeeping: () => readonly string[],
    private readonly redactor: Redactor | undefined,
    private readonly mentioned = new Set<string>(),
  ) {}

  /** True the first time a left-out path is named for this reason in this run. */
  firstMention(item: LeftOut): boolean {
    const key = `${item.why.kind}\0${item.path}`;
    if (this.mentioned.has(key)) return false;
    this.mentioned.add(key);
    return true;
  }

  /** A guard with no user paths (a worker's worktree starts clean). */
  forWorktree(): CommitGuard {
    return new CommitGuard(new Set(), this.bookkeeping, this.redactor, this.mentioned);
  }

  /**
   * Commits what changed in `git`'s work tree by these rules (only under `only` when given), or amends HEAD
   * with it; returns the commit and what was left out. ralph's own files (.ralph/, the lock) never count.
   */
  async commit(git: Git, message: string, trailers: Record<string, string>, options: { only?: readonly string[]; amend?: boolean; noVerify?: boolean; changed?: readonly string[] } = {}): Promise<{ commit?: string; leftOut: LeftOut[]; paths: string[] }> {
    const only = options.only;
    if (only && only.length === 0) return { leftOut: [], paths: [] };
    // `changed`: the paths a `git status` of this iteration already listed; the source's state files, which
    // it wrote since, are added as they stand (a folder as a whole), so no second `git status` is needed.
    const changed = only ? await git.changedUnder(only) : options.changed ? withStateFiles(options.changed, this.bookkeeping(), git.cwd) : (await git.state()).changed;
    const set = this.decide(git.cwd, changed.filter((file) => !isRalphFile(file)));
    const commit = await git.commitPaths(set.paths, message, trailers, options);
    return { ...(commit ? { commit } : {}), leftOut: set.leftOut, paths: commit ? set.paths : [] };
  }

  /**
   * What commits between `base` and `head` (the agent's own, which ralph never rewrites) add that ralph
   * would not commit: a secret value in an added line, an environment file or a private key. One
   * `git diff` of the added lines.
   */
  async inCommits(git: Git, base: string, head: string): Promise<LeftOut[]> {
    const diff = await git.attempt(['diff', '--unified=0', '--no-color', '--no-ext-diff', '--no-renames', `${base}..${head}`]);
    return diff.ok ? this.inPatch(diff.output) : [];
  }

  /** What the added lines of a patch (`git diff`, or `git log -p` of several commits) add that ralph never commits. */
  inPatch(patch: string): LeftOut[] {
    const found = new Map<string, LeftOut>();
    let file: string | undefined;
    let added: string[] = [];
    const close = (): void => {
      if (file === undefined) return;
      const text = added.join('\n');
      const names = this.redactor?.secretNamesIn(Buffer.from(text)) ?? [];
      const byName = privateByName(file);
      if (names.length > 0) found.set(file, { path: file, why: { kind: 'secret', names } });
      else if (byName && added.length > 0) found.set(file, { path: file, why: { kind: 'private', what: byName } });
      else if (PRIVATE_KEY_HEADER.test(text)) found.set(file, { path: file, why: { kind: 'private', what: 'a private key' } });
      added = [];
    };
    for (const line of patch.split('\n')) {
      if (line.startsWith('diff --git ')) {
        close();
        file = undefined;
      } else if (line.startsWith('+++ ')) {
        file = line === '+++ /dev/null' ? undefined : line.slice(6);
      } else if (file !== undefined && line.startsWith('+')) {
        added.push(line.slice(1));
      }
    }
    close();
    return [...found.values()];
  }

  decide(cwd: string, changed: readonly string[]): CommitSet {
    return decideCommitSet(changed, { userPaths: this.userPaths, bookkeeping: this.bookkeeping(), scan: (file) => this.scan(path.join(cwd, file)) });
  }

  /** Reads one file (not a folder, not through a symlink) for the run's secret values and private keys. */
  scan(file: string): ScanResult {
    let size = 0;
    let bytes: Buffer;
    try {
      const stat = lstatSync(file);
      if (!stat.isFile()) return { kind: 'clean' };
      size = stat.size;
      if (size > MAX_SCANNED_BYTES) return { kind: 'unchecked', bytes: size };
      bytes = readFileSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Deleted: the deletion is committed. Unreadable: not committed, since it could not be checked.
      return code === 'ENOENT' || code === 'ENOTDIR' ? { kind: 'gone' } : { kind: 'unchecked', bytes: size };
    }
    const names = this.redactor?.secretNamesIn(bytes) ?? [];
    if (names.length > 0) return { kind: 'secret', names };
    // A PEM header is ASCII: latin1 reads any bytes without a decoding cost.
    if (bytes.includes('PRIVATE KEY') && PRIVATE_KEY_HEADER.test(bytes.toString('latin1'))) return { kind: 'private', what: 'a private key' };
    return { kind: 'clean' };
  }
}

/** Where files a worktree held but ralph would not commit are kept, under .ralph/ (private, never committed). */
export const LEFT_OUT_DIR = path.join('.ralph', 'left-out');

/**
 * Copies the left-out files of a worktree that is about to be emptied to `.ralph/left-out/<label>/`, so
 * nothing is lost; the folder's path relative to `root`, or undefined when there was nothing to copy.
 */
export function keepLeftOutFiles(root: string, from: string, leftOut: readonly LeftOut[], label: string): string | undefined {
  const files = leftOut.filter((item) => item.why.kind !== 'user');
  if (files.length === 0) return undefined;
  const dir = path.join(root, LEFT_OUT_DIR, label);
  ensurePrivateDir(dir);
  for (const item of files) {
    const target = path.join(dir, item.path);
    try {
      ensurePrivateDir(path.dirname(target));
      copyFileSync(path.join(from, item.path), target);
      chmodSync(target, PRIVATE_FILE);
    } catch {
      // gone meanwhile: nothing to keep
    }
  }
  return path.relative(root, dir);
}
