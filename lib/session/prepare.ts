// Preparing a run: config, source, agent and every prerequisite, checked before anything changes.
import { getAgent } from '../agents/index.ts';
import type { CommitMode } from '../repo/commit-set.ts';
import { seatCommand, seatLabel, type Seat } from '../iteration/agent-roster.ts';
import type { Agent } from '../agents/types.ts';
import type { OptionValue } from '../config/values.ts';
import { readConfigFile, resolveConfig, type Config } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { PrerequisiteError } from '../errors.ts';
import { Git } from '../repo/git.ts';
import { refuseIfHeld } from '../repo/lock.ts';
import { createSource, detectSource, noSourceError } from '../sources/index.ts';
import type { TaskSource } from '../sources/types.ts';
import { findOnPath } from '../process/zx.ts';
import type { Reviewer } from '../iteration/review.ts';
import { parseReviewSpec } from '../iteration/review-spec.ts';
import { DEFAULT_BREAKER, type BreakerLimits } from './breaker.ts';
import { formatDuration } from '../duration.ts';
import type { Sandbox } from '../sandbox/index.ts';
import type { PrTarget } from '../pr/target.ts';
import { remoteHost, remoteTarget } from '../landing/preflight.ts';
import type { RemoteTarget } from '../landing/types.ts';
import { accessSync, constants, existsSync, lstatSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Prepared {
  root: string;
  branch?: string;
  config: Config;
  source: TaskSource;
  agent: Agent;
  profile?: string;
  git: Git;
  problems: string[];
  warnings: string[];
  maxIterations: number;
  /** The independent reviewer (--review), when on. */
  review?: Reviewer;
  /** The no-progress breaker's limits. */
  breaker: BreakerLimits;
  /** --sandbox bwrap, once every check of it passed. */
  sandbox?: Sandbox;
  /** Who commits: ralph (each passing iteration), the agent (ralph amends its task state into those commits), or nobody. */
  commitMode: CommitMode;
  /** The agents in order: the primary, then each --fallback (lib/iteration/agent-roster.ts). */
  seats: Seat[];
  /** --remote: the remote and branch every host shares, once every check of it passed. */
  remote?: RemoteTarget;
  /** --pr: where the branch is pushed and the pull request goes, once every check of it passed. */
  pr?: PrTarget;
}

/** What the command line gave: option values by name and the arguments after `--`. */
export interface CommandLine {
  flags: Map<string, OptionValue>;
  passthrough: string[];
}

/** Resolves config, source and agent, and checks every prerequisite, reporting all problems together. */
export async function prepare(parsed: CommandLine, deps: Deps, warn: (message: string) => void): Promise<Prepared> {
  const git = new Git(deps.cwd);
  const gitRoot = await git.root();
  const root = gitRoot ?? deps.cwd;
  const config = resolveConfig({ flags: parsed.flags, env: deps.env, file: readConfigFile(root), passthrough: parsed.passthrough });
  // A live run's lock refuses this one before anything else is read, said or written.
  if (gitRoot && !config.dryRun) refuseIfHeld(root, deps.now());
  const problems: string[] = [];
  if (!gitRoot) problems.push(`not inside a git work tree (${deps.cwd}): run ralph from your project's repository`);
  const branch = gitRoot ? await git.branch() : undefined;

  const sourceName = config.source ?? await detectSource(root, { prd: config.extra.get('prd') as string | undefined });
  if (!sourceName) {
    // Outside a git work tree that is the first thing to say; the missing source comes second.
    if (!gitRoot) throw new PrerequisiteError([...problems, noSourceError(root).message]);
    throw noSourceError(root);
  }
  const host = remoteHost(config, root);
  const source = await createSource(sourceName, { root, branch, config, deps, warn, ...(host ? { host: host.hostId } : {}) });

  const defaults = source.agentDefaults?.() ?? {};
  const agentName = config.extra.has('agent') ? config.agent : (defaults.agent ?? config.agent);
  const agent = await getAgent(agentName, config.customAgent);
  const profile = config.agentProfile ?? (agentName === defaults.agent ? defaults.profile : undefined);
  if (!findOnPath(agent.bin, deps.env)) {
    problems.push(`agent CLI '${agent.bin}' not found on PATH: install it or choose another with --agent`);
  }
  if (sourceName === 'beads' && !findOnPath('bd', deps.env)) {
    problems.push("'bd' (beads) not found on PATH: install beads (npm i -g @beads/bd) or choose another --source");
  } else {
    problems.push(...(await source.check()));
  }
  // A commit that fails after the agent's work would leave the task marked done but uncommitted: check first.
  const commitOption = config.extra.get('commit') as boolean | undefined;
  // Several workers merge back through commits: they always commit.
  if (config.parallel > 1 && commitOption === false) problems.push(`--parallel ${config.parallel} merges the workers' work back as commits: drop --no-commit (or the commit: false setting), or run with --parallel 1`);
  const remote = gitRoot ? await remoteTarget(git, config, source, branch, root, problems, deps) : undefined;
  const commitOn = config.parallel > 1 || remote !== undefined || (commitOption ?? source.commitByDefault ?? false);
  const identity = gitRoot && commitOn ? await git.identityProblem() : undefined;
  if (identity) {
    problems.push(`no git identity to commit with (${identity}): set one with git config user.name "Your Name" and git config user.email you@example.com, or pass --no-commit`);
  }
  if (config.parallel > 1 && gitRoot && problems.length === 0) problems.push(...(await parallelProblems(git, config.parallel)));
  const maxIterations = config.maxIterations ?? source.defaultMaxIterations;
  const review = await resolveReviewer(config, deps.env, problems);
  const limit = (name: string, fallback: number): number => (config.extra.get(name) as number | undefined) ?? fallback;
  const breaker = { noProgress: limit('max-no-progress', DEFAULT_BREAKER.noProgress), taskIterations: limit('max-task-iterations', DEFAULT_BREAKER.taskIterations) };
  // The sandbox's modules load only when --sandbox (or the setting) is given.
  const sandbox = config.extra.has('sandbox') ? await prepareSandbox(config, { root, agent, deps, problems }) : undefined;
  // What would stop the run at its first write or its first agent is found now, so the dry run says it too.
  if (gitRoot) problems.push(...(await workspaceProblems(root, git)));
  problems.push(...valueProblems(config));
  if (config.extra.get('converge') === true && !source.converge) problems.push(`--converge works in Spec Kit mode only: ${source.name} mode does not converge yet (drop --converge, or RALPH_CONVERGE / "converge" in ralph.config.json)`);
  if (((config.extra.get('notify') as string[] | undefined) ?? []).length > 0) {
    try {
      (await import('../notify/index.ts')).notifySettings(config);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const seats = await resolveSeats(config, { agent, profile }, deps.env, problems);
  // Each agent's command as the run starts it (seatCommand), asked whether its CLI would refuse it.
  const launch = { prompt: '', cwd: root, root, env: deps.env, isolate: config.extra.get('isolate') === true, write: false, ...(sandbox ? { wrap: sandbox.wrap.bind(sandbox) } : {}) };
  const checked: Array<[string, Seat]> = seats.map((seat, index) => [index === 0 ? 'agent' : `the fallback ${seat.label}`, seat]);
  if (review) checked.push(['reviewer', { label: review.label, agent: review.agent, model: review.model, extraArgs: [] }]);
  for (const [who, seat] of checked) {
    const refusal = seat.agent.refuses?.(seatCommand(seat, launch), { uid: process.getuid?.(), env: deps.env });
    if (refusal) problems.push(who === 'agent' ? refusal : who === 'reviewer' ? `the reviewer (--review ${review!.label}): ${refusal}` : `${who} (--fallback): ${refusal}`);
  }
  // --pr: a remote, gh logged in, the branch to open the pull request into; its modules load only then.
  const prOn = config.extra.get('pr') === true;
  if (config.extra.get('pr-draft') === true && !prOn) problems.push('--pr-draft keeps the pull request of --pr a draft, but --pr is off: add --pr, or drop --pr-draft (or "prDraft" in ralph.config.json)');
  const pr = prOn && gitRoot ? await (await import('../pr/target.ts')).resolvePrTarget({ git, root, branch, deps, keepDraft: config.extra.get('pr-draft') === true }, problems) : undefined;
  const commitMode: CommitMode = commitOn ? 'ralph' : commitOption === false ? 'off' : 'agent';
  return { root, branch, config, source, agent, profile, git, problems, warnings: [], maxIterations, review, breaker, sandbox, commitMode, seats, ...(pr ? { pr } : {}), ...(remote ? { remote } : {}) };
}

/** The reviewer --review names, its CLI checked like the worker's; problems are added to `problems`. */
async function resolveReviewer(config: Config, env: NodeJS.ProcessEnv, problems: string[]): Promise<Reviewer | undefined> {
  const value = config.extra.get('review') as string | undefined;
  const spec = parseReviewSpec(value);
  if (!spec) return undefined;
  let agent: Agent;
  try {
    agent = await getAgent(spec.agent, config.customAgent);
  } catch (error) {
    problems.push(`--review ${value}: ${(error as Error).message}`);
    return undefined;
  }
  if (!findOnPath(agent.bin, env)) problems.push(`reviewer CLI '${agent.bin}' (--review ${value}) not found on PATH: install it or choose another reviewer`);
  return { agent, ...(spec.model ? { model: spec.model } : {}), label: value!.trim() };
}

/** Workers start from the branch's last commit and merge into the branch: both must exist. */
async function parallelProblems(git: Git, parallel: number): Promise<string[]> {
  const problems: string[] = [];
  if (!(await git.branch())) problems.push(`--parallel ${parallel} merges the workers' commits into the current branch, but HEAD is detached: check out the feature branch`);
  if (!(await git.head())) problems.push(`--parallel ${parallel} starts the workers from the last commit, but the repository has none: commit first`);
  return problems;
}

/** Checks --sandbox bwrap (Linux, bwrap installed and able to run here, configured paths) and builds it. */
async function prepareSandbox(config: Config, context: { root: string; agent: Agent; deps: Deps; problems: string[] }): Promise<Sandbox | undefined> {
  const { kindOf, Sandbox, sandboxProblems, sandboxSettings } = await import('../sandbox/index.ts');
  const settings = sandboxSettings(config);
  if (!settings) return undefined;
  const { root, agent, deps } = context;
  const home = deps.env.HOME ?? os.homedir();
  const issues = sandboxProblems(settings, { platform: process.platform, env: deps.env, home, root, kindOf });
  const bwrap = findOnPath('bwrap', deps.env);
  if (issues.length === 0 && bwrap) {
    // bwrap can be installed and still unable to work: no user namespaces for this user, say.
    const probe = ['--unshare-pid', '--cap-drop', 'ALL', ...(settings.network ? [] : ['--unshare-net']), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'];
    const result = await deps.exec(bwrap, probe, { cwd: root, env: deps.env, timeoutMs: 15_000 });
    if (result.exitCode !== 0) {
      const why = (result.stderr.trim().split('\n')[0] ?? '') || `exit ${result.exitCode}`;
      issues.push(`--sandbox bwrap: bwrap cannot create a sandbox on this machine (${why}); user namespaces may be off: sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0`);
    }
  }
  context.problems.push(...issues);
  if (issues.length > 0 || !bwrap) return undefined;
  const common = await deps.exec('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: root, env: deps.env });
  const gitCommonDir = common.exitCode === 0 && common.stdout.trim() ? path.resolve(root, common.stdout.trim()) : undefined;
  return new Sandbox({ settings, root, home, env: deps.env, agent, gitCommonDir }, bwrap);
}

/** Where ralph writes must be writable, and .ralph/ a folder: found before the run, not at its first write. */
async function workspaceProblems(root: string, git: Git): Promise<string[]> {
  const problems: string[] = [];
  const own = path.join(root, '.ralph');
  const kind = (() => {
    try {
      return lstatSync(own).isDirectory() ? 'folder' : 'other';
    } catch {
      return 'none';
    }
  })();
  if (kind === 'other') problems.push(`${own} is not a folder: ralph keeps its state (logs, status, reports) in the folder .ralph/; move the file away`);
  const unwritable = (target: string, why: string): void => {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      problems.push(`${target} is not writable (${describeAccess(error)}): ${why}`);
    }
  };
  unwritable(root, 'ralph writes its lock, its state in .ralph/ and the agent its work there');
  if (kind === 'folder') unwritable(own, 'ralph keeps its logs, status and reports there');
  const objects = await git.gitPath('objects');
  if (objects && existsSync(objects)) unwritable(objects, "commits (the agent's and ralph's) are written there");
  return problems;
}

function describeAccess(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EROFS' ? 'read-only file system' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (code ?? 'cannot write');
}

/** Values that parse but make no sense together. */
function valueProblems(config: Config): string[] {
  const problems: string[] = [];
  if (config.retryDelay > config.retryMaxDelay) {
    problems.push(`--retry-delay ${formatDuration(config.retryDelay)} is longer than --retry-max-delay ${formatDuration(config.retryMaxDelay)}: the first backoff would already pass the cap; lower --retry-delay or raise --retry-max-delay`);
  }
  return problems;
}

/** The agents in order: the primary, then each --fallback AGENT[:MODEL] (comma lists allowed), each checked like the primary. */
async function resolveSeats(config: Config, primary: { agent: Agent; profile?: string }, env: NodeJS.ProcessEnv, problems: string[]): Promise<Seat[]> {
  const seats: Seat[] = [{ label: seatLabel(primary.agent.name, config.model), agent: primary.agent, model: config.model, profile: primary.profile, extraArgs: config.extraArgs }];
  const values = ((config.extra.get('fallback') as string[] | undefined) ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
  for (const value of values) {
    const spec = parseReviewSpec(value);
    if (!spec) continue;
    let agent: Agent;
    try {
      agent = await getAgent(spec.agent, config.customAgent);
    } catch (error) {
      problems.push(`--fallback ${value}: ${(error as Error).message}`);
      continue;
    }
    const label = seatLabel(agent.name, spec.model);
    if (seats.some((seat) => seat.label === label)) {
      problems.push(`--fallback ${value}: ${label} is already in the list (${seats.map((seat) => seat.label).join(', ')})`);
      continue;
    }
    if (!findOnPath(agent.bin, env)) problems.push(`fallback CLI '${agent.bin}' (--fallback ${value}) not found on PATH: install it or drop it from --fallback`);
    // Arguments after -- are the primary CLI's: another CLI would refuse them.
    seats.push({ label, agent, ...(spec.model ? { model: spec.model } : {}), extraArgs: agent.name === primary.agent.name ? config.extraArgs : [] });
  }
  return seats;
}
