// tasks.md as real projects write it (patterns seen in public repositories, in fixtures written for ralph):
// for each, the tasks ralph sees, the next task, and that completion is refused while one line is open.
import { describe, expect, it } from 'vitest';
import { decideNext } from '../../../../lib/session/decide.ts';
import { parseTasksMd, type ParsedTasks } from '../../../../lib/sources/speckit/parse.ts';
import { buildSnapshot, currentTaskBlock, explainStuck } from '../../../../lib/sources/speckit/select.ts';
import { noTasksProblem, strayWarnings } from '../../../../lib/sources/speckit/check.ts';
import { readFixture } from './helpers.ts';

const read = (name: string): string => readFixture('patterns', `${name}.md`);
const none = new Set<string>();
const LIMITS = { maxIterations: 50 };

function view(parsed: ParsedTasks) {
  const snapshot = buildSnapshot(parsed, none);
  return {
    ids: parsed.tasks.map((task) => task.id),
    open: parsed.tasks.filter((task) => !task.done).map((task) => task.id),
    next: snapshot.ready[0]?.id,
    decision: decideNext(snapshot, { iterations: 0, costUsd: 0 }, LIMITS).kind,
  };
}

/** Ticks the open checkbox of the given 1-based lines (as an agent would). */
function tick(text: string, ...lines: number[]): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return text
    .split(eol)
    .map((line, index) => (lines.includes(index + 1) ? line.replace(/\[ ?\]/, '[x]') : line))
    .join(eol);
}

function lineOf(parsed: ParsedTasks, id: string): number {
  const task = parsed.tasks.find((item) => item.id === id);
  if (!task) throw new Error(`no task ${id}`);
  return task.line;
}

describe('task ids with a letter suffix', () => {
  const text = read('suffix-ids');
  const parsed = parseTasksMd(text);

  it('reads T002a, T002b (nested under T002) and T104A as tasks of their own', () => {
    expect(view(parsed)).toEqual({
      ids: ['T001', 'T002', 'T002a', 'T002b', 'T104', 'T104A', 'T105'],
      open: ['T002b', 'T104A', 'T105'],
      next: 'T002b',
      decision: 'run',
    });
    expect(parsed.tasks.find((task) => task.id === 'T104A')).toMatchObject({ parallel: true, story: 'US4', title: 'Sanitize rich text on save in `src/forms/sanitize.ts`' });
    expect(parsed.tasks.find((task) => task.id === 'T105')?.dependsOn).toEqual(['T104A']);
    expect(parsed.warnings).toEqual([]);
  });

  it('stays in phase 1 until T002b is ticked, then takes T104A before T105', () => {
    const after = parseTasksMd(tick(text, lineOf(parsed, 'T002b')));
    expect(view(after)).toMatchObject({ next: 'T104A', decision: 'run' });
    expect(buildSnapshot(after, none).ready.map((task) => task.id)).toEqual(['T104A']);
  });

  it('is complete only when the last suffixed task is ticked', () => {
    const most = parseTasksMd(tick(text, lineOf(parsed, 'T002b'), lineOf(parsed, 'T105')));
    expect(view(most)).toMatchObject({ open: ['T104A'], next: 'T104A', decision: 'run' });
    expect(view(parseTasksMd(tick(text, lineOf(parsed, 'T002b'), lineOf(parsed, 'T104A'), lineOf(parsed, 'T105')))).decision).toBe('complete');
  });
});

