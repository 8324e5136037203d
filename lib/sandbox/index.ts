// --sandbox bwrap: the agent's whole process tree (and ralph's quality gates) under bubblewrap. Writable:
// the repository (or a worker's worktree), a private /tmp and the agent CLI's own state folder; read-only:
// everything else; hidden: credentials (~/.ssh, ~/.aws, …) and a configurable list.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Agent } from '../agents/types.ts';
import type { Config } from '../config/index.ts';
import type { Command } from '../process/runner.ts';
import { findOnPath } from '../process/zx.ts';
import { isWithin, wrapCommand, type BwrapPlan, type PathKind } from './bwrap.ts';

export { bwrapArgs, type BwrapPlan } from './bwrap.ts';

/** Credentials under HOME hidden in every sandbox (those that exist). */
export const HIDDEN_IN_HOME = ['.ssh', '.aws', '.gnupg', '.config/gh', '.netrc', '.docker', '.git-credentials', '.config/gcloud', '.azure', '.kube'] as const;
/** Hidden too: the Docker socket is root on the host for whoever can reach it. */
export const HIDDEN_ABSOLUTE = ['/run/docker.sock', '/var/run/docker.sock'] as const;

export const BWRAP_PACKAGE = 'bubblewrap';

export interface SandboxSettings {
  network: boolean;
  /** Configured paths to hide beside the defaults (`~` is HOME). */
  hide: string[];
  /** Configured paths the agent may write beside the repository and its state. */
  writable: string[];
}

/** The sandbox settings of a run; undefined when it runs without one. */
export function sandboxSettings(config: Pick<Config, 'extra'>): SandboxSettings | undefined {
  if (config.extra.get('sandbox') !== 'bwrap') return undefined;
  const list = (name: string): string[] => {
    const value = config.extra.get(name);
    return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  };
  return { network: config.extra.get('sandbox-network') !== 'off', hide: list('sandbox-hide'), writable: list('sandbox-writable') };
}

/** `~` and `~/…` as paths under HOME; other paths made absolute from `base`. */
export function expandHome(file: string, home: string, base: string): string {
  if (file === '~') return home;
  if (file.startsWith('~/')) return path.join(home, file.slice(2));
  return path.resolve(base, file);
}

export interface SandboxHost {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
  /** The repository root: relative configured paths start there. */
  root: string;
  kindOf: (file: string) => PathKind | undefined;
}

/** What is wrong with --sandbox bwrap on this machine and this configuration, one line each. */
export function sandboxProblems(settings: SandboxSettings, host: SandboxHost): string[] {
  if (host.platform !== 'linux') return [`--sandbox bwrap: the sandbox is Linux-only for now (this machine runs ${host.platform}); run without --sandbox`];
  const problems: string[] = [];
  if (!findOnPath('bwrap', host.env)) {
    problems.push(`--sandbox bwrap: 'bwrap' not found on PATH: install the Debian package ${BWRAP_PACKAGE} (apt-get install ${BWRAP_PACKAGE})`);
  }
  for (const [option, list] of [['sandbox-hide', settings.hide], ['sandbox-writable', settings.writable]] as const) {
    for (const file of list) {
      const full = expandHome(file, host.home, host.root);
      if (!host.kindOf(full)) problems.push(`${option}: ${full} does not exist`);
    }
  }
  return problems;
}

