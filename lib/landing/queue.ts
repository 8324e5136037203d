// The landing queue: workers whose tasks passed offer them here, and the one that takes the merge lock lands
// every task waiting behind it as one batch (batch.ts decides the gating): each replayed onto the previous
// one's result, the gates run once on the top, the branch moves task by task (each its own commit, holding
// its work and its state) and, with several hosts, the batch goes out in one push. A task whose replay
// conflicts, or that bisection finds breaking the build, is turned down without holding up the others;
// what did not land is recorded after the landing, so the stack underneath it never moves meanwhile.
import type { GateResult } from '../gates.ts';
import { RalphError, RemoteUnreachableError } from '../errors.ts';
import { needsGates, nextStep, type Stacked } from './batch.ts';
import type { Dock } from './types.ts';

/** Why a task of a batch does not land. */
export type Turned =
  /** Its claim is not this run's any more: kept, nothing recorded. */
  | { lost: string }
  /** Its replay conflicts (on the branch, or on the tasks stacked before it). */
  | { conflict: string[] }
  /** The gates failed on the stack whose top it was, with the tasks before it landed (`on`: their head). */
  | { gates: GateResult[]; on: string };

/** A passing task waiting to land, as its worker offers it; `R` is what its worker gets back. */
export interface Candidate<R> {
  readonly task: string;
  /** How long its own iteration's gates took: the longest a batch waits for others to join it. */
  readonly gateMs?: number;
  /** At the start of each round of its batch: remembers what to go back to if the remote stays silent. */
  begin(): Promise<void>;
  /** Its work replayed onto `onto` in its worktree (a conflict, when the agent could not resolve it). */
  stack(onto: string): Promise<({ head: string } & Stacked) | { conflict: string[] }>;
  /** The gates run in its worktree, at the head it was stacked to. */
  gate(): Promise<GateResult[]>;
  /**
   * Lands on the main worktree's head (its stacked result, replayed again when the task before it changed
   * under it by its state commit): fast-forward, then its state recorded and committed with its work.
   */
  commit(): Promise<{ conflict: string[] } | { head: string }>;
  /** The batch is published (`head`: the branch's head now): what its worker gets. */
  landed(head: string): Promise<R>;
  /** It does not land (the branch is at `head`): its work kept, its failure recorded. */
  turned(why: Turned, head: string): Promise<R>;
  /** The remote stayed silent past --remote-wait: its work kept; the error its worker gets. */
  abandon(error: RemoteUnreachableError): Promise<Error>;
}

/** Several hosts: a batch waits for workers whose agents just ended as long as the last batch took, this long at first… */
const FIRST_BATCH_MS = 300;
/** …and never longer than this. */
const MAX_BATCH_WAIT_MS = 1_000;

interface Waiting<R> {
  candidate: Candidate<R>;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/** What a candidate's worker gets: its landing's result, or the error it ends with. */
export type Settled<R> = { value: R } | { error: unknown };

/** What one batch did: gate runs, for the log and the tests. */
export interface BatchStats {
  gateRuns: number;
}

export interface BatchOptions<R> {
  stats?: BatchStats;
  /** Candidates that join the batch before its first gate run, waited for up to `waitMs`. */
  more?: (waitMs: number) => Promise<Candidate<R>[]>;
}

/**
 * Lands batches on `dock`: every candidate offered while another batch holds the lock lands with the next.
 * A batch about to run the gates also waits for the workers whose agents have just ended (`expect`), for at
 * most one gate run's time: gating them together costs one run where gating each alone costs one each.
 */
export class LandingQueue<R> {
  private waiting: Waiting<R>[] = [];
  private readonly expected = new Set<string | number>();
  private wake: (() => void)[] = [];
  /** How long this run's last batch took to land (several hosts): how long the next one waits for a worker. */
  private batchMs = FIRST_BATCH_MS;

  constructor(private readonly dock: Dock) {}

  /** `who`'s agent ended: its task may be offered once its own gates ran. */
  expect(who: string | number): void {
    this.expected.add(who);
  }

  /** `who` offers nothing after all (its iteration failed, or it offered already). */
  withdraw(who: string | number): void {
    if (this.expected.delete(who)) for (const wake of this.wake.splice(0)) wake();
  }

  offer(candidate: Candidate<R>, who?: string | number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ candidate, resolve, reject });
      if (who !== undefined) this.withdraw(who);
      void this.dock.lock.run(async () => {
        // Several hosts: every batch is a fetch and a push racing the other hosts'. A worker whose agent has
        // just ended lands in this one if it is ready within the time a batch takes: one push, not two.
        if (this.dock.remote && this.waiting.length > 0) await this.expecting(Math.min(MAX_BATCH_WAIT_MS, this.batchMs));
        const batch = this.waiting.splice(0);
        if (batch.length === 0) return; // landed with an earlier batch
        let settled: Map<Candidate<R>, Settled<R>>;
        const started = Date.now();
        try {
          settled = await landBatch(this.dock, batch.map((item) => item.candidate), { more: (waitMs) => this.more(waitMs, batch) });
        } catch (error) {
          for (const item of batch) item.reject(error);
          return;
        }
        this.batchMs = Date.now() - started;
        for (const item of batch) {
          const one = settled.get(item.candidate)!;
          if ('value' in one) item.resolve(one.value);
          else item.reject(one.error);
        }
      });
    });
  }

  /** The candidates offered within `waitMs` by the workers expected (joined to `batch`); none when none is expected. */
  private async more(waitMs: number, batch: Waiting<R>[]): Promise<Candidate<R>[]> {
    await this.expecting(waitMs);
    const joined = this.waiting.splice(0);
    batch.push(...joined);
    return joined.map((item) => item.candidate);
  }

  /** Until no worker is expected any more (each offered or withdrew), for `waitMs` at most. */
  private async expecting(waitMs: number): Promise<void> {
    const until = Date.now() + waitMs;
    while (this.expected.size > 0 && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, until - Date.now());
        this.wake.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }
}

