import { describe, expect, it } from 'vitest';
import { describeTasksLeft } from '../../../lib/progress/tasks-left.ts';

describe('describeTasksLeft', () => {
  it('names skipped tasks apart from remaining ones', () => {
    expect(describeTasksLeft(2)).toBe('2 remaining');
    expect(describeTasksLeft(2, [])).toBe('2 remaining');
    expect(describeTasksLeft(2, ['T002', 'T003'])).toBe('2 remaining, 2 skipped (T002, T003)');
    expect(describeTasksLeft(0, ['T1', 'T2', 'T3'], 2)).toBe('0 remaining, 3 skipped (T1, T2, … 1 more)');
  });
});
