import { describe, expect, it } from 'vitest';
import { agentLeft } from '../../../lib/iteration/workspace.ts';

describe('agentLeft: what an agent that commits its own work left uncommitted', () => {
  const user = new Set(['README.md', '.env']);
  it.each([
    ['all of it (it committed nothing)', ['src/a.ts', 'specs/f/tasks.md'], [], ['src/a.ts', 'specs/f/tasks.md']],
    ['nothing: everything committed, the state amended into its commit', ['specs/f/tasks.md', 'specs/f/ralph-tasks.json'], ['specs/f/tasks.md', 'specs/f/progress.txt', 'specs/f/ralph-tasks.json'], []],
    ['the code its commit forgot', ['src/b.ts', 'specs/f/ralph-tasks.json'], ['specs/f/ralph-tasks.json'], ['src/b.ts']],
    ['never the user\'s earlier changes nor ralph\'s files', ['README.md', '.env', '.ralph/status.json', '.ralph.lock'], [], []],
  ])('%s', (_what, changed, amended, expected) => {
    expect(agentLeft(changed, user, amended)).toEqual(expected);
  });
});
