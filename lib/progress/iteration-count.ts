// How an iteration's number reads beside the run's limit. Records, logs and progress entries number the
// iterations of a session on from run to run (`ralph resume`); the limit (--max-iterations) is this run's.

/**
 * `iteration 1/2` in a run that started the session, `iteration 3 (1/2 in this run)` in one that carries its
 * numbering on; without `ofRun` (a status written before it was recorded), `iteration 3/4` as it was. Pure.
 */
export function iterationCounter(iteration: number, ofRun: number | undefined, max: number): string {
  if (ofRun === undefined || ofRun === iteration) return `iteration ${iteration}/${max}`;
  return `iteration ${iteration} (${ofRun}/${max} in this run)`;
}