describe('squeezed lines: T129A[P] and -[X]T001 without spaces, [✅] and [] boxes', () => {
  const text = read('squeezed');
  const parsed = parseTasksMd(text);

  it('reads every task and its markers', () => {
    expect(view(parsed)).toEqual({
      ids: ['T001', 'T002', 'T003', 'T129A', 'T129B', 'T133A', 'T133B'],
      open: ['T003', 'T133A', 'T133B'],
      next: 'T003',
      decision: 'run',
    });
    expect(parsed.title).toBe('Authentication');
    expect(parsed.groups.map((group) => group.phase)).toEqual(['1', '2', undefined]);
    expect(parsed.tasks.find((task) => task.id === 'T129A')).toMatchObject({ done: true, parallel: true, story: 'US2', title: '[QA] Create tests for the exception middleware - **COMPLETED**' });
    expect(parsed.tasks.find((task) => task.id === 'T002')).toMatchObject({ parallel: true, title: '[TE]Initializetheapiprojectfolders' });
  });

  it('refuses completion while any of them is open; id-less criteria do not count', () => {
    const lines = ['T003', 'T133A'].map((id) => lineOf(parsed, id));
    expect(view(parseTasksMd(tick(text, ...lines))).decision).toBe('run');
    const all = parseTasksMd(tick(text, ...lines, lineOf(parsed, 'T133B')));
    expect(view(all).decision).toBe('complete');
    expect(all.checkboxes.openWithoutId).toBe(1);
  });
});

describe('dotted sub-ids', () => {
  const text = read('dotted-ids');
  const parsed = parseTasksMd(text);

  it('reads T047.5, T090.12 and the nested T102.1, T102.2 as tasks of their own', () => {
    expect(view(parsed)).toEqual({
      ids: ['T047', 'T047.5', 'T090', 'T090.12', 'T102', 'T102.1', 'T102.2'],
      open: ['T047.5', 'T102.1', 'T102.2'],
      next: 'T047.5',
      decision: 'run',
    });
    expect(parsed.tasks.find((task) => task.id === 'T102.2')?.dependsOn).toEqual(['T102.1']);
    expect(parsed.warnings).toEqual([]);
  });

  it('a ticked parent does not complete its open children', () => {
    const onlyChildren = parseTasksMd(tick(text, lineOf(parsed, 'T047.5')));
    expect(view(onlyChildren)).toMatchObject({ open: ['T102.1', 'T102.2'], next: 'T102.1', decision: 'run' });
    const onlyOne = parseTasksMd(tick(text, lineOf(parsed, 'T047.5'), lineOf(parsed, 'T102.2')));
    expect(view(onlyOne)).toMatchObject({ open: ['T102.1'], next: 'T102.1', decision: 'run' });
    expect(view(parseTasksMd(tick(text, lineOf(parsed, 'T047.5'), lineOf(parsed, 'T102.1'), lineOf(parsed, 'T102.2')))).decision).toBe('complete');
  });

  it('nor do ticked children complete their open parent', () => {
    const reversed = text.replace('- [X] T102 ', '- [ ] T102 ').replace('  - [ ] T102.1', '  - [x] T102.1').replace('  - [ ] T102.2', '  - [x] T102.2');
    expect(view(parseTasksMd(tick(reversed, lineOf(parsed, 'T047.5'))))).toMatchObject({ open: ['T102'], next: 'T102', decision: 'run' });
  });
});

