// A session: everything one `ralph run` does around its loop. It owns the lock, recovery of an interrupted
// run, the state sinks, the summary and the report; the loop (./loop.ts) owns the iterations.
import { unexpectedError } from './unexpected.ts';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { onForcedExit, RELEASE_NOW_MS } from '../process/cleanup.ts';
import { forgetEndedAgent } from '../process/agent-pid.ts';
import type { Deps } from '../deps.ts';
import { createControl } from '../control/index.ts';
import { errorMessage, InterruptedError, LockHeldError, OutputClosedError, PrerequisiteError, RalphError, StopRequestedError } from '../errors.ts';
import { fileSystemError } from '../repo/fs-errors.ts';
import { EventBus, type IterationRecord, type RunSummary } from '../events.ts';
import { excludeRalphFiles } from '../repo/exclude.ts';
import type { CommitGuard } from '../repo/commit-set.ts';
import { isRalphFile } from '../repo/paths.ts';
import { inspectLock, type HeldLock } from '../repo/lock.ts';
import type { Task } from '../sources/types.ts';
import type { Command } from '../process/runner.ts';
import type { Agent } from '../agents/types.ts';
import { createView } from '../view/live.ts';
import { printError } from '../view/print-error.ts';
import { ensurePrivateDir, PRIVATE_FILE } from '../repo/private-files.ts';
import { Redactor, redactingOutput } from '../redact/index.ts';
import { printPlan } from './plan.ts';
import { reached } from '../recovery/crash-points.ts';
import type { Journal } from '../recovery/journal.ts';
import { prepare, type CommandLine, type Prepared } from './prepare.ts';
import { newSessionId } from './id.ts';
import { createConvergence, DEFAULT_MAX_CONVERGE } from './converge.ts';
import { AgentRoster } from '../iteration/agent-roster.ts';
import { summarizeLeft, summarizer } from './summary.ts';
import { giveBack, runOnExit, writeSessionReport } from './ending.ts';
import type { Handover } from '../pr/index.ts';
import { questionsAtStart } from '../questions/index.ts';

