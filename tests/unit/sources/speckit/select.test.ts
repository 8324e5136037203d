import { describe, it, expect } from 'vitest';
import { parseTasksMd } from '../../../../lib/sources/speckit/parse.ts';
import { buildSnapshot, commitMessageFor, currentTaskBlock, explainStuck, readyTasks } from '../../../../lib/sources/speckit/select.ts';
import { readFixture } from './helpers.ts';

const none = new Set<string>();
const ids = (tasks: { id: string }[]): string[] => tasks.map((task) => task.id);

describe('readyTasks', () => {
  const userAuth = parseTasksMd(readFixture('user-auth', 'specs', '001-user-auth', 'tasks.md'));

  it('offers the open tasks of the first phase with open tasks, first one first', () => {
    expect(ids(readyTasks(userAuth, none))).toEqual(['T005', 'T006']);
  });

  it('respects "depends on" text inside a story, even when the dependency is written later', () => {
    const text = readFixture('user-auth', 'specs', '001-user-auth', 'tasks.md').replace(/- \[ \] (T00[56])/g, '- [X] $1');
    const parsed = parseTasksMd(text);
    expect(ids(readyTasks(parsed, none))).toEqual(['T007', 'T008', 'T009', 'T012']);
    const more = parseTasksMd(text.replace(/- \[ \] (T00[789]|T012)/g, '- [X] $1'));
    expect(ids(readyTasks(more, none))).toEqual(['T010']);
  });

  it('moves past a phase whose only open tasks are skipped', () => {
    expect(ids(readyTasks(userAuth, new Set(['T005', 'T006'])))).toEqual(['T007', 'T008', 'T009', 'T012']);
  });

  it('falls back to the earliest unblocked task when the current phase waits on a later one', () => {
    const parsed = parseTasksMd('## Phase 1\n- [ ] T001 a (depends on T002)\n## Phase 2\n- [ ] T002 b\n');
    expect(ids(readyTasks(parsed, none))).toEqual(['T002']);
  });

  it('is empty when everything open waits on a skipped task', () => {
    const parsed = parseTasksMd('## Phase 1\n- [ ] T001 a\n- [ ] T002 b (depends on T001)\n');
    expect(readyTasks(parsed, new Set(['T001']))).toEqual([]);
    expect(explainStuck(parsed, new Set(['T001']), 'specs/x/tasks.md')).toBe(
      [
        'no task in specs/x/tasks.md can start: every open task depends on one that is not done',
        'T002 waits on T001 (skipped after repeated failures)',
        'finish or check off the blocking tasks by hand (or fix the "depends on" text), then run ralph again',
        '1 task was skipped after failing iteration after iteration and is still open, so the feature is not complete:',
        '  T001 a (specs/x/tasks.md line 2)',
        '  finish them by hand and tick them, or run ralph again: a new run gives skipped tasks another chance',
      ].join('\n'),
    );
  });

  it('reports a dependency cycle as stuck', () => {
    const parsed = parseTasksMd('## Phase 1\n- [ ] T001 a (depends on T002)\n- [ ] T002 b (depends on T001)\n');
    expect(readyTasks(parsed, none)).toEqual([]);
    expect(explainStuck(parsed, none, 'tasks.md')).toContain('T001 waits on T002 (open)');
  });
});