describe('repeated ids: a real second task', () => {
  const text = read('repeated-ids');
  const parsed = parseTasksMd(text);

  it('reads the second T003 as T003#2 and leaves ids it cannot read aside', () => {
    expect(view(parsed)).toEqual({
      ids: ['T001', 'T002', 'T003', 'T003#2', 'T004', 'T000', 'T000#2'],
      open: ['T003#2', 'T004'],
      next: 'T003#2',
      decision: 'run',
    });
    expect(parsed.tasks.find((task) => task.id === 'T003#2')).toEqual(expect.objectContaining({ writtenId: 'T003', done: false, repeats: { id: 'T003', line: 7 } }));
    expect(parsed.warnings).toEqual([
      'T003 is written on 2 lines (7, 11): line 11 is another task (T003#2); each line is a task of its own and must be ticked (see "Repeated task ids" in the README)',
      'T000 is written on 2 lines (16, 17): line 17 is another task (T000#2); each line is a task of its own and must be ticked (see "Repeated task ids" in the README)',
    ]);
    expect(parsed.strays).toEqual([{ line: 18, text: '- [x] T00 [P] Create the family model in `src/models/family.ts`', state: 'done', why: expect.stringMatching(/^the id T00 has 2 digits/) }]);
    expect(strayWarnings(parsed, 'tasks.md')).toEqual(['tasks.md: 1 ticked line looks like a task ralph cannot read (line 18: the id T00 has 2 digits (ralph reads ids like T001, T002a, T102.1)); ticked, it does not hold the feature back']);
  });

  it('tells the agent which of the two lines is its task', () => {
    const task = parsed.tasks.find((item) => item.id === 'T003#2')!;
    const block = currentTaskBlock({ parsed, task, skipped: [], feature: '001-release', tasksPath: 'specs/001-release/tasks.md' });
    expect(block).toContain('- Location: specs/001-release/tasks.md line 11');
    expect(block).toContain('- T003 is also the id of another task (line 7): this task is the one on line 11; leave the other line alone');
  });

  it('is not complete while the second T003 is open, though the first is ticked', () => {
    const done = parseTasksMd(tick(text, lineOf(parsed, 'T004')));
    expect(view(done)).toMatchObject({ open: ['T003#2'], next: 'T003#2', decision: 'run' });
    expect(view(parseTasksMd(tick(text, lineOf(parsed, 'T004'), lineOf(parsed, 'T003#2')))).decision).toBe('complete');
  });

  it('an open line whose id ralph cannot read is reported and stops the run instead of completing it', () => {
    const broken = tick(text, lineOf(parsed, 'T004'), lineOf(parsed, 'T003#2')).replace('- [x] T00 [P]', '- [ ] T00 [P]');
    const reparsed = parseTasksMd(broken);
    expect(view(reparsed).decision).toBe('stuck');
    expect(explainStuck(reparsed, none, 'specs/001-release/tasks.md')).toMatch(/specs\/001-release\/tasks\.md:18: - \[ \] T00 \[P\] Create the family model.*: the id T00 has 2 digits/);
    expect(strayWarnings(reparsed, 'tasks.md')[0]).toMatch(/^tasks\.md:18: "- \[ \] T00 \[P\] .*" is not a task ralph works on \(the id T00 has 2 digits.*\); while it stays open the feature is not complete$/);
  });
});

describe('repeated ids: a stale summary', () => {
  const text = read('stale-summary');
  const parsed = parseTasksMd(text);

  it('reads the lines that repeat a task as copies of it, not tasks, and sets the unknown one aside', () => {
    expect(view(parsed)).toEqual({ ids: ['T001', 'T002', 'T003', 'T004'], open: ['T004'], next: 'T004', decision: 'run' });
    expect(parsed.copies.map((copy) => [copy.line, copy.of, copy.ofLine, copy.done])).toEqual([
      [15, 'T001', 5, true],
      [16, 'T002', 6, false],
      [17, 'T003', 10, false],
      [22, 'T004', 11, false],
    ]);
    expect(parsed.warnings).toEqual([
      'lines 16-17 repeat tasks already ticked (T002, T003): not counted and not worked on',
      'line 22 repeats an open task (T004): not counted as a task of its own; it is done with its task',
    ]);
    expect(buildSnapshot(parsed, none)).toMatchObject({ done: [{ id: 'T001' }, { id: 'T002' }, { id: 'T003' }], remaining: [{ id: 'T004' }, { id: 'line 18' }] });
    expect(parsed.strays).toEqual([{ line: 18, text: '- [ ] T099 Document the exporter for support staff', state: 'open', why: expect.stringMatching(/under "Task Summary".*no task of the phases has the id T099/) }]);
  });

  it('asks the agent to tick the open copy with the task', () => {
    const task = parsed.tasks.find((item) => item.id === 'T004')!;
    const block = currentTaskBlock({ parsed, task, skipped: [], feature: '001-csv', tasksPath: 'tasks.md' });
    expect(block).toContain('- T004 is written again on line 22: tick that line too when this task is done');
    expect(block).toContain('- Open tasks of this phase, in order: T004\n');
  });

  it('never works on the stale copies: once T004 is ticked it stops (not complete) on the line it cannot work on, and completes when that one is ticked', () => {
    const strayLeft = parseTasksMd(tick(text, lineOf(parsed, 'T004')));
    expect(view(strayLeft)).toMatchObject({ open: [], next: undefined, decision: 'stuck' });
    expect(explainStuck(strayLeft, none, 'tasks.md')).toMatch(/^1 line of tasks\.md looks like a task that ralph will not work on and cannot count as done, so the feature is not complete:\n  tasks\.md:18: /);
    expect(view(parseTasksMd(tick(text, lineOf(parsed, 'T004'), 18))).decision).toBe('complete');
  });

  it('a ticked copy of the open T004 completes nothing', () => {
    const copyTicked = parseTasksMd(tick(text, 22, 18));
    expect(view(copyTicked)).toMatchObject({ open: ['T004'], next: 'T004', decision: 'run' });
    expect(copyTicked.warnings).toContain('line 22 is ticked but repeats T004 (line 11), which is open: a ticked copy completes nothing; T004 is done when line 11 is ticked');
    const task = copyTicked.tasks.find((item) => item.id === 'T004')!;
    expect(currentTaskBlock({ parsed: copyTicked, task, skipped: [], feature: '001-csv', tasksPath: 'tasks.md' })).toContain('- Line 22 repeats this task and is already ticked: that does not make it done; tick line 11 once the work is done');
  });
});