/** One session: prepare, lock, recover, loop, report, on-exit hook; returns the exit code. Never exits itself. */
export async function runSession(parsed: CommandLine, callerDeps: Deps, callerSignal: AbortSignal): Promise<number> {
  // The run's own abort, chained to the caller's: a write of the run's state that fails (a full disk) ends
  // the run through it, like Ctrl+C, but as a failure naming the file.
  const run = new AbortController();
  const signal = run.signal;
  if (callerSignal.aborted) run.abort(callerSignal.reason);
  else callerSignal.addEventListener('abort', () => run.abort(callerSignal.reason), { once: true });
  // Until the configuration is read, redact with the defaults; --no-redact and redactEnv apply from then on.
  let redactor = new Redactor({ env: callerDeps.env });
  const deps: Deps = {
    ...callerDeps,
    stdout: redactingOutput(callerDeps.stdout, () => redactor),
    stderr: redactingOutput(callerDeps.stderr, () => redactor),
  };
  const startedAt = deps.now();
  const bus = new EventBus(() => deps.now(), () => redactor);
  bus.onEssentialError = (error) => {
    if (!signal.aborted) run.abort(fileSystemError(error) ?? new RalphError(`cannot record the run's state: ${errorMessage(error)}`));
  };
  const flags = parsed.flags;
  const view = createView({ out: deps.stderr, env: deps.env, quiet: flags.get('quiet') === true, verbose: flags.get('verbose') === true, now: () => deps.now() });
  bus.add(view);
  // Until the lock is held, warnings wait: a run another run's lock refuses says the refusal and nothing else.
  let early: string[] | undefined = [];
  const say = (message: string): void => bus.emit({ type: 'warning', message });
  const warn = (message: string): void => void (early ? early.push(message) : say(message));
  const sayEarly = (): void => {
    const waiting = early ?? [];
    early = undefined;
    for (const message of waiting) say(message);
  };
  const records: IterationRecord[] = [];
  let lock: HeldLock | undefined;
  /** What the run has under way, for the next start after a crash (lib/recovery/journal.ts). */
  let journal: Journal | undefined;
  /** What a forced exit writes of the journal (once recovery made it). */
  let forcedEnd: ((exitCode?: number) => void) | undefined;
  let prepared: Prepared | undefined;
  /** --pr: pushes as work lands, and the pull request at the end. */
  let handover: Handover | undefined;
  let json = flags.get('json') === true;
  let roster: AgentRoster | undefined;
  const sessionId = newSessionId(startedAt);

  const summarize = summarizer({ sessionId, startedAt, now: () => deps.now(), records, prepared: () => prepared, roster: () => roster });

  let summary: RunSummary;
  let finished = false;
  try {
    prepared = await prepare(parsed, deps, warn);
    json = prepared.config.json;
    const heartbeat = prepared.config.extra.get('heartbeat') as number | undefined;
    if (heartbeat !== undefined) view.setHeartbeat?.(heartbeat);
    redactor = new Redactor({ env: deps.env, enabled: prepared.config.extra.get('redact') !== false, names: prepared.config.extra.get('redact-env') as string[] | undefined });
    const { config, source, root } = prepared;
    if (config.dryRun) {
      sayEarly();
      const lockState = inspectLock(root, deps.now());
      finished = true;
      return await printPlan(prepared, lockState, deps);
    }
    if (prepared.problems.length > 0) throw new PrerequisiteError(prepared.problems);
    // The notify modules load only when a webhook is set.
    const notifying = ((config.extra.get('notify') as string[] | undefined) ?? []).length > 0 ? await import('../notify/index.ts') : undefined;
    const notify = notifying?.notifySettings(config);
    if (prepared.branch === undefined) warn('HEAD is detached: commits will not be on a branch');

    // What only a real run needs is loaded now: --dry-run (above) starts without the loop, the agent
    // runner, the gates and the lock's library.
    const [{ acquireLock }, { runLoop }, { resolveGates, runGates }, { createUsageWait }, { killActiveNow }, { recoverAtStart }] = await Promise.all([
      import('../repo/lock.ts'),
      import('./loop.ts'),
      import('../gates.ts'),
      import('../iteration/usage-wait.ts'),
      import('../process/runner.ts'),
      import('./recover.ts'),
    ]);
    lock = await acquireLock({
      root,
      branch: prepared.branch ?? '(detached)',
      now: new Date(startedAt),
      // Said at once: a heartbeat watched for 7 s says why the start waits.
      warn: say,
      onCompromised: (error) => warn(`the lock ${root}/.ralph.lock was compromised: ${error.message}`),
      sleep: (ms) => deps.sleep(ms, signal),
    });
    const held = lock;
    sayEarly();
    ensurePrivateDir(path.join(root, '.ralph'));
    for (const sink of (await import('../progress/index.ts')).createStateSinks(root)) bus.add(sink);
    if (notifying && notify) bus.add(notifying.createNotifySink(notify, root, (text) => redactor.text(text), warn));
    await excludeRalphFiles(prepared.git).catch((error: unknown) => warn(`could not add ralph's files to .git/info/exclude: ${errorMessage(error)}`));
    /** --remote: this run's claims, released by a forced exit too (after the essentials: a bounded push). */
    let releaseClaimsNow: (() => void) | undefined;
    const dropForced = onForcedExit((exitCode) => {
      killActiveNow();
      forcedEnd?.(exitCode);
      held.releaseSync();
      releaseClaimsNow?.();
      // beads: the claims its workers hold in bd, as the normal end gives them back (bounded the same way).
      source.releaseNow?.(RELEASE_NOW_MS);
    });
    // `ralph stop` and `ralph pause` from another terminal, addressed to this lock.
    const control = createControl({ root, target: { pid: held.info.pid, startedAt: held.info.startedAt }, bus, deps, signal });
    try {
      const sandbox = prepared.sandbox;
      const workerAgent = prepared.agent;
      // The gates get the worker's sandbox; a reviewer's run gets its own CLI's state.
      const wrap = sandbox ? (command: Command, cwd: string, agent: Agent = workerAgent) => sandbox.wrap(command, cwd, agent) : undefined;
      const gateCommands = source.gatesByDefault || config.extra.has('gate') ? resolveGates(root, config) : [];
      const git = prepared.git;
      const runGatesIn = gateCommands.length > 0 ? (_iteration: number, cwd: string) => runGates(gateCommands, { cwd, signal, timeoutMs: config.timeout, graceMs: config.killGrace, wrap: wrap && ((command) => wrap(command, cwd)) }) : undefined;
      const commitTask = (guard: CommitGuard, task: Task, iteration: number, changed?: readonly string[]) => guard.commit(git, redactor.text(`ralph: ${task.id} ${task.title}`), { 'Ralph-Iteration': String(iteration), 'Ralph-Task': redactor.text(task.id) }, changed ? { changed } : {});
      const recovered = await recoverAtStart({ prepared, sessionId, redactor, now: () => deps.now(), warn, info: (message) => bus.emit({ type: 'info', message }), gates: runGatesIn, commitTask });
      journal = recovered.journal;
      forcedEnd = recovered.forcedEnd;
      const guard = recovered.guard;
      if (prepared.pr) {
        const title = redactor.text(source.title?.() ?? prepared.pr.branch);
        handover = new (await import('../pr/index.ts')).Handover({ target: prepared.pr, git: prepared.git, deps, root, sessionId, guard, title, signal, stopRequested: () => control.stopRequested(), info: (message) => bus.emit({ type: 'info', message }), warn, landedByRemote: prepared.remote?.name === prepared.pr.remote });
        bus.add(handover);
      }
      // Tasks whose question waits for an answer are set aside from the start; answered ones go again.
      for (const note of await questionsAtStart(root, source, new Date(deps.now()).toISOString())) bus.emit(note.warning ? { type: 'warning', message: note.message } : { type: 'info', message: note.message });
      const logDir = path.join(root, '.ralph', 'logs', sessionId);
      ensurePrivateDir(logDir);
      // .ralph/ ignores itself, so logs never show up in `git status` or an agent's `git add -A`.
      writeFileSync(path.join(root, '.ralph', '.gitignore'), '*\n', { mode: PRIVATE_FILE });
      bus.emit({ type: 'session_start', sessionId, source: source.name, target: source.describe(), agent: prepared.agent.name, maxIterations: prepared.maxIterations, branch: prepared.branch, pid: process.pid, logDir, ...(prepared.remote ? { remote: { name: prepared.remote.name, branch: prepared.remote.branch, host: prepared.remote.host } } : {}) });
      if (config.extra.get('isolate') === true && !prepared.agent.isolation) {
        warn(`--isolate: the ${prepared.agent.name} CLI has no way to start without the user's own configuration; it runs as usual`);
      }
      // ralph commits in every mode but --no-commit: each passing iteration, or what the agent leaves of one.
      const commits = prepared.commitMode !== 'off';
      roster = new AgentRoster(prepared.seats, () => deps.now());
      // What a commit asks git once per session (object format, commit hooks), asked now, not in iteration 1.
      if (commits) await git.warmUp();
      // --remote: the branch on the remote, this clone at its head, and the claims there (lib/landing/).
      const dock = prepared.remote ? await (await import('../landing/remote.ts')).joinRemote({ main: git, root, target: prepared.remote, config, run: sessionId, deps, signal, warn, info: (message) => bus.emit({ type: 'info', message }), stateFiles: () => source.workers.stateFiles() }) : undefined;
      releaseClaimsNow = dock && (() => dock.releaseNow());
      const commitWork = commits
        ? (task: Task, iteration: number, changed?: readonly string[]) => commitTask(guard, task, iteration, changed)
        : undefined;
      // Task state that no commit took (a failed last iteration, a worker's failure, an iteration a signal cut
      // short and put back) goes in one last commit, however the loop ended: the next start is a plain one;
      // what of the run stays uncommitted is said (--remote: every record was published as it was made).
      const closeState = async (): Promise<string[]> => (await import('./clean-tree.ts')).closeTree({ git, guard, mode: prepared!.commitMode, sessionId, stateFiles: source.workers.stateFiles(), bookkeeping: source.bookkeepingFiles(), remote: prepared!.remote !== undefined, warn });
      const result = await runLoop({
        usageWait: control.wrapUsageWait(createUsageWait(deps, bus)),
        control,
        // The gates run in the same sandbox as the agent, in the folder it worked in.
        gates: runGatesIn,
        // The agent committing its own work (Spec Kit, beads): what it leaves of a passing iteration, ralph commits.
        commit: config.parallel === 1 ? commitWork : undefined,
        commitPass: commitWork,
        ...(prepared.commitMode === 'agent' ? { agentCommits: { userPaths: guard.userPaths } } : {}),
        roster,
        // --converge: passes once every task is done; what a pass appends is committed (but with --no-commit).
        convergence: config.extra.get('converge') === true && source.converge ? createConvergence(source.converge, (config.extra.get('max-converge') as number | undefined) ?? DEFAULT_MAX_CONVERGE) : undefined,
        commitState: commits ? (message: string, iteration: number) => guard.commit(git, message, { 'Ralph-Iteration': String(iteration) }, { only: source.workers.stateFiles() }) : undefined,
        // The agent commits its own work: ralph's record of the iteration goes into that commit.
        amendState: prepared.commitMode === 'agent' ? (() => guard.commit(git, '', {}, { only: source.workers.stateFiles(), amend: true, noVerify: true })) : undefined,
        guard,
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
        breaker: prepared.breaker,
        review: prepared.review,
        redactor,
        wrap,
        dock,
      }).catch(async (error: unknown) => {
        await closeState();
        throw error;
      });
      const uncommitted = await closeState();
      summary = summarize(result.status, result.exitCode, result.message, { tasksRemaining: result.tasksRemaining, tasksSkipped: result.tasksSkipped, skippedTaskIds: result.skippedTaskIds, costUsd: result.costUsd, ...(result.converge ? { converge: result.converge } : {}), ...(result.remote ? { remote: result.remote } : {}), ...(result.hooks ? { hooks: result.hooks } : {}), ...(uncommitted.length > 0 ? { uncommitted } : {}) });
      finished = true;
    } finally {
      control.close();
      dropForced();
    }
  } catch (error) {
    if (error instanceof InterruptedError) {
      const message = error instanceof StopRequestedError ? error.message : `${error instanceof OutputClosedError ? error.message : `interrupted by ${error.signal}`}; the agent was stopped`;
      summary = await summarizeLeft(summarize, prepared, 'interrupted', error.exitCode, message);
    } else {
      // Every failure ends here: one line (a file-system error names its path), never a stack trace.
      const failure = error instanceof RalphError ? error : (fileSystemError(error) ?? unexpectedError(error, prepared?.root ?? deps.cwd, sessionId));
      // Refused by another run's lock: what this run noticed before is about a run that does not happen.
      if (failure instanceof LockHeldError) early = undefined;
      else sayEarly();
      view.clear?.();
      printError(deps, failure);
      summary = await summarizeLeft(summarize, prepared, 'failed', failure.exitCode, failure.message.split('\n')[0] ?? 'failed');
      if (failure instanceof PrerequisiteError) {
        summary.message = `${failure.problems.length} prerequisite(s) failed: ${failure.problems.join('; ')}`;
        summary.problems = failure.problems;
      }
    }
    finished = true;
  } finally {
    // Normally the lock goes after the final state is on disk (below); an unexpected error must not keep it.
    if (!finished) await lock?.release();
  }
  // However the run ended (0, 1, 2, 130): what it still holds in a shared task database goes back (beads: its workers' claims).
  if (lock && finished && prepared) await giveBack(prepared.source, warn);
  // The summary feeds the session record, both reports, --json and the on-exit hook: redacted once here.
  summary = redactor.deep(summary);
  // --pr: the last push and the pull request, once the run's summary (the body) is known; never a failure.
  if (handover) summary = { ...summary, pr: redactor.deep(await handover.finish(summary, callerSignal)) };
  const report = lock && prepared ? await writeSessionReport(prepared.root, summary, (message) => bus.emit({ type: 'info', message }), warn) : '';
  // Nothing under way any more (else the next start settles it): the journal goes, the status is final.
  // (Its work left uncommitted then is recorded: what changes after this is the user's.)
  const guardPaths = journal?.userPaths;
  forcedEnd = undefined;
  await journal?.close(async () => (await prepared!.git.state()).changed.filter((file) => !isRalphFile(file) && !(guardPaths && file in guardPaths)));
  // Its end recorded in the journal, the run's last agent needs no record of its own (lib/process/agent-pid.ts).
  if (journal && prepared) forgetEndedAgent(prepared.root);
  bus.emit({ type: 'session_end', summary });
  await bus.close();
  if (lock) reached('status_written');
  journal?.stopListening();
  await lock?.release();
  if (json) deps.stdout.write(`${JSON.stringify(summary)}\n`);
  const onExit = (prepared?.config.extra.get('on-exit') ?? flags.get('on-exit')) as string | undefined;
  if (onExit) await runOnExit(onExit, summary, report, redactor, prepared?.root ?? deps.cwd, deps);
  return summary.exitCode;
}
