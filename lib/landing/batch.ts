// How a batch of tasks ready to land together is gated (lib/landing/queue.ts runs it): the tasks are stacked
// one on another's result, the gates run once on the top, and when they fail the batch is bisected by its
// prefixes (the first half alone, then a quarter…) until the first task that breaks it is found; the prefix
// before it lands, it goes back to its worker, and the tasks after it form the next batch. Pure decisions.

/** What to do next with a stack of `count` tasks: gate its first `gate` tasks, or land the first `land` (and turn down one). */
export type Step = { gate: number } | { land: number; reject?: number };

/**
 * The next step for a stack of `count` tasks, given the gates' verdicts so far on its prefixes (prefix length
 * → passed). The whole stack is gated first; on failure the smallest failing prefix and the largest passing
 * one below it close in on the first task that fails (`reject`, an index); everything before it lands.
 */
export function nextStep(count: number, results: ReadonlyMap<number, boolean>): Step {
  if (count <= 0) return { land: 0 };
  let failed: number | undefined;
  for (const [length, passed] of results) if (!passed && length >= 1 && length <= count && (failed === undefined || length < failed)) failed = length;
  let passed = 0;
  // A pass at or above a failing prefix (a gate that flaked) proves nothing below it.
  for (const [length, ok] of results) if (ok && length <= count && length > passed && (failed === undefined || length < failed)) passed = length;
  if (failed === undefined) return passed >= count ? { land: count } : { gate: count };
  if (failed === passed + 1) return { land: passed, reject: passed };
  return { gate: Math.floor((passed + failed) / 2) };
}

/** One task on the stack: whether it brings work and whether that work was gated on exactly this base. */
export interface Stacked {
  /** Its replayed result differs from what it was stacked on (it brings commits). */
  changes: boolean;
  /** It was stacked on the very head its own iteration's gates ran on. */
  onItsBase: boolean;
}

/**
 * Whether a prefix of the stack needs the gates: not when the only work it brings is a fast-forward of
 * exactly what its iteration's own gates passed (the branch had not moved under it).
 */
export function needsGates(prefix: readonly Stacked[]): boolean {
  return prefix.some((item) => item.changes && !item.onItsBase);
}
