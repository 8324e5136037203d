// The durable steps of an iteration and of a landing, named once. The code announces each as it completes;
// the run's journal (./journal.ts) keeps the last one reached per iteration, so recovery (./index.ts) knows
// where a run that died stood, and the crash tests kill ralph at each of them.

/**
 * In the order an iteration passes through them. One worker in the repository: claimed, agent started and
 * ended, gates, state written (the source's record), work committed. Several workers add the landing:
 * merged into the branch (the fast-forward), then the state written and amended into that commit. Several
 * hosts (--remote) add the claim, the push and the claim's release. `status_written` is the session's end.
 */
export const CRASH_POINTS = [
  'task_claimed',
  'agent_started',
  'agent_ended',
  'gates_run',
  'state_written',
  'work_committed',
  'merged',
  'claimed',
  'pushed',
  'claim_released',
  'status_written',
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Where an announcement comes from: the iteration (its number) and what it learned there. */
export interface PointDetail {
  iteration?: number;
  outcome?: string;
  commit?: string;
  /** task_claimed: the task, the worker (absent in the repository itself) and HEAD as the iteration began. */
  task?: { id: string; title: string };
  worker?: number;
  head?: string;
}

export interface Listener {
  reached(point: CrashPoint, detail: PointDetail): void;
  /** The iteration is over (recorded, committed when it passed, or merged and recorded): nothing of it is under way. */
  ended(iteration: number): void;
}
let listener: Listener | undefined;

/** The session's journal listens to the points (one run per process); returns how to stop listening. */
export function listenToPoints(next: Listener): () => void {
  listener = next;
  return () => {
    if (listener === next) listener = undefined;
  };
}

/** The name of the test hook's variable. */
export const CRASH_VARIABLE = 'RALPH_TEST_CRASH_AT';

/**
 * `point`, `point:n` (the n-th time the point is reached, 1 when absent) or `point:n:early` (killed once the
 * step is done but before the journal learns it: the journal a step behind); undefined when not understood.
 */
export function parseCrashAt(value: string | undefined): { point: CrashPoint; nth: number; early: boolean } | undefined {
  if (!value) return undefined;
  const [name, count, when] = value.split(':');
  if (!(CRASH_POINTS as readonly string[]).includes(name ?? '')) return undefined;
  if (when !== undefined && when !== 'early') return undefined;
  const nth = count === undefined ? 1 : Number(count);
  return Number.isInteger(nth) && nth >= 1 ? { point: name as CrashPoint, nth, early: when === 'early' } : undefined;
}

const seen = new Map<CrashPoint, number>();

/**
 * Announces that a durable step completed: the journal notes it, then the test hook may kill the process.
 * TEST ONLY: with RALPH_TEST_CRASH_AT=<point>[:<n>[:early]] set, ralph SIGKILLs itself the n-th time it
 * reaches <point> (`early`: before the journal notes it), as a power cut would end it there; unset (always,
 * outside tests) it does nothing.
 */
export function reached(point: CrashPoint, detail: PointDetail = {}): void {
  const crash = parseCrashAt(process.env[CRASH_VARIABLE]);
  const now = crash?.point === point && (seen.set(point, (seen.get(point) ?? 0) + 1), seen.get(point) === crash.nth);
  if (now && crash.early) process.kill(process.pid, 'SIGKILL');
  listener?.reached(point, detail);
  if (now) process.kill(process.pid, 'SIGKILL');
}

/** Announces that an iteration is over: nothing of it needs recovery any more. */
export function iterationEnded(iteration: number): void {
  listener?.ended(iteration);
}