describe('repeated ids: a checklist summary repeating every task unticked (issue 26)', () => {
  const text = read('checklist-summary');
  const parsed = parseTasksMd(text);
  const ids = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, index) => `T${String(from + index).padStart(3, '0')}`);

  it('counts the 7 open tasks a person reads, not the 20 summary lines', () => {
    expect(view(parsed)).toEqual({ ids: ids(1, 20), open: ids(14, 20), next: 'T014', decision: 'run' });
    const snapshot = buildSnapshot(parsed, none);
    expect([snapshot.done.length, snapshot.remaining.length]).toEqual([13, 7]);
    expect(parsed.copies).toHaveLength(20);
    expect(parsed.warnings).toEqual([
      'lines 57-61, 65-69, 73-75 repeat tasks already ticked (T001 to T013): not counted and not worked on',
      'lines 76-77, 81-85 repeat open tasks (T014 to T020): not counted as tasks of their own; each is done with its task',
    ]);
  });

  it('is complete once the tasks are ticked, whatever the summary says, and not before', () => {
    const tasksDone = tick(text, ...ids(14, 20).map((id) => lineOf(parsed, id)));
    expect(view(parseTasksMd(tasksDone)).decision).toBe('complete');
    const summaryDone = parseTasksMd(tick(text, ...ids(14, 19).map((id) => lineOf(parsed, id)), ...Array.from({ length: 29 }, (_, index) => 57 + index)));
    expect(view(summaryDone)).toMatchObject({ open: ['T020'], next: 'T020', decision: 'run' });
    expect(summaryDone.warnings).toContain('line 85 is ticked but repeats T020 (line 44), which is open: a ticked copy completes nothing; T020 is done when line 44 is ticked');
  });
});

describe('repeated ids: a summary of short titles under "### Phase N (4 tasks)" subheadings (issue 35)', () => {
  const text = read('abbreviated-summary');
  const parsed = parseTasksMd(text);
  const ids = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, index) => `T${String(from + index).padStart(3, '0')}`);

  it('counts the 4 open tasks a person reads: the rows are copies, named in two lines, not ten warnings', () => {
    expect(view(parsed)).toEqual({ ids: ids(1, 10), open: ids(7, 10), next: 'T007', decision: 'run' });
    const snapshot = buildSnapshot(parsed, none);
    expect([snapshot.done.length, snapshot.remaining.length]).toEqual([6, 4]);
    expect(parsed.groups.map((group) => group.heading).filter((heading) => heading.includes('tasks)'))).toEqual([]);
    expect(parsed.copies.map((copy) => `${copy.line}→${copy.of}`)).toEqual([37, 38, 39, 40, 43, 44, 45, 48, 49, 50].map((line, index) => `${line}→${ids(1, 10)[index]}`));
    expect(parsed.warnings).toEqual([
      'lines 37-40, 43-44 repeat tasks already ticked (T001 to T006): not counted and not worked on',
      'lines 45, 48-50 repeat open tasks (T007, T008, T009, T010): not counted as tasks of their own; each is done with its task',
    ]);
    expect(parsed.strays).toEqual([]);
  });

  it('is complete once the tasks are ticked, though the summary stays open; a ticked row completes nothing', () => {
    expect(view(parseTasksMd(tick(text, ...ids(7, 10).map((id) => lineOf(parsed, id))))).decision).toBe('complete');
    expect(view(parseTasksMd(tick(text, 45, 48, 49, 50)))).toMatchObject({ open: ids(7, 10), next: 'T007', decision: 'run' });
  });

  it('under a heading ralph does not read as a summary, only the rows that abbreviate their task are copies', () => {
    // "## Checklist" is not explanatory: its "### Phase N" subheadings are phases. "Quickstart validation"
    // says a word T008 does not, so that row is a task of its own (T008#2), as a different description is.
    const plain = parseTasksMd(text.replace('## Task Checklist Summary', '## Checklist'));
    expect(plain.tasks.filter((task) => task.id.includes('#')).map((task) => task.id)).toEqual(['T008#2']);
    expect(plain.copies).toHaveLength(9);
  });
});

