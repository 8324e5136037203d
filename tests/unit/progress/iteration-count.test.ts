import { describe, expect, it } from 'vitest';
import { iterationCounter } from '../../../lib/progress/iteration-count.ts';

describe('iterationCounter: this run\'s count against this run\'s limit', () => {
  it.each([
    ['a run that starts the session', 1, 1, 2, 'iteration 1/2'],
    ['its last iteration', 2, 2, 2, 'iteration 2/2'],
    ['a run carrying the numbering on (up to 2 iterations)', 3, 1, 2, 'iteration 3 (1/2 in this run)'],
    ['a run carrying the numbering on (up to 10 iterations)', 8, 1, 10, 'iteration 8 (1/10 in this run)'],
    ['a status written before the run\'s count was recorded', 3, undefined, 4, 'iteration 3/4'],
  ])('%s', (_what, iteration, ofRun, max, expected) => {
    expect(iterationCounter(iteration, ofRun, max)).toBe(expected);
  });
});
