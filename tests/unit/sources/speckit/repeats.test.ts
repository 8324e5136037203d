// The rule for ids written on several lines (lib/sources/speckit/repeats.ts): which lines are tasks,
// which are copies that follow a task, which are strays, and what that leaves for the loop.
import { describe, expect, it } from 'vitest';
import { decideNext } from '../../../../lib/session/decide.ts';
import { parseTasksMd, tasksById } from '../../../../lib/sources/speckit/parse.ts';
import { buildSnapshot, readyTasks } from '../../../../lib/sources/speckit/select.ts';

const none = new Set<string>();

interface Row {
  name: string;
  /** tasks.md from line 1. */
  lines: string[];
  /** The tasks as `id:x` (done) or `id: ` (open), in file order. */
  tasks: string[];
  /** The copies as `line→id` plus `x` when ticked. */
  copies: string[];
  /** The ids the snapshot counts as remaining (strays as `line N`). */
  remaining: string[];
  next?: string;
  decision: 'run' | 'complete' | 'stuck';
}

const PHASE = '## Phase 1: Setup';
const rows: Row[] = [
  {
    name: 'no id repeated: no copies',
    lines: [PHASE, '- [x] T001 Create the app', '- [ ] T002 Add the page'],
    tasks: ['T001:x', 'T002: '],
    copies: [],
    remaining: ['T002'],
    next: 'T002',
    decision: 'run',
  },
  {
    name: 'an open copy of a ticked task in the phases is stale: not counted, not worked on',
    lines: [PHASE, '- [x] T001 Create the app', '## Task Checklist Summary', '- [ ] T001 Create the app'],
    tasks: ['T001:x'],
    copies: ['4→T001'],
    remaining: [],
    decision: 'complete',
  },
  {
    name: 'an open copy of a ticked task under a Summary heading is stale',
    lines: [PHASE, '- [x] T001 Create the app', '## Summary', '- [ ] T001 Create the app'],
    tasks: ['T001:x'],
    copies: ['4→T001'],
    remaining: [],
    decision: 'complete',
  },
  {
    name: 'an open copy of an open task follows it: one task remains, not two',
    lines: [PHASE, '- [ ] T001 Create the app', '## Task Summary', '- [ ] T001 Create the app'],
    tasks: ['T001: '],
    copies: ['4→T001'],
    remaining: ['T001'],
    next: 'T001',
    decision: 'run',
  },
  {
    name: 'a ticked copy of an open task in the phases completes nothing',
    lines: [PHASE, '- [ ] T001 Create the app', '## Phase 2: Checklist', '- [x] T001 Create the app'],
    tasks: ['T001: '],
    copies: ['4→T001x'],
    remaining: ['T001'],
    next: 'T001',
    decision: 'run',
  },
  {
    name: 'a ticked copy of an open task under a Summary heading completes nothing',
    lines: [PHASE, '- [ ] T001 Create the app', '## Summary', '- [x] T001 Create the app'],
    tasks: ['T001: '],
    copies: ['4→T001x'],
    remaining: ['T001'],
    next: 'T001',
    decision: 'run',
  },
  {
    name: 'a summary written before the phases is a copy too',
    lines: ['## Summary', '- [ ] T001 Create the app', PHASE, '- [x] T001 Create the app'],
    tasks: ['T001:x'],
    copies: ['2→T001'],
    remaining: [],
    decision: 'complete',
  },
  {
    name: 'a copy cut short, with markers and a completion note, still matches its task',
    lines: [PHASE, '- [x] T001 [P] Add the lint configuration in `eslint.config.js`', '## Summary', '- [ ] **T001** Add the lint configuration ✅'],
    tasks: ['T001:x'],
    copies: ['4→T001'],
    remaining: [],
    decision: 'complete',
  },
  {
    name: 'two copies of one task both follow it',
    lines: [PHASE, '- [x] T001 Create the app', '- [ ] T001 Create the app', '## Summary', '- [ ] T001 Create the app'],
    tasks: ['T001:x'],
    copies: ['3→T001', '5→T001'],
    remaining: [],
    decision: 'complete',
  },
  {
    name: 'a repeat with another description in the phases is another task, T001#2',
    lines: [PHASE, '- [x] T001 Create the app', '## Phase 2: Release', '- [ ] T001 Tag the release'],
    tasks: ['T001:x', 'T001#2: '],
    copies: [],
    remaining: ['T001#2'],
    next: 'T001#2',
    decision: 'run',
  },
  {
    name: 'a copy of the second task follows T001#2, not T001',
    lines: [PHASE, '- [x] T001 Create the app', '- [ ] T001 Tag the release', '## Summary', '- [ ] T001 Create the app', '- [x] T001 Tag the release'],
    tasks: ['T001:x', 'T001#2: '],
    copies: ['5→T001', '6→T001#2x'],
    remaining: ['T001#2'],
    next: 'T001#2',
    decision: 'run',
  },
  {
    name: 'the other task is numbered by tasks only: a copy between them takes no number',
    lines: [PHASE, '- [x] T001 Create the app', '- [ ] T001 Create the app', '- [ ] T001 Tag the release'],
    tasks: ['T001:x', 'T001#2: '],
    copies: ['3→T001'],
    remaining: ['T001#2'],
    next: 'T001#2',
    decision: 'run',
  },
  {
    name: 'an open line under a Summary heading that repeats no task is a stray that stops the run',
    lines: [PHASE, '- [x] T001 Create the app', '## Summary', '- [ ] T001 Tag the release', '- [ ] T099 Write the docs'],
    tasks: ['T001:x'],
    copies: [],
    remaining: ['line 4', 'line 5'],
    decision: 'stuck',
  },
  {
    name: 'a ticked line under a Summary heading that repeats no task is left alone',
    lines: [PHASE, '- [x] T001 Create the app', '## Summary', '- [x] T099 Write the docs'],
    tasks: ['T001:x'],
    copies: [],
    remaining: [],
    decision: 'complete',
  },
  {
    name: 'a repeat in the phases with a few words of the original (`T001 - the app`) is a copy, not T001#2',
    lines: [PHASE, '- [x] T001 Create the app in src/app.ts', '## Phase 2: Release', '- [ ] T001 - app in src'],
    tasks: ['T001:x'],
    copies: ['4→T001'],
    remaining: [],
    decision: 'complete',
  },
  {
    name: "a summary's phase subheadings stay in the summary: its short rows are copies, never phases of their own",
    lines: [PHASE, '- [x] T001 Create the app in src/app.ts', '- [ ] T002 Verify the quickstart guide', '## Task Checklist Summary', '### Phase 1: Setup (2 tasks)', '- [ ] T001 - App', '- [ ] T002 - Quickstart validation'],
    tasks: ['T001:x', 'T002: '],
    copies: ['6→T001', '7→T002'],
    remaining: ['T002'],
    next: 'T002',
    decision: 'run',
  },
  {
    name: 'numbering restarted in a later phase: a task sharing words with the first but saying more is another task',
    lines: [PHASE, '- [x] T001 Create the user model in src/models/user.ts', '## Phase 2: User Story 1', '- [ ] T001 Create the user model tests'],
    tasks: ['T001:x', 'T001#2: '],
    copies: [],
    remaining: ['T001#2'],
    next: 'T001#2',
    decision: 'run',
  },
  {
    name: "an explanatory subheading inside a summary (### Dependencies) is still the summary's",
    lines: [PHASE, '- [x] T002 Verify the quickstart guide', '## Task Summary', '### Dependencies', '- [ ] T002 - Quickstart validation'],
    tasks: ['T002:x'],
    copies: ['5→T002'],
    remaining: [],
    decision: 'complete',
  },
  {
    name: 'under an explanatory heading that is not a summary, only an abbreviation is a copy: a row sharing one word is a stray',
    lines: [PHASE, '- [x] T001 Create the app in src/app.ts', '- [x] T002 Verify the quickstart guide', '## Notes', '- [ ] T001 - app', '- [ ] T002 - Quickstart validation'],
    tasks: ['T001:x', 'T002:x'],
    copies: ['5→T001'],
    remaining: ['line 6'],
    decision: 'stuck',
  },
];

