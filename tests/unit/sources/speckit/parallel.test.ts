// What ralph writes into tasks.md for a worker's finished task: its box and the open copies of it.
import { describe, expect, it } from 'vitest';
import { tickTasks } from '../../../../lib/sources/speckit/parallel.ts';
import { parseTasksMd } from '../../../../lib/sources/speckit/parse.ts';

describe('tickTasks', () => {
  const text = ['## Phase 1: Setup', '- [ ] T001 Create the app', '- [ ] T002 Add the page', '- [x] T003 Add the form', '## Summary', '- [ ] T001 Create the app', '- [x] T002 Add the page', '- [ ] T003 Add the form', ''].join('\n');
  const parsed = parseTasksMd(text);

  it('ticks the task and its open copies, nothing else', () => {
    expect(tickTasks(text, parsed, ['T001'])).toBe(text.replace('- [ ] T001', '- [X] T001').replace('- [ ] T001', '- [X] T001'));
    expect(tickTasks(text, parsed, ['T002'])).toBe(text.replace('- [ ] T002', '- [X] T002'));
  });

  it('leaves a done task and its stale copy alone', () => {
    expect(tickTasks(text, parsed, ['T003'])).toBe(text);
  });
});
