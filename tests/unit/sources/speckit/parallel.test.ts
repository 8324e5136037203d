// What ralph writes into tasks.md for a worker's finished task: its box and the open copies of it.
import { describe, expect, it } from 'vitest';
import { parallelStartable, tickTasks } from '../../../../lib/sources/speckit/parallel.ts';
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

describe('tickTasks with a summary of short titles', () => {
  const text = ['## Phase 1: Setup', '- [ ] T001 Create the app in src/app.ts', '- [ ] T002 Verify the quickstart guide', '## Task Checklist Summary', '### Phase 1: Setup (2 tasks)', '- [ ] T001 - App', '- [ ] T002 - Quickstart validation', ''].join('\n');
  const parsed = parseTasksMd(text);

  it('ticks a row only with its task, and never a row as a task of its own', () => {
    expect(tickTasks(text, parsed, ['T002'])).toBe(text.replace('- [ ] T002 Verify', '- [X] T002 Verify').replace('- [ ] T002 - Q', '- [X] T002 - Q'));
    expect(tickTasks(text, parsed, ['T001#2', 'T002#2'])).toBe(text);
  });
});

describe('parallelStartable with a task waiting for an answer', () => {
  const parsed = parseTasksMd(['## Phase 1: Setup', '- [ ] T001 Create the app', '- [ ] T002 Add the page', '- [ ] T003 Add the form (depends on T001)', '## Phase 2: Polish', '- [ ] T004 Tidy up', ''].join('\n'));
  const none = new Set<string>();

  it('is never started; the lines after it go on, but not what depends on it', () => {
    expect(parallelStartable(parsed, none, none).map((task) => task.id)).toEqual(['T001']);
    expect(parallelStartable(parsed, none, none, new Set(['T001'])).map((task) => task.id)).toEqual(['T002']);
    expect(parallelStartable(parsed, new Set(['T002']), none, new Set(['T001'])).map((task) => task.id)).toEqual([]);
  });
});
