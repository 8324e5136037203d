// How a landing that did not land is said: in the iteration's record, its next prompt and the log.
import { failureLine, type GateResult } from '../gates.ts';

/** How an iteration whose work could not be merged is described. */
export function conflictReason(paths: readonly string[], kept: string | undefined, why?: string): string {
  return `merge conflict in ${paths.join(', ')}${why ? ` (${why})` : ''}: the work is kept${kept ? ` on branch ${kept}` : ''} and the task runs again on a fresh base`;
}

/** What stands in a conflict's place when the merged result fails the gates: the gates that failed. */
export function gatesConflict(results: readonly GateResult[]): string[] {
  return [`the gates on the merged result (${results.filter((gate) => !gate.passed).map((gate) => gate.name).join(', ')})`];
}

/** Why a merged result did not land: which gate failed on which head, with the gate's telling line. */
export function mergedGatesReason(results: readonly GateResult[], target: string, kept: string | undefined): string {
  const failed = results.filter((gate) => !gate.passed);
  const said = failed.map((gate) => `${gate.name === gate.command ? gate.name : `${gate.name} (${gate.command})`} failed ${gate.timedOut ? 'by timing out' : `with exit ${gate.exitCode}`}${gate.outputTail ? `: ${failureLine(gate.outputTail)}` : ''}`).join('; ');
  return `the work passed its gates alone but not merged on ${target.slice(0, 12)}, with the work landed since: ${said}; it was not landed, the work is kept${kept ? ` on branch ${kept}` : ''} and the task runs again on the new head`;
}
