import { describe, it, expect } from 'vitest';
import { countUnchecked, dependenciesOf, parseTasksMd, priorityNumber } from '../../../../lib/sources/speckit/parse.ts';
import { readFixture } from './helpers.ts';

describe('parseTasksMd on a full tasks.md (user-auth fixture)', () => {
  const parsed = parseTasksMd(readFixture('user-auth', 'specs', '001-user-auth', 'tasks.md'));

  it('finds exactly the real tasks, in file order', () => {
    expect(parsed.tasks.map((task) => task.id)).toEqual(Array.from({ length: 17 }, (_, i) => `T${String(i + 1).padStart(3, '0')}`));
  });

  it('ignores checkbox-looking lines in fences, comments and prose sections', () => {
    const ids = new Set(parsed.tasks.map((task) => task.id));
    for (const id of ['T900', 'T950', 'T960', 'T970']) expect(ids.has(id)).toBe(false);
    expect(parsed.warnings).toEqual([]);
  });

  it('keeps the open task line of a prose section as a stray that holds completion back', () => {
    expect(parsed.strays).toEqual([
      { line: 115, text: '- [ ] T950 checkbox-looking line in a prose section is not a task', state: 'open', why: expect.stringMatching(/under "Dependencies & Execution Order".*no task of the phases has the id T950/) },
    ]);
  });

  it('reads the title, done state ([x] and [X]) and markers', () => {
    expect(parsed.title).toBe('User Authentication');
    const byId = new Map(parsed.tasks.map((task) => [task.id, task]));
    expect(byId.get('T001')?.done).toBe(true);
    expect(byId.get('T002')?.done).toBe(true);
    expect(byId.get('T005')?.done).toBe(false);
    expect(byId.get('T003')).toMatchObject({ parallel: true, story: undefined, title: 'Configure linting and formatting tools in eslint.config.js' });
    expect(byId.get('T007')).toMatchObject({ parallel: true, story: 'US1', section: 'Tests for User Story 1 ⚠️', text: 'T007 [P] [US1] Contract test for POST /sessions in tests/contract/sessions.test.ts' });
    expect(byId.get('T010')).toMatchObject({ parallel: false, story: 'US1', dependsOn: ['T009', 'T012'], section: 'Implementation for User Story 1' });
  });

  it('reads phases, stories and priorities from the headings', () => {
    expect(parsed.groups.map((group) => group.phase)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(parsed.groups[2]).toMatchObject({
      heading: 'Phase 3: User Story 1 - Sign in with email (Priority: P1) 🎯 MVP',
      story: { id: 'US1', title: 'Sign in with email', priority: 'P1', mvp: true },
    });
    expect(parsed.groups[3]?.story).toEqual({ id: 'US2', title: 'Reset a forgotten password', priority: 'P2', mvp: false });
    expect(parsed.groups[0]?.story).toBeUndefined();
    const t015 = parsed.tasks.find((task) => task.id === 'T015');
    expect(t015?.group).toBe(4);
    expect(t015?.line).toBeGreaterThan(0);
  });
});

describe('parseTasksMd variants', () => {
  it('reads CRLF files like LF files', () => {
    const text = readFixture('crlf', 'specs', '002-csv-export', 'tasks.md');
    expect(text).toContain('\r\n');
    const crlf = parseTasksMd(text);
    const lf = parseTasksMd(text.replace(/\r\n/g, '\n'));
    expect(crlf).toEqual(lf);
    expect(crlf.tasks.map((task) => [task.id, task.done, task.title])).toEqual([
      ['T001', true, 'Create src/export/ folder'],
      ['T002', false, 'Add csv-stringify dependency in package.json'],
      ['T003', false, 'Write the CSV serializer in src/export/csv.ts'],
      ['T004', false, 'Add GET /orders.csv in src/routes/orders.ts (depends on T003)'],
    ]);
    expect(crlf.tasks.every((task) => !task.title.includes('\r'))).toBe(true);
  });

  it('tolerates colons, * and + bullets, numbered items, bold ids and "Depends on:" / "blocked by" ranges', () => {
    const parsed = parseTasksMd(readFixture('colon', 'specs', '003-audit-log', 'tasks.md'));
    expect(parsed.tasks.map((task) => ({ id: task.id, done: task.done, parallel: task.parallel, story: task.story, title: task.title, deps: task.dependsOn }))).toEqual([
      { id: 'T001', done: true, parallel: false, story: undefined, title: 'Create the audit module in src/audit/', deps: [] },
      { id: 'T002', done: true, parallel: true, story: undefined, title: 'Add the audit table migration in db/migrations/002_audit.sql', deps: [] },
      { id: 'T003', done: false, parallel: false, story: 'US1', title: 'Write audit events from the repository layer in src/audit/record.ts', deps: [] },
      { id: 'T004', done: false, parallel: false, story: 'US1', title: 'Show the audit trail in src/routes/audit.ts (Depends on: T003)', deps: ['T003'] },
      { id: 'T005', done: false, parallel: true, story: 'US1', title: 'Document the audit format in docs/audit.md', deps: [] },
      { id: 'T006', done: false, parallel: false, story: 'US1', title: 'Add a retention job in src/audit/retention.ts (blocked by T003-T004)', deps: ['T003', 'T004'] },
    ]);
  });

  it('takes ids of 4 and more digits', () => {
    const parsed = parseTasksMd(readFixture('wide-ids', 'specs', '20260118-101500-bulk-import', 'tasks.md'));
    expect(parsed.tasks.map((task) => task.id)).toEqual(['T0998', 'T0999', 'T1000', 'T1001', 'T10000']);
    expect(parsed.tasks.at(-1)?.dependsOn).toEqual(['T0998', 'T0999', 'T1000', 'T1001']);
  });

  it.each([
    ['- [ ] T01 too few digits', 0, 1],
    ['- [ ] TXXX template placeholder', 0, 0],
    ['- [2026-01-29] T001 a date', 0, 0],
    ['- [P] T001 a marker, not a checkbox', 0, 0],
    ['- [-] T001 a mark ralph cannot read', 0, 1],
    ['> - [ ] T001 quoted', 0, 1],
    ['- [ ] T001Create glued to its title', 0, 1],
    ['- [ ]T001 no space', 1, 0],
    ['-[ ]T001[P] squeezed', 1, 0],
    ['- [] T001 empty box', 1, 0],
    ['- [✅] T001 emoji tick', 1, 0],
    ['- [ ] T001a suffix', 1, 0],
    ['- [ ] T102.1 dotted', 1, 0],
    ['  - [ ] T001 indented sub-item', 1, 0],
    ['- [ ] T001', 1, 0],
  ])('%s → %i task(s), %i stray(s)', (line, count, strays) => {
    const parsed = parseTasksMd(`## Phase 1: Setup\n\n${line}\n`);
    expect(parsed.tasks).toHaveLength(count);
    expect(parsed.strays).toHaveLength(strays);
  });

  it('reads a second line with the same id as a task of its own, T001#2', () => {
    const parsed = parseTasksMd('## Phase 1\n- [ ] T001 one\n- [x] T001 again\n');
    expect(parsed.tasks.map((task) => [task.id, task.writtenId, task.done, task.repeats])).toEqual([
      ['T001', 'T001', false, undefined],
      ['T001#2', 'T001', true, { id: 'T001', line: 2 }],
    ]);
    expect(parsed.warnings[0]).toMatch(/^T001 is written on 2 lines \(2, 3\): line 3 is another task \(T001#2\); each line is a task of its own/);
  });

  it('drops dependencies on unknown ids with a warning', () => {
    const parsed = parseTasksMd('## Phase 1\n- [ ] T001 a (depends on T777)\n');
    expect(parsed.tasks[0]?.dependsOn).toEqual([]);
    expect(parsed.warnings[0]).toMatch(/T001 depends on T777, not found/);
  });

  it('handles tildes fences, nested fence markers and text before any heading', () => {
    const text = ['- [ ] T001 before any heading', '~~~', '- [ ] T002 fenced', '```', '- [ ] T003 still fenced', '~~~', '- [ ] T004 after'].join('\n');
    const parsed = parseTasksMd(text);
    expect(parsed.tasks.map((task) => task.id)).toEqual(['T001', 'T004']);
    expect(parsed.groups[0]?.heading).toBe('(tasks without a phase)');
  });

  it('returns nothing for an empty file', () => {
    expect(parseTasksMd('')).toEqual({ groups: [], tasks: [], strays: [], copies: [], checkboxes: { count: 0, openWithoutId: 0 }, warnings: [] });
  });
});

describe('dependenciesOf', () => {
  it.each([
    ['Implement X (depends on T012, T013)', ['T012', 'T013']],
    ['Implement X (Depends on: T012 and T013)', ['T012', 'T013']],
    ['Implement X (depends on T010–T012)', ['T010', 'T011', 'T012']],
    ['Implement X depends on T001; see T099', ['T001']],
    ['Implement X (blocked by T005)', ['T005']],
    ['Implement X after T001', []],
    ['Implement T004 (depends on T004, T003)', ['T003']],
  ])('%s', (text, expected) => {
    expect(dependenciesOf(text, 'T004')).toEqual(expected);
  });
});

describe('small helpers', () => {
  it('priorityNumber', () => {
    expect(priorityNumber('P1')).toBe(1);
    expect(priorityNumber('P12')).toBe(12);
    expect(priorityNumber(undefined)).toBeUndefined();
  });

  it('countUnchecked skips fenced examples', () => {
    expect(countUnchecked(readFixture('user-auth', 'specs', '001-user-auth', 'checklists', 'security.md'))).toBe(2);
    expect(countUnchecked(readFixture('user-auth', 'specs', '001-user-auth', 'checklists', 'requirements.md'))).toBe(0);
  });
});