/** One queue per dock: every worker of the run offers its tasks to the same one. */
const queues = new WeakMap<Dock, LandingQueue<unknown>>();
export function landingQueue<R>(dock: Dock): LandingQueue<R> {
  let queue = queues.get(dock);
  if (!queue) queues.set(dock, (queue = new LandingQueue<unknown>(dock)));
  return queue as LandingQueue<R>;
}

/**
 * Lands `candidates` (under the merge lock) as batches; what each one's worker gets. `stats` counts the
 * gate runs. Called under the lock.
 */
export async function landBatch<R>(dock: Dock, candidates: readonly Candidate<R>[], o: BatchOptions<R> = {}): Promise<Map<Candidate<R>, Settled<R>>> {
  const out = new Map<Candidate<R>, Settled<R>>();
  const all = [...candidates];
  try {
    await rounds(dock, all, out, o);
  } catch (error) {
    if (!(error instanceof RemoteUnreachableError)) throw error;
    // The remote stayed silent: what landed before stays landed; the rest is kept, each its own way.
    for (const candidate of all) if (!out.has(candidate)) out.set(candidate, { error: await candidate.abandon(error) });
  }
  return out;
}

async function rounds<R>(dock: Dock, all: Candidate<R>[], out: Map<Candidate<R>, Settled<R>>, o: BatchOptions<R>): Promise<void> {
  const stats = o.stats ?? { gateRuns: 0 };
  let waited = false;
  const turned: [Candidate<R>, Turned][] = [];
  let pending = [...all];
  let last = '';
  while (pending.length > 0) {
    for (const candidate of pending) await candidate.begin();
    const target = await dock.target();
    if (!target) throw new RalphError('cannot land: the feature branch has no commit');
    last = target;
    const stack: ({ candidate: Candidate<R> } & Stacked)[] = [];
    let top = target;
    const stackAll = async (candidates: readonly Candidate<R>[]): Promise<void> => {
      for (const candidate of candidates) {
        const lost = dock.lost(candidate.task);
        if (lost) {
          turned.push([candidate, { lost }]);
          continue;
        }
        const stacked = await candidate.stack(top);
        if ('conflict' in stacked) {
          turned.push([candidate, { conflict: stacked.conflict }]);
          continue;
        }
        stack.push({ candidate, changes: stacked.changes, onItsBase: stacked.onItsBase });
        top = stacked.head;
      }
    };
    await stackAll(pending);
    if (o.more && !waited && needsGates(stack)) {
      // Once per batch, before its first gate run: the tasks of workers finishing now are gated with it.
      waited = true;
      const joined = await o.more(Math.max(0, ...stack.map((item) => item.candidate.gateMs ?? 0)));
      all.push(...joined);
      for (const candidate of joined) await candidate.begin();
      await stackAll(joined);
    }
    pending = [];
    const results = new Map<number, boolean>();
    const gated = new Map<number, GateResult[]>();
    let step = nextStep(stack.length, results);
    while ('gate' in step) {
      const length = step.gate;
      if (needsGates(stack.slice(0, length))) {
        const gates = await stack[length - 1]!.candidate.gate();
        stats.gateRuns += 1;
        gated.set(length, gates);
        results.set(length, gates.every((gate) => gate.passed));
      } else results.set(length, true);
      step = nextStep(stack.length, results);
    }
    // The prefix that passed lands, one commit per task; what was stacked after a turned-down task is the next batch.
    const landing: Candidate<R>[] = [];
    let head = target;
    let broken = false;
    for (const [index, item] of stack.slice(0, step.land).entries()) {
      const committed = await item.candidate.commit();
      if ('conflict' in committed) {
        // Not what was gated any more: it is turned down, and everything stacked on it is gated again.
        turned.push([item.candidate, { conflict: committed.conflict }]);
        pending = stack.slice(index + 1).map((rest) => rest.candidate);
        broken = true;
        break;
      }
      landing.push(item.candidate);
      head = committed.head;
    }
    if (!broken && step.reject !== undefined) {
      turned.push([stack[step.reject]!.candidate, { gates: gated.get(step.reject + 1) ?? [], on: head }]);
      pending = stack.slice(step.reject + 1).map((rest) => rest.candidate);
    }
    last = head;
    if (landing.length === 0) continue;
    const published = await dock.publish(landing.map((candidate) => candidate.task));
    if (published.kind === 'landed') {
      for (const candidate of landing) out.set(candidate, { value: await candidate.landed(head) });
      continue;
    }
    // Another host landed first, or a claim was lost: this clone goes back, and the batch is stacked again.
    await dock.rewind(target);
    last = target;
    const lostTask = published.kind === 'lost' ? (published.task ?? landing[0]!.task) : undefined;
    for (const candidate of landing) if (candidate.task === lostTask) turned.push([candidate, { lost: published.kind === 'lost' ? published.why : '' }]);
    pending = [...landing.filter((candidate) => candidate.task !== lostTask), ...pending];
  }
  // What did not land is recorded on the head the batch left (several hosts: published one by one).
  for (const [candidate, why] of turned) out.set(candidate, { value: await candidate.turned(why, last) });
}
