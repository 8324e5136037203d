import type { Deps } from '../deps.ts';
import { errorMessage, PrerequisiteError, RalphError } from '../errors.ts';

/** One line per problem on stderr, and the hint when there is one. */
export function printError(deps: Deps, error: unknown): void {
  if (error instanceof PrerequisiteError) {
    for (const problem of error.problems) deps.stderr.write(`ralph: ✗ ${problem}\n`);
    return;
  }
  deps.stderr.write(`ralph: ${errorMessage(error)}\n`);
  if (error instanceof RalphError && error.hint) deps.stderr.write(`  hint: ${error.hint}\n`);
}