/** Folder, file or other (socket, device) for an existing path; undefined when missing. */
export function kindOf(file: string): PathKind | undefined {
  try {
    const stat = statSync(file);
    return stat.isDirectory() ? 'dir' : stat.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}

function real(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The folders the sandbox has its own of (lib/sandbox/bwrap.ts): what lives below them outside is hidden inside. */
const PRIVATE_MOUNTS = ['/tmp', '/dev'];

/** Whether the sandbox's own /tmp or /dev (a TMPDIR or a PATH folder in /dev/shm) would hide `dir`. */
export function hiddenByPrivateMount(dir: string): boolean {
  return PRIVATE_MOUNTS.some((mount) => isWithin(dir, mount) && dir !== mount);
}

/**
 * The folder of the package `dir` belongs to: the nearest one above it (or itself) holding a package.json,
 * looked for only under /tmp or /dev, where the private mounts would hide it; `dir` itself when there is none.
 */
export function packageRoot(dir: string, kind: (file: string) => PathKind | undefined): string {
  for (let at = dir; hiddenByPrivateMount(at); at = path.dirname(at)) {
    if (kind(path.join(at, 'package.json')) === 'file') return at;
  }
  return dir;
}

/** Paths in order, without repeats and without any inside one listed before it (parents sorted first). */
function outermost(files: string[]): string[] {
  const kept: string[] = [];
  for (const file of [...new Set(files)].sort((a, b) => a.length - b.length)) {
    if (!kept.some((parent) => isWithin(file, parent))) kept.push(file);
  }
  return kept;
}

export interface SandboxContext {
  settings: SandboxSettings;
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  agent: Agent;
  /** The git folder shared by the repository's worktrees, when it is not inside the repository. */
  gitCommonDir?: string;
  kindOf?: (file: string) => PathKind | undefined;
}

/** The mounts of a sandbox whose agent works in `cwd`. */
export function planFor(context: SandboxContext, cwd: string): BwrapPlan {
  const { settings, root, home, env } = context;
  const kind = context.kindOf ?? kindOf;
  const exists = (file: string): boolean => kind(file) !== undefined;
  const ralphDir = path.join(root, '.ralph');

  // The private /tmp and /dev hide whatever lives there (/dev/shm too): bring back HOME and the PATH
  // folders, and the agent's whole package (a CLI reads files beside its script: its modules, its data).
  const pathDirs = (env.PATH ?? '').split(path.delimiter).filter((dir) => path.isAbsolute(dir));
  const found = findOnPath(context.agent.bin, env);
  const agentDir = found ? packageRoot(path.dirname(real(found)), kind) : undefined;
  const underTmp = outermost([home, ...pathDirs, ...(agentDir ? [agentDir] : [])].filter((dir) => hiddenByPrivateMount(dir) && kind(dir) === 'dir'));

  const state = context.agent.state;
  const statePaths = [
    ...(state?.paths ?? []).map((file) => path.join(home, file)),
    ...(state?.env ?? []).map((name) => env[name]).filter((dir): dir is string => Boolean(dir)),
  ];
  // A worker (its worktree under .ralph/) writes its worktree and the git folder it commits into, not the
  // repository's own working tree beside it, which ralph merges into.
  const worker = cwd !== root && isWithin(cwd, ralphDir);
  const gitDir = context.gitCommonDir ?? path.join(root, '.git');
  const writable = outermost([
    ...(worker && kind(gitDir) === 'dir' ? [gitDir] : [root]),
    ...(context.gitCommonDir && !isWithin(context.gitCommonDir, root) ? [context.gitCommonDir] : []),
    ...(isWithin(cwd, root) ? [] : [cwd]),
    ...statePaths.filter(exists),
    ...settings.writable.map((file) => expandHome(file, home, root)).filter(exists),
  ]);
  const readOnly = kind(ralphDir) === 'dir' ? [ralphDir] : [];
  const writableAfter = worker ? [cwd] : [];

  const socket = env.SSH_AUTH_SOCK ? [env.SSH_AUTH_SOCK] : [];
  const hidden = new Map<string, { path: string; kind: PathKind }>();
  for (const file of [...HIDDEN_IN_HOME.map((name) => path.join(home, name)), ...HIDDEN_ABSOLUTE, ...socket, ...settings.hide.map((item) => expandHome(item, home, root))]) {
    const what = kind(file);
    if (what && !hidden.has(real(file))) hidden.set(real(file), { path: file, kind: what });
  }
  return { network: settings.network, underTmp, writable, readOnly, writableAfter, hidden: [...hidden.values()] };
}

/**
 * One run's sandbox: wraps a command for the folder it works in. The agent decides which state folders are
 * writable: the worker's by default, a reviewer's (another CLI) when it runs.
 */
export class Sandbox {
  private readonly plans = new Map<string, BwrapPlan>();
  constructor(
    private readonly context: SandboxContext,
    private readonly bwrap = 'bwrap',
  ) {}

  plan(cwd: string, agent: Agent = this.context.agent): BwrapPlan {
    // A plan made before .ralph/ existed (the preflight's look at the command) must not be the run's: the
    // run's plan mounts .ralph/ read-only.
    const ralph = (this.context.kindOf ?? kindOf)(path.join(this.context.root, '.ralph')) === 'dir';
    const key = `${agent.name}\0${agent.bin}\0${cwd}\0${ralph}`;
    let plan = this.plans.get(key);
    if (!plan) {
      plan = planFor({ ...this.context, agent }, cwd);
      this.plans.set(key, plan);
    }
    return plan;
  }

  wrap(command: Command, cwd: string, agent?: Agent): Command {
    return wrapCommand(this.plan(cwd, agent), cwd, command, this.bwrap);
  }
}
