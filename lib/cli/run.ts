import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import dayjs from 'dayjs';
import { getAgent } from '../agents/index.ts';
import type { Agent } from '../agents/types.ts';
import { readConfigFile, resolveConfig, type Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { errorMessage, InterruptedError, PrerequisiteError, RalphError } from '../errors.ts';
import { EventBus, type IterationRecord, type RunSummary } from '../events.ts';
import { excludeRalphFiles, Git } from '../git.ts';
import { acquireLock, inspectLock, type HeldLock } from '../lock.ts';
import { runLoop } from '../loop.ts';
import { killActiveNow } from '../runner.ts';
import { createSource, detectSource, noSourceError } from '../sources/index.ts';
import type { TaskSource } from '../sources/types.ts';
import { createView } from '../view/live.ts';
import { stopOrphanedAgent } from '../agent-pid.ts';
import { findOnPath } from '../which.ts';
import { onForcedExit } from '../cleanup.ts';
import { resolveGates, runGates } from '../gates.ts';
import type { Task } from '../sources/types.ts';
import type { ParsedArgv } from './argv.ts';
import { printError } from './print-error.ts';
import { printPlan } from './plan.ts';

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
}

/** Resolves config, source and agent, and checks every prerequisite, reporting all problems together. */
export async function prepare(parsed: ParsedArgv, deps: Deps, warn: (message: string) => void): Promise<Prepared> {
  const git = new Git(deps.cwd);
  const gitRoot = await git.root();
  const root = gitRoot ?? deps.cwd;
  const config = resolveConfig({ flags: parsed.flags, env: deps.env, file: readConfigFile(root), passthrough: parsed.passthrough });
  const problems: string[] = [];
  if (!gitRoot) problems.push(`not inside a git work tree (${deps.cwd}): run ralph from your project's repository`);
  const branch = gitRoot ? await git.branch() : undefined;

  const sourceName = config.source ?? await detectSource(root, { prd: config.extra.get('prd') as string | undefined });
  if (!sourceName) throw noSourceError(root);
  const source = await createSource(sourceName, { root, branch, config, deps, warn });

  const defaults = source.agentDefaults?.() ?? {};
  const agentName = config.extra.has('agent') ? config.agent : (defaults.agent ?? config.agent);
  const agent = getAgent(agentName, config.customAgent);
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
  const commitOn = (config.extra.get('commit') as boolean | undefined) ?? source.commitByDefault ?? false;
  const identity = gitRoot && commitOn ? await git.identityProblem() : undefined;
  if (identity) {
    problems.push(`no git identity to commit with (${identity}): set one with git config user.name "Your Name" and git config user.email you@example.com, or pass --no-commit`);
  }
  const maxIterations = config.maxIterations ?? source.defaultMaxIterations;
  return { root, branch, config, source, agent, profile, git, problems, warnings: [], maxIterations };
}

function sessionIdFor(now: number): string {
  return dayjs(now).format('YYYYMMDD-HHmmss');
}

