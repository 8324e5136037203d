// The session's state machine: look at the source, decide (done, stuck, a limit, or which tasks start),
// run iterations on the workers, record each as it ends; until something ends the run. One worker works in
// the repository itself; several work in their own worktrees and merge back (see worker.ts). It is the same
// loop either way: N = 1 is a pool of one. Its parts: what it runs with (loop-context.ts), what it decides
// (ledger.ts), how workers are fed (pool.ts), and here how it waits for them and for the remote.
import { mkdirSync } from 'node:fs';
import { abortError, ClaimTakenError, ExitCode } from '../errors.ts';
import { createHookRuns } from './hooks.ts';
import { Ledger } from './ledger.ts';
import type { Ended, LoopContext } from './loop-context.ts';
import { lookAtHosts, pollMs, type HostsLook, type LoopResult } from './loop-end.ts';
import { Pool } from './pool.ts';
import { Reruns } from './reruns.ts';

export type { LoopContext, LoopResult };

/** The loop: snapshot, decide, start iterations on idle workers, record each as it ends; until done or a limit. */
export async function runLoop(ctx: LoopContext): Promise<LoopResult> {
  const { source, bus } = ctx;
  mkdirSync(ctx.logDir, { recursive: true });
  const firstIteration = ((await source.lastIteration?.()) ?? 0) + 1;
  // One worker's fatal error stops the others: they share this signal, chained to the run's.
  const control = new AbortController();
  const onAbort = (): void => control.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  const signal = control.signal;

  const reruns = new Reruns();
  const ledger = new Ledger(ctx, firstIteration, reruns, createHookRuns(source), ctx.dock?.remote);
  const pool = await Pool.open(ctx, signal, ledger);
  const { running, idle, remote } = pool;
  let looks = 0; // looks in a row at the remote with nothing to start (several hosts): each waits longer
  // The last look, and whether the next pass picks from it again: a claim another host won first takes
  // nothing from the rest of what it showed (the server decides each claim), so it costs no new look.
  let last: HostsLook | undefined;
  let again = false;

  try {
    for (;;) {
      if (signal.aborted && running.size === 0) throw ledger.firstError ?? abortError(signal);
      if (running.size === 0 && ledger.failure !== undefined) return ledger.finish('failed', ExitCode.failure, ledger.failure, ledger.lastSnapshot);
      // Steering: no new iteration while paused or stopping; a stop ends the run once nothing runs.
      const steer = ctx.control?.gate(running.size, ctx.records.at(-1)?.iteration);
      if (steer?.stop && running.size === 0) return ledger.finish('interrupted', ExitCode.interrupted, steer.stop, await source.snapshot());
      if (!steer?.hold && !signal.aborted && (running.size === 0 || (idle.length > 0 && ledger.mayStart(signal)))) {
        // Several hosts: the main worktree at the remote's head first, so the source shows what they landed.
        const look = again && last ? last : await lookAtHosts(remote ? pool.dock : undefined, () => source.snapshot());
        last = look;
        again = false;
        pool.at = look.at;
        const before = look.snapshot;
        const othersHold = look.othersHold(running.size);
        ledger.doneAtStart ??= before.done.length;
        ledger.lastSnapshot = before;
        if (running.size === 0) {
          const step = ledger.whenIdle(before, othersHold, signal);
          if (step.kind === 'end') return step.result;
          if (step.kind === 'passes') for (const { task, ...own } of step.passes) pool.start(task, before, own);
        }
        while (idle.length > 0 && ledger.mayStart(signal)) {
          const task = pool.pick(before, look.elsewhere, reruns);
          if (!task) break;
          pool.start(task, before);
          looks = 0;
        }
        // Nothing to start here while other hosts hold what is left: look again in a while.
        if (running.size === 0 && othersHold && ledger.mayStart(signal)) {
          await ctx.deps.sleep(pollMs(ctx.config, looks++, ctx.records), signal).catch(() => undefined);
          continue;
        }
      }
      const waits: Array<Promise<Ended | undefined>> = [...running.values()].map((entry) => entry.ended);
      const pause = ctx.usageWait.pending;
      if (pause) waits.push(pause.then(() => undefined));
      if (steer?.hold) waits.push(ctx.control!.changed().then(() => undefined));
      if (waits.length === 0) {
        // Nothing runs and nothing could start: every open task waits on one that cannot start.
        return ledger.finish('failed', ExitCode.failure, ledger.failure ?? source.explainStuck(ledger.lastSnapshot ?? (await source.snapshot())), ledger.lastSnapshot);
      }
      const ended = await Promise.race(waits);
      if (!ended) continue;
      pool.release(ended.slot);
      if ('error' in ended && ended.error instanceof ClaimTakenError && last) {
        last.elsewhere.add(ended.task.id);
        again = true;
      }
      const output = ledger.record(ended, (error) => control.abort(error));
      if (output && pool.single) pool.head = output.head;
    }
  } catch (error) {
    // The loop itself failed while iterations ran (a source that cannot be read, say): they stop, and each
    // puts its task back, before the run ends.
    if (running.size > 0) {
      control.abort(error);
      await Promise.all([...running.values()].map((entry) => entry.ended));
    }
    throw error;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    await pool.close((message) => bus.emit({ type: 'warning', message }));
  }
}