describe('checkboxes without task ids', () => {
  it('a file of id-less checkboxes is refused, saying what was found and what was expected', () => {
    const parsed = parseTasksMd(read('idless'));
    expect(parsed.tasks).toEqual([]);
    expect(noTasksProblem(parsed, 'specs/001-onboarding/tasks.md')).toBe(
      'specs/001-onboarding/tasks.md lists no tasks: it has 4 checkbox lines but none starts with a task id (line 5: "- [ ] [SETUP-001] Create the repository layout"); ralph reads lines like "- [ ] T001 [P] [US1] Description" (ids: T followed by 3 or more digits, optionally a letter (T002a) or a dotted sub-number (T102.1)): give each task such an id or run /speckit.tasks to generate the list',
    );
  });

  it('a file whose only task-like lines have unreadable ids says so', () => {
    const parsed = parseTasksMd('## Phase 1\n- [ ] T01 Create the app\n- [ ] T02 Add a page\n');
    expect(noTasksProblem(parsed, 'tasks.md')).toMatch(/^tasks\.md lists no tasks ralph can read: 2 checkbox lines, 2 of them with a task id ralph cannot use \(line 2: "- \[ \] T01 Create the app": the id T01 has 2 digits/);
  });

  it('open acceptance criteria beside finished tasks are not tasks: complete, with a warning', () => {
    const parsed = parseTasksMd(read('acceptance'));
    expect(view(parsed)).toEqual({ ids: ['T001', 'T002', 'T003'], open: [], next: undefined, decision: 'complete' });
    expect(strayWarnings(parsed, 'tasks.md')).toEqual([
      'tasks.md: 2 open checkboxes have no task id (line 14: "- [ ] Authentication works end to end"): not tasks, so ralph neither works on them nor waits for them',
    ]);
  });
});

describe('CRLF line ends and a UTF-8 BOM', () => {
  const text = read('crlf-bom');

  it('reads like the same file with LF and no BOM', () => {
    expect(text.charCodeAt(0)).toBe(0xfeff);
    expect(text).toContain('\r\n');
    const parsed = parseTasksMd(text);
    expect(parsed).toEqual(parseTasksMd(text.slice(1).replace(/\r\n/g, '\n')));
    expect(parsed.title).toBe('CSV export');
    expect(view(parsed)).toEqual({ ids: ['T001', 'T002', 'T002a', 'T003'], open: ['T002', 'T002a', 'T003'], next: 'T002', decision: 'run' });
    expect(parsed.tasks.every((task) => !task.title.includes('\r'))).toBe(true);
    expect(parsed.tasks.find((task) => task.id === 'T003')?.dependsOn).toEqual(['T002a']);
  });

  it('is complete only when every line is ticked', () => {
    const parsed = parseTasksMd(text);
    const two = tick(text, lineOf(parsed, 'T002'), lineOf(parsed, 'T003'));
    expect(view(parseTasksMd(two))).toMatchObject({ open: ['T002a'], decision: 'run' });
    expect(view(parseTasksMd(tick(two, lineOf(parsed, 'T002a')))).decision).toBe('complete');
  });
});
