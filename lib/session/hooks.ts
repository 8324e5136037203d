// The project's own hooks around the work (Spec Kit's before_implement / after_implement): which one the
// loop runs next, and what the run's summary says about them. A hook runs when nothing else does: before
// the first task while work is ahead, and once every task is done (after --converge has converged).
import type { RunSummary } from '../events.ts';
import type { HookPassInfo, TaskSource } from '../sources/types.ts';
import type { NextStep } from './decide.ts';
import type { ConvergeStep } from './converge.ts';

export interface HookRuns {
  /** The hook to run now, given the loop's decision and the converge step; undefined: none is due. */
  next(decision: NextStep['kind'], step: ConvergeStep | undefined): HookPassInfo | undefined;
  ended(hook: HookPassInfo, outcome: 'pass' | 'fail', iteration: number): void;
  summary(): Pick<RunSummary, 'hooks'>;
  /** For the run's last line: `; the project's hooks passed: before_implement speckit.git.validate (git), …`. */
  note(): string;
}

export function createHookRuns(source: TaskSource): HookRuns {
  const runs: NonNullable<RunSummary['hooks']> = [];
  return {
    next(decision, step) {
      if (!source.hooks) return undefined;
      if (decision === 'run') return source.hooks.pending('before')[0];
      const complete = decision === 'complete' && (step === undefined || (step.kind === 'end' && step.status === 'completed'));
      return complete ? source.hooks.pending('after')[0] : undefined;
    },
    ended(hook, outcome, iteration) {
      runs.push({ name: hook.name, outcome, iteration });
    },
    summary: () => (runs.length > 0 ? { hooks: [...runs] } : {}),
    note: () => (runs.length > 0 ? `; the project's hooks passed: ${runs.map((run) => run.name).join(', ')}` : ''),
  };
}