describe('buildSnapshot', () => {
  const parsed = parseTasksMd(readFixture('user-auth', 'specs', '001-user-auth', 'tasks.md'));

  it('splits tasks into ready, remaining, done and skipped', () => {
    const snapshot = buildSnapshot(parsed, new Set(['T006']));
    expect(ids(snapshot.ready)).toEqual(['T005']);
    expect(ids(snapshot.done)).toEqual(['T001', 'T002', 'T003', 'T004']);
    expect(ids(snapshot.skipped ?? [])).toEqual(['T006']);
    // 12 open tasks and the open T950 line of a prose section, which no run may complete past.
    expect(snapshot.remaining).toHaveLength(13);
    expect(ids(snapshot.remaining)).not.toContain('T006');
    expect(snapshot.remaining.at(-1)).toMatchObject({ id: 'line 115', status: 'stray' });
  });

  it('keeps a task waiting for an answer remaining, never ready; its phase goes on without it', () => {
    const snapshot = buildSnapshot(parsed, none, new Set(['T005']));
    expect(ids(snapshot.ready)).toEqual(['T006']);
    expect(ids(snapshot.waiting ?? [])).toEqual(['T005']);
    expect(snapshot.remaining.find((task) => task.id === 'T005')).toMatchObject({ status: 'waiting' });
    expect(snapshot.remaining).toHaveLength(14);
    // Both tasks of the phase set aside: the next phase is ready, as after a skip.
    expect(ids(buildSnapshot(parsed, new Set(['T006']), new Set(['T005'])).ready)).toEqual(['T007', 'T008', 'T009', 'T012']);
  });

  it('says that a task waits on one waiting for an answer', () => {
    const small = parseTasksMd('## Phase 1\n- [ ] T001 a\n- [ ] T002 b (depends on T001)\n');
    expect(explainStuck(small, none, 'tasks.md', new Set(['T001']))).toContain('T002 waits on T001 (waiting for an answer to its question)');
  });

  it('carries phase, story and priority in the task', () => {
    const snapshot = buildSnapshot(parsed, none);
    const t009 = snapshot.remaining.find((task) => task.id === 'T009');
    expect(t009).toMatchObject({
      id: 'T009',
      title: 'Create User model in src/models/user.ts',
      status: 'open',
      priority: 1,
      meta: { story: 'US1', storyTitle: 'Sign in with email', parallel: true, phase: 'Phase 3: User Story 1 - Sign in with email (Priority: P1) 🎯 MVP' },
    });
    expect(snapshot.ready[0]?.priority).toBeUndefined();
  });
});

describe('currentTaskBlock', () => {
  const parsed = parseTasksMd(readFixture('user-auth', 'specs', '001-user-auth', 'tasks.md'));
  const task = (id: string) => parsed.tasks.find((item) => item.id === id)!;

  it('names the task, its story, the open tasks of the phase and the commit message', () => {
    const block = currentTaskBlock({ parsed, task: task('T010'), skipped: [], feature: '001-user-auth', tasksPath: 'specs/001-user-auth/tasks.md' });
    expect(block).toBe(
      [
        'T010 [US1] Implement SessionService in src/services/session.ts (depends on T009, T012)',
        '',
        `- Location: specs/001-user-auth/tasks.md line ${task('T010').line}`,
        '- Phase: Phase 3: User Story 1 - Sign in with email (Priority: P1) 🎯 MVP',
        '- User story: US1 "Sign in with email", priority P1 (MVP)',
        '- Section: Implementation for User Story 1',
        '- Depends on: T009 (open), T012 (open)',
        '- Open tasks of this phase, in order: T007, T008, T009, T010, T011, T012',
        '- Commit message once this phase is complete: `feat(001-user-auth): US1 Sign in with email`',
      ].join('\n'),
    );
  });

  it('tells the agent to leave skipped tasks alone', () => {
    const block = currentTaskBlock({ parsed, task: task('T006'), skipped: [{ id: 'T005', title: 'Implement password hashing helpers', failures: 3 }], feature: 'f', tasksPath: 't' });
    expect(block).toContain('- Open tasks of this phase, in order: T006');
    expect(block).toContain('Leave them alone');
    expect(block).toContain('- T005 Implement password hashing helpers (failed 3 iterations)');
  });

  it('tells the agent to leave tasks waiting for an answer alone, and gives it the answers to its own', () => {
    const block = currentTaskBlock({ parsed, task: task('T006'), skipped: [], feature: 'f', tasksPath: 't', waiting: [{ id: 'T005', title: 'Implement password hashing helpers' }], answers: 'Your question and its answer: …\n- Question: bcrypt?\n- Answer: argon2' });
    expect(block).toContain('- Open tasks of this phase, in order: T006');
    expect(block).toContain("Tasks waiting for a person's answer");
    expect(block).toContain('- T005 Implement password hashing helpers');
    expect(block).toContain('- Question: bcrypt?\n- Answer: argon2');
  });

  it('suggests a phase commit message when the phase is no user story', () => {
    expect(commitMessageFor('001-x', parsed.groups[0])).toBe('feat(001-x): Phase 1 Setup (Shared Infrastructure)');
    expect(commitMessageFor('001-x', undefined)).toBe('feat(001-x): tasks');
  });
});