/** `ralph run` / `ralph resume`: the whole lifecycle; returns the exit code. Never exits itself. */
export async function runCommand(parsed: ParsedArgv, deps: Deps, signal: AbortSignal): Promise<number> {
  const startedAt = deps.now();
  const bus = new EventBus(() => deps.now());
  const flags = parsed.flags;
  const view = createView({ out: deps.stderr, env: deps.env, quiet: flags.get('quiet') === true, verbose: flags.get('verbose') === true, now: () => deps.now() });
  bus.add(view);
  const warn = (message: string): void => bus.emit({ type: 'warning', message });
  const records: IterationRecord[] = [];
  let lock: HeldLock | undefined;
  let prepared: Prepared | undefined;
  let json = flags.get('json') === true;
  const sessionId = sessionIdFor(startedAt);

  const summarize = (status: RunSummary['status'], exitCode: number, message: string, partial?: Partial<RunSummary>): RunSummary => {
    const endedAt = deps.now();
    return {
      status,
      exitCode,
      message,
      sessionId,
      source: prepared?.source.name ?? 'unknown',
      agent: prepared?.agent.name ?? 'unknown',
      iterations: records.length,
      tasksCompleted: records.reduce((sum, item) => sum + item.tasksDone.length, 0),
      tasksRemaining: 0,
      startedAt: new Date(startedAt).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs: endedAt - startedAt,
      costUsd: records.reduce((sum, item) => sum + item.costUsd, 0),
      records,
      ...partial,
      success: exitCode === 0,
      completedCount: records.reduce((sum, item) => sum + item.tasksDone.length, 0),
      failedCount: records.filter((item) => item.outcome === 'fail').length,
    };
  };

  let summary: RunSummary;
  let finished = false;
  try {
    prepared = await prepare(parsed, deps, warn);
    json = prepared.config.json;
    const { config, source, root } = prepared;
    if (config.dryRun) {
      const lockState = inspectLock(root, deps.now());
      finished = true;
      return await printPlan(prepared, lockState, deps);
    }
    if (prepared.problems.length > 0) throw new PrerequisiteError(prepared.problems);
    if (prepared.branch === undefined) warn('HEAD is detached: commits will not be on a branch');
    if (source.name === 'speckit' && (await prepared.git.isDirty().catch(() => false))) {
      warn('git has uncommitted changes: the agent will start from them and may commit them with its story');
    }

    lock = await acquireLock({
      root,
      branch: prepared.branch ?? '(detached)',
      now: new Date(startedAt),
      warn,
      onCompromised: (error) => warn(`the lock ${root}/.ralph.lock was compromised: ${error.message}`),
    });
    const held = lock;
    for (const sink of (await import('../progress/index.ts')).createStateSinks(root)) bus.add(sink);
    await excludeRalphFiles(prepared.git).catch((error: unknown) => warn(`could not add ralph's files to .git/info/exclude: ${errorMessage(error)}`));
    const dropForced = onForcedExit(() => {
      killActiveNow();
      held.releaseSync();
    });
    try {
      // An agent a kill -9'd run left behind would edit the repo beside ours: stop it before recovery reads the state.
      const orphan = await stopOrphanedAgent(root, config.killGrace);
      if (orphan) warn(orphan);
      for (const message of await source.recover()) warn(message);
      const logDir = path.join(root, '.ralph', 'logs', sessionId);
      mkdirSync(logDir, { recursive: true });
      // .ralph/ ignores itself, so logs never show up in `git status` or an agent's `git add -A`.
      writeFileSync(path.join(root, '.ralph', '.gitignore'), '*\n');
      bus.emit({ type: 'session_start', sessionId, source: source.name, target: source.describe(), agent: prepared.agent.name, maxIterations: prepared.maxIterations, branch: prepared.branch, pid: process.pid, logDir });
      const gateCommands = source.gatesByDefault || config.extra.has('gate') ? resolveGates(root, config) : [];
      const commitOn = (config.extra.get('commit') as boolean | undefined) ?? source.commitByDefault ?? false;
      const git = prepared.git;
      const result = await runLoop({
        gates: gateCommands.length > 0 ? () => runGates(gateCommands, { cwd: root, signal, timeoutMs: config.timeout, graceMs: config.killGrace }) : undefined,
        commit: commitOn
          ? (task: Task, iteration: number) => git.commitAll(`ralph: ${task.id} ${task.title}`, { 'Ralph-Iteration': String(iteration), 'Ralph-Task': task.id })
          : undefined,
        root,
        config,
        deps,
        source,
        agent: prepared.agent,
        profile: prepared.profile,
        git: prepared.git,
        bus,
        signal,
        sessionId,
        logDir,
        maxIterations: prepared.maxIterations,
        records,
      });
      summary = summarize(result.status, result.exitCode, result.message, { tasksRemaining: result.tasksRemaining, costUsd: result.costUsd });
      finished = true;
    } finally {
      dropForced();
    }
  } catch (error) {
    if (error instanceof InterruptedError) {
      const remaining = await prepared?.source.snapshot().then((snapshot) => snapshot.remaining.length).catch(() => 0);
      summary = summarize('interrupted', error.exitCode, `interrupted by ${error.signal}; the agent was stopped`, { tasksRemaining: remaining ?? 0 });
    } else {
      if (!(error instanceof RalphError)) throw error;
      view.clear?.();
      printError(deps, error);
      summary = summarize('failed', error.exitCode, error.message.split('\n')[0] ?? 'failed');
      if (error instanceof PrerequisiteError) summary.message = `${error.problems.length} prerequisite(s) failed`;
    }
    finished = true;
  } finally {
    // Normally the lock goes after the final state is on disk (below); an unexpected error must not keep it.
    if (!finished) await lock?.release();
  }
  let report = '';
  if (lock && prepared) {
    try {
      const reports = (await import('../report/index.ts')).writeReports(prepared.root, summary);
      report = reports.markdown;
      bus.emit({ type: 'info', message: `report: ${reports.markdown} (HTML: ${reports.html})` });
    } catch (error) {
      warn(`could not write the session report: ${errorMessage(error)}`);
    }
  }
  bus.emit({ type: 'session_end', summary });
  await bus.close();
  await lock?.release();
  if (json) deps.stdout.write(`${JSON.stringify(summary)}\n`);
  const onExit = (prepared?.config.extra.get('on-exit') ?? flags.get('on-exit')) as string | undefined;
  if (onExit) {
    await (await import('../hooks.ts')).runOnExitHook(onExit, { RALPH_STATUS: summary.status, RALPH_EXIT_CODE: String(summary.exitCode), RALPH_REPORT: report, RALPH_SESSION: summary.sessionId }, prepared?.root ?? deps.cwd, 60_000, { baseEnv: deps.env, stderr: deps.stderr });
  }
  return summary.exitCode;
}

