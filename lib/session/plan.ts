import { formatDuration } from '../duration.ts';
import { count } from '../progress/tasks-left.ts';
import type { Deps } from '../deps.ts';
import { startNotes, withUserWorkNote, type CommitMode } from '../repo/commit-set.ts';
import { isRalphFile } from '../repo/paths.ts';
import { DEFAULT_MAX_CONVERGE } from './converge.ts';
import type { LockState } from '../repo/lock.ts';
import { HEARTBEAT_WATCH_MS } from '../repo/lock-verdict.ts';
import type { Prepared } from './prepare.ts';
import { seatCommand, type Seat } from '../iteration/agent-roster.ts';
import type { Command } from '../process/runner.ts';
import type { BreakerLimits } from './breaker.ts';
import { describeWaiting } from '../questions/index.ts';
import type { RemotePlan } from './plan-remote.ts';
import { firstTasks } from './loop-end.ts';
import { planRecovery } from '../recovery/plan.ts';
import { forcedByUser, readJournal } from '../recovery/journal.ts';

/** --dry-run: every check, and what a real run would do; nothing is locked, run or written. */
export async function printPlan(prepared: Prepared, lock: LockState, deps: Deps): Promise<number> {
  const { config, source, agent, root } = prepared;
  const out: string[] = [];
  const problems = [...prepared.problems];
  out.push(`ralph dry run in ${root}${prepared.branch ? ` on branch ${prepared.branch}` : ' (detached HEAD)'}`);
  out.push(`source: ${source.name}, ${source.describe()}`);
  let userChanged = (await prepared.git.state().catch(() => ({ changed: [] as string[] }))).changed;
  const stateFiles = await Promise.resolve().then(() => source.workers.stateFiles()).catch(() => [] as string[]);
  const notesAt = out.length + 1;
  const commitNotes = (): string[] => startNotes(userChanged, stateFiles, prepared.commitMode).map((note) => `note: ${note}`);
  out.push(`commits: ${COMMIT_MODES[prepared.commitMode]}`, ...commitNotes());
  let ready: Array<{ id: string; title: string }> = [];
  let remaining = 0;
  let waiting: string[] = [];
  let prompt: string | undefined;
  const workers: Array<{ worker: number; task: { id: string; title: string } }> = [];
  let remote: RemotePlan | undefined;
  let recovering: string[] = [];
  if (problems.length === 0) {
    try {
      // What a real run settles first (lib/recovery/), and the tasks as it will see them afterwards.
      // (Not while another run holds the lock: what it has under way is not a dead run's.)
      const recovery = lock.held ? { lines: [] as string[], snapshot: undefined } : await planRecovery(root, prepared.git, source, prepared.remote !== undefined);
      if ('userPaths' in recovery) {
        // The notes about the user's changes as the run will give them: a dead run's work is not theirs.
        const before = commitNotes().length;
        userChanged = recovery.userPaths;
        out.splice(notesAt, before, ...commitNotes());
      }
      // The session a dead run left without an end (lib/session/dead-session.ts).
      if (!lock.held) {
        // A run forced to exit (a second Ctrl+C) wrote its code in its journal: said as the run will say it.
        const ended = readJournal(root)?.ended;
        const died = (await import('./dead-session.ts')).describeDeadSession(root, forcedByUser(ended) ? { exitCode: ended!.exitCode! } : undefined);
        if (died) recovery.lines.push(died);
      }
      // --remote: what the other hosts hold now is not this host's to start; the claims a dead run of this
      // clone left there are recovery's to release.
      const look = prepared.remote ? await (await import('./plan-remote.ts')).lookAtRemote(prepared, prepared.remote, deps, !lock.held) : undefined;
      if (look) recovery.lines.push(...look.recover);
      recovering = recovery.lines;
      out.push(...recovery.lines.map((line) => `would recover: ${line}`));
      const snapshot = recovery.snapshot ?? (await source.snapshot());
      remote = look?.plan;
      ready = snapshot.ready;
      remaining = snapshot.remaining.length;
      waiting = (snapshot.waiting ?? []).map((task) => task.id);
      // A task whose question waits for an answer is set aside, as the run would.
      out.push(`tasks: ${snapshot.done.length} done, ${remaining} remaining, ${ready.length} ready${waiting.length > 0 ? `, ${waiting.length} waiting for an answer to its question (${waiting.join(', ')}; ralph answer lists them)` : ''}`);
      if (look) out.push(...look.lines);
      if (ready.length > 0) {
        out.push('ready, in order:');
        ready.forEach((task, index) => out.push(`  ${index + 1}. ${task.id} ${task.title}`));
        const first = firstTasks(snapshot, source.workers, config.parallel, look?.held ?? new Set(), prepared.remote?.hostId);
        if (remote) {
          remote.first = first.map((task) => ({ id: task.id, title: task.title }));
          out.push(first.length > 0 ? `first tasks this host would take: ${first.map((task) => `${task.id} ${task.title}`).join('; ')}` : 'first tasks this host would take: none now: other hosts hold every task that may start; a real run waits and looks again');
        }
        if (config.parallel > 1) {
          out.push(`first on ${config.parallel} workers (each in a git worktree under .ralph/worktrees/, merged back one at a time):`);
          for (let worker = 1; worker <= config.parallel; worker += 1) {
            const task = first[worker - 1];
            out.push(task ? `  w${worker}: ${task.id} ${task.title}` : `  w${worker}: waits until a task may start beside these`);
            if (task) workers.push({ worker, task: { id: task.id, title: task.title } });
          }
        }
        const firstTask = (first[0] && snapshot.ready.find((task) => task.id === first[0]!.id)) ?? snapshot.ready[0]!;
        prompt = await source.prompt(firstTask, { iteration: 1, maxIterations: prepared.maxIterations, sessionId: 'dry-run', ...(config.parallel > 1 ? { worker: 1 } : {}) });
        if (config.parallel === 1) prompt = withUserWorkNote(prompt, userChanged.filter((file) => !isRalphFile(file)), stateFiles);
      } else if (remaining > 0) {
        problems.push(waiting.length > 0 ? describeWaiting(root, source, snapshot) : source.explainStuck(snapshot));
      } else {
        out.push('nothing to do: every task is complete');
      }
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const isolate = config.extra.get('isolate') === true;
  // Each agent of the list as the run starts it: the primary, then each --fallback in the order a usage
  // limit moves an iteration along.
  const sandbox = prepared.sandbox;
  const commandOf = (seat: Seat): Command => seatCommand(seat, { prompt: prompt ?? '', cwd: root, root, env: deps.env, isolate, write: false, ...(sandbox ? { wrap: sandbox.wrap.bind(sandbox) } : {}) });
  const command = commandOf(prepared.seats[0]!);
  out.push(`agent: ${[command.bin, ...command.args].map(quoteForDisplay).join(' ')}${command.stdin !== undefined ? ' < prompt on stdin' : ''}`);
  const fallbacks = prepared.seats.slice(1).map((seat) => {
    const wrapped = commandOf(seat);
    return { agent: seat.label, command: { bin: wrapped.bin, args: wrapped.args } };
  });
  if (fallbacks.length > 0) {
    out.push(`fallbacks: on a usage limit (or no credit left) the same iteration goes on with ${fallbacks.map((item) => item.agent).join(', then ')}; ${prepared.seats[0]!.label} comes back once its limit resets; ralph waits only when every one is limited`);
    fallbacks.forEach((item, index) => out.push(`  fallback ${index + 1}: ${[item.command.bin, ...item.command.args].map(quoteForDisplay).join(' ')}`));
  }
  if (isolate) {
    out.push(agent.isolation ? `isolation: off for ${agent.name}: ${agent.isolation.covers}; still from the user's configuration: ${agent.isolation.leaves}` : `isolation: the ${agent.name} CLI has none; it runs with the user's own configuration`);
  }
  if (prepared.sandbox) {
    const plan = prepared.sandbox.plan(root);
    out.push(`sandbox: bwrap, network ${plan.network ? 'on' : 'off'}; writable: ${[...plan.writable, ...plan.writableAfter, '/tmp (private)'].join(', ')}; hidden: ${plan.hidden.map((item) => item.path).join(', ') || 'nothing found to hide'}`);
  }
  if (prompt !== undefined) out.push(`prompt (${prompt.length} chars):`, ...prompt.split('\n').map((line) => `  | ${line}`));
  out.push(`limits: ${count(prepared.maxIterations, 'iteration')}, ${count(config.retries, 'attempt')} each, backoff ${formatDuration(config.retryDelay)} to ${formatDuration(config.retryMaxDelay)}, agent timeout ${config.timeout > 0 ? formatDuration(config.timeout) : 'none'}, idle timeout ${config.idleTimeout > 0 ? formatDuration(config.idleTimeout) : 'none'}`);
  out.push(`no-progress breaker: ${describeBreaker(prepared.breaker)}`);
  const converge = convergePlan(prepared);
  if (converge) out.push(`then converge: once every task is done, up to ${count(converge.maxPasses, 'pass', 'passes')}${converge.resumed > 0 ? ` (${converge.resumed} already made by a run that was cut short: ${converge.maxPasses - converge.resumed} left)` : ''}, each a fresh agent that appends what the spec still asks for as tasks; prompt: ${converge.via}`);
  // The project's own hooks around the work (Spec Kit's extension hooks): run, offered, or left.
  const hooks = prepared.problems.length === 0 ? (() => {
    try {
      return source.hooks?.describe(agent.name) ?? [];
    } catch (error) {
      problems.push((error as Error).message);
      return [];
    }
  })() : [];
  out.push(...hooks);
  const review = prepared.review;
  const reviewCommand = review ? review.agent.command({ prompt: '<review prompt>', model: review.model, extraArgs: [], cwd: root }) : undefined;
  out.push(
    review && reviewCommand
      ? `review: ${review.label} after each passing iteration (templates/review-prompt.md): ${[reviewCommand.bin, ...reviewCommand.args].map(quoteForDisplay).join(' ')}`
      : 'review: off (--review AGENT[:MODEL] adds an independent reviewer)',
  );
  const pr = prepared.pr ? await (await import('../pr/index.ts')).planPr(prepared.pr, root, deps) : undefined;
  if (pr) out.push(pr.line);
  if (lock.held) {
    problems.push(`the lock is held by PID ${lock.info?.pid ?? '?'} (started ${lock.info?.startedAt ?? '?'}, branch ${lock.info?.branch ?? '?'})${lock.reason ? `: ${lock.reason}` : ''}`);
    out.push('lock: held by another run');
  } else if (lock.stale) {
    const watch = lock.watch ? `, if the heartbeat stays still for ${HEARTBEAT_WATCH_MS / 1000}s` : '';
    out.push(`lock: stale (${lock.reason}); a real run would reclaim it${watch}`);
  } else {
    out.push('lock: free');
  }
  for (const problem of problems) out.push(`✗ ${problem}`);
  out.push(problems.length === 0 ? 'a real run could start now (dry run: nothing was changed)' : `a real run could not start: ${problems.length} problem(s)`);
  if (config.json) {
    deps.stdout.write(`${JSON.stringify({ dryRun: true, ok: problems.length === 0, source: source.name, target: source.describe(), ready, remaining, ...(waiting.length > 0 ? { waiting } : {}), ...(recovering.length > 0 ? { recover: recovering } : {}), ...(config.parallel > 1 ? { parallel: config.parallel, workers } : {}), command: { bin: command.bin, args: command.args }, ...(fallbacks.length > 0 ? { fallbacks } : {}), prompt, ...(converge ? { converge } : {}), ...(hooks.length > 0 ? { hooks } : {}), commits: { mode: prepared.commitMode, notes: commitNotes }, lock, breaker: prepared.breaker, review: review ? { agent: review.agent.name, model: review.model ?? null, label: review.label } : null, ...(pr ? { pr: pr.json } : {}), ...(remote ? { remote } : {}), problems })}\n`);
  } else {
    deps.stdout.write(`${out.join('\n')}\n`);
  }
  return problems.length === 0 ? 0 : 1;
}

const COMMIT_MODES: Record<CommitMode, string> = {
  ralph: "ralph commits each passing iteration: what it changed, never your own uncommitted changes, a file holding a secret, an environment file or a private key",
  agent: 'the agent commits its own work (ralph adds its task state to those commits, and commits what the agent leaves of a passing iteration; --commit makes ralph commit each passing iteration)',
  off: 'none (--no-commit): the work stays uncommitted',
};

/** `stop after 5 iterations in a row without progress, or 10 in a row on one task` (0 = off). */
export function describeBreaker(limits: BreakerLimits): string {
  const idle = limits.noProgress > 0 ? `stop (exit 1) after ${count(limits.noProgress, 'iteration')} in a row that finish no task and change nothing` : 'no stop for iterations without progress (--max-no-progress 0)';
  const task = limits.taskIterations > 0 ? `or after ${limits.taskIterations} in a row on one task without finishing it` : 'no limit per task (--max-task-iterations 0)';
  return `${idle}; ${task}`;
}

function quoteForDisplay(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** --converge in the dry run: passes, passes already made, and which prompt a pass would get. */
function convergePlan(prepared: Prepared): { maxPasses: number; resumed: number; via: string } | undefined {
  const support = prepared.source.converge;
  if (prepared.config.extra.get('converge') !== true || !support || prepared.problems.length > 0) return undefined;
  const maxPasses = (prepared.config.extra.get('max-converge') as number | undefined) ?? DEFAULT_MAX_CONVERGE;
  try {
    const { via } = support.prompt(1, maxPasses, { iteration: 1, maxIterations: prepared.maxIterations, sessionId: 'dry-run' }, prepared.agent.name);
    return { maxPasses, resumed: support.resumed(), via };
  } catch {
    return undefined;
  }
}