describe('repeated ids: tasks, copies and strays', () => {
  it.each(rows)('$name', (row) => {
    const parsed = parseTasksMd(`${row.lines.join('\n')}\n`);
    const snapshot = buildSnapshot(parsed, none);
    expect(parsed.tasks.map((task) => `${task.id}:${task.done ? 'x' : ' '}`)).toEqual(row.tasks);
    expect(parsed.copies.map((copy) => `${copy.line}→${copy.of}${copy.done ? 'x' : ''}`)).toEqual(row.copies);
    expect(snapshot.remaining.map((task) => task.id)).toEqual(row.remaining);
    expect(snapshot.ready[0]?.id).toBe(row.next);
    expect(decideNext(snapshot, { iterations: 0, costUsd: 0 }, { maxIterations: 10 }).kind).toBe(row.decision);
  });
});

describe('warnings about copies: one line per kind, naming the lines', () => {
  it.each([
    {
      name: 'stale copies of ticked tasks, with runs of lines joined',
      lines: [PHASE, '- [x] T001 Create the app', '- [x] T002 Add the page', '- [x] T003 Add the form', '- [x] T004 Add the list', '- [x] T005 Add the menu', '- [ ] T006 Add the footer', '## Summary', '- [ ] T001 Create the app', '- [ ] T002 Add the page', '- [ ] T003 Add the form', '', '- [ ] T004 Add the list', '- [ ] T005 Add the menu'],
      warnings: ['lines 9-11, 13-14 repeat tasks already ticked (T001 to T005): not counted and not worked on'],
    },
    {
      name: 'ids that are not a run of tasks are not written as one',
      lines: [PHASE, '- [x] T001 Create the app', '- [ ] T002 Add the page', '- [x] T003 Add the form', '- [x] T004 Add the list', '- [x] T005 Add the menu', '- [x] T006 Add the footer', '## Summary', '- [ ] T001 Create the app', '- [ ] T003 Add the form', '- [ ] T004 Add the list', '- [ ] T005 Add the menu', '- [ ] T006 Add the footer'],
      warnings: ['lines 9-13 repeat tasks already ticked (T001, T003, T004 and 2 more): not counted and not worked on'],
    },
    {
      name: 'one stale copy',
      lines: [PHASE, '- [x] T001 Create the app', '## Summary', '- [ ] T001 Create the app'],
      warnings: ['line 4 repeats a task already ticked (T001): not counted and not worked on'],
    },
    {
      name: 'open copies of open tasks',
      lines: [PHASE, '- [ ] T001 Create the app', '- [ ] T002 Add the page', '## Summary', '- [ ] T001 Create the app', '- [ ] T002 Add the page'],
      warnings: ['lines 5-6 repeat open tasks (T001, T002): not counted as tasks of their own; each is done with its task'],
    },
    {
      name: 'a ticked copy of an open task',
      lines: [PHASE, '- [ ] T001 Create the app', '## Summary', '- [x] T001 Create the app'],
      warnings: ['line 4 is ticked but repeats T001 (line 2), which is open: a ticked copy completes nothing; T001 is done when line 2 is ticked'],
    },
    {
      name: 'ticked copies of open tasks',
      lines: [PHASE, '- [ ] T001 Create the app', '- [ ] T002 Add the page', '## Summary', '- [x] T001 Create the app', '- [x] T002 Add the page'],
      warnings: ['lines 5-6 are ticked but repeat open tasks (T001, T002): a ticked copy completes nothing; each is done when its own line is ticked'],
    },
    {
      name: 'ticked copies of ticked tasks: nothing to say',
      lines: [PHASE, '- [x] T001 Create the app', '## Summary', '- [x] T001 Create the app'],
      warnings: [],
    },
    {
      name: 'an id with another task and a copy',
      lines: [PHASE, '- [x] T001 Create the app', '- [ ] T001 Tag the release', '## Summary', '- [ ] T001 Create the app'],
      warnings: [
        'T001 is written on 3 lines (2, 3, 5): line 3 is another task (T001#2), line 5 repeats T001; each task must be ticked; a line that repeats one is not a task of its own (see "Repeated task ids" in the README)',
        'line 5 repeats a task already ticked (T001): not counted and not worked on',
      ],
    },
  ])('$name', ({ lines, warnings }) => {
    expect(parseTasksMd(`${lines.join('\n')}\n`).warnings).toEqual(warnings);
  });
});

describe('tasks by id', () => {
  // Exactly one id repeated (the commonest real case): the lookup names each task by its settled id.
  const parsed = parseTasksMd(['## Phase 1', '- [ ] T001 Create the app', '- [ ] T002 Add the page (depends on T001)', '## Phase 2', '- [x] T001 Tag the release', ''].join('\n'));

  it('one task per id, T001 the first line and T001#2 the other', () => {
    const byId = tasksById(parsed);
    expect([...byId.keys()].sort()).toEqual(['T001', 'T001#2', 'T002']);
    expect(byId.get('T001')).toBe(parsed.tasks[0]);
    expect(byId.get('T001#2')).toMatchObject({ title: 'Tag the release', done: true });
  });

  it('a dependency on the repeated id waits for its first task', () => {
    expect(readyTasks(parsed, none).map((task) => task.id)).toEqual(['T001']);
    const done = parseTasksMd(['## Phase 1', '- [x] T001 Create the app', '- [ ] T002 Add the page (depends on T001)', '## Phase 2', '- [ ] T001 Tag the release', ''].join('\n'));
    expect(readyTasks(done, none).map((task) => task.id)).toEqual(['T002']);
  });
});
