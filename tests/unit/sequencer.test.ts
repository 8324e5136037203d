// tests/support/sequencer.ts: the order files start in when vitest has no durations of an earlier run.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLOW_FIRST, slowRank } from '../support/sequencer.ts';
import { PROJECT } from '../e2e/helpers.ts';

describe('the slow files first', () => {
  it('names files that are in the suite (a renamed one would silently stop starting first)', () => {
    for (const file of SLOW_FIRST) expect(existsSync(path.join(PROJECT, file)), file).toBe(true);
  });

  it('ranks the listed files in their order, every other file after them', () => {
    expect(slowRank('tests/e2e/crash-points.test.ts')).toBe(0);
    expect(slowRank(path.join('tests', 'e2e', 'crash-beads.test.ts'))).toBe(1);
    expect(slowRank('tests/unit/duration.test.ts')).toBe(SLOW_FIRST.length);
  });
});
