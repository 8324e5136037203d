// --converge: what the loop does once the source says every task is done. Another converge pass while
// passes are left; done (0) when the last pass converged; "not proven converged" (2) when the last allowed
// pass still found work, even once that work is done. Never 0 on the agent's word alone: the source judges.
import type { ConvergeSummary, RunStatus } from '../events.ts';
import type { ConvergeVerdict, ConvergeSupport } from '../sources/types.ts';
import { ExitCode } from '../errors.ts';

/** Converge passes per run by default (option `max-converge`). */
export const DEFAULT_MAX_CONVERGE = 3;

export type ConvergeStep = { kind: 'pass'; pass: number } | { kind: 'end'; status: RunStatus; exitCode: number; message: string };

export interface Convergence {
  readonly maxPasses: number;
  /** At completion: the next pass, or how the run ends. `target` names what converged (the feature). */
  next(target: string): ConvergeStep;
  /** Pass `pass` ended with `verdict`. */
  ended(pass: number, verdict: ConvergeVerdict): void;
  summary(): ConvergeSummary;
}

/** The converge cycle of one run, counting on from the passes a cut-short run made. */
export function createConvergence(support: ConvergeSupport, maxPasses: number): Convergence {
  const resumed = support.resumed();
  let passes = resumed;
  const appended: string[][] = [];
  let last: ConvergeVerdict | undefined;
  const close = (converged: boolean): void => support.close(converged);
  return {
    maxPasses,
    next(target) {
      if (last?.kind === 'converged') {
        close(true);
        return { kind: 'end', status: 'completed', exitCode: ExitCode.complete, message: `all tasks of ${target} are complete, and converge pass ${passes} found nothing left of the spec` };
      }
      if (passes >= maxPasses) {
        close(false);
        const why = !last ? 'an interrupted run used them up' : last.kind === 'appended' ? `the last one found ${last.tasks.join(', ')}, now done` : `the last one: ${last.reason}`;
        return { kind: 'end', status: 'limit_reached', exitCode: ExitCode.limit, message: `all tasks of ${target} are complete, but not proven converged after ${maxPasses} converge pass${maxPasses === 1 ? '' : 'es'} (--max-converge): ${why}` };
      }
      return { kind: 'pass', pass: passes + 1 };
    },
    ended(pass, verdict) {
      passes = pass;
      last = verdict;
      appended.push(verdict.kind === 'appended' ? verdict.tasks : []);
    },
    summary: () => ({ passes, resumed, maxPasses, appended: [...appended], converged: last?.kind === 'converged' }),
  };
}
