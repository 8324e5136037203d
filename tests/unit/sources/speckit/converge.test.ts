import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeConvergePass, nextTaskId, projectConvergeCommand, saysConverged } from '../../../../lib/sources/speckit/converge.ts';
import { tempDir } from '../../../support/temp.ts';

const TASKS = ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [X] T001 Create src/a.ts', '- [X] T002 Create src/b.ts', ''].join('\n');
const judge = (after: string, answer = '', otherChanges: string[] = [], before = TASKS) => judgeConvergePass({ before, after, otherChanges, answer, tasksPath: 'specs/001-demo/tasks.md' });

describe('judgeConvergePass', () => {
  it('a new phase of open tasks appended after the last line: the work it found', () => {
    const after = `${TASKS}\n## Phase 2: Convergence\n\n- [ ] T003 Validate the email per FR-003 (missing)\n- [ ] T004 [P] Log failures per FR-007 (partial)\n`;
    expect(judge(after, 'Appended T003 and T004.')).toEqual({ kind: 'appended', tasks: ['T003', 'T004'] });
  });

  it('a summary of the appended tasks (short titles) counts nothing: only the new tasks are found work', () => {
    const after = `${TASKS}\n## Phase 2: Convergence\n\n- [ ] T003 Validate the email per FR-003 in src/email.ts\n- [ ] T004 Log failures per FR-007 in src/log.ts\n\n## Task Checklist Summary\n\n### Phase 2 (2 tasks)\n- [ ] T003 - email validation\n- [ ] T004 - Log failures\n`;
    expect(judge(after, 'Appended T003 and T004.')).toEqual({ kind: 'appended', tasks: ['T003', 'T004'] });
  });

  it('appended to a file that did not end with a line break: still appending', () => {
    const before = TASKS.trimEnd();
    expect(judge(`${before}\n- [ ] T003 Add the footer\n`, '', [], before)).toEqual({ kind: 'appended', tasks: ['T003'] });
  });

  it('a file without a final line break: its last line edited while appending is broken, not appended', () => {
    const before = TASKS.trimEnd();
    expect(judge(`${before} and src/c.ts\n- [ ] T003 Add the footer\n`, '', [], before)).toEqual({ kind: 'broke', reason: 'a converge pass may only append to specs/001-demo/tasks.md, but it changed line 6 ("- [X] T002 Create src/b.ts")' });
    expect(judge(`${before}- [ ] T003 Add the footer\n`, '', [], before)).toMatchObject({ kind: 'broke', reason: expect.stringContaining('changed line 6') });
  });

  it('an empty tasks.md: anything written is appended', () => {
    expect(judge('## Phase 1: Convergence\n\n- [ ] T001 Validate the email\n', '', [], '')).toEqual({ kind: 'appended', tasks: ['T001'] });
  });

  it('no change and a converged answer: done; no change without one proves nothing', () => {
    expect(judge(TASKS, 'Checked FR-001 to FR-009 against the code.\n\n✅ Converged')).toEqual({ kind: 'converged' });
    expect(judge(TASKS, '**Converged**: every requirement is built.')).toEqual({ kind: 'converged' });
    expect(judge(TASKS, 'I could not read plan.md.')).toMatchObject({ kind: 'silent' });
    expect(judge(TASKS, 'Not converged: FR-003 is missing.')).toMatchObject({ kind: 'silent' });
    expect(judge(TASKS, 'Converged? Not yet.')).toMatchObject({ kind: 'silent' });
  });

  it('an existing line edited, even a tick taken back: the contract is broken, naming the line', () => {
    expect(judge(TASKS.replace('- [X] T002 Create src/b.ts', '- [ ] T002 Create src/b.ts'), '✅ Converged')).toEqual({ kind: 'broke', reason: 'a converge pass may only append to specs/001-demo/tasks.md, but it changed line 6 ("- [X] T002 Create src/b.ts")' });
    expect(judge(TASKS.replace('Create src/a.ts', 'Create src/a.ts and more') + '- [ ] T003 x\n')).toMatchObject({ kind: 'broke', reason: expect.stringContaining('changed line 5') });
    expect(judge(TASKS.replace('# Tasks: demo', '# Tasks: demo (converged)') + '- [ ] T003 x\n')).toMatchObject({ kind: 'broke', reason: expect.stringContaining('changed line 1 ("# Tasks: demo")') });
  });

  it('names at most five of the other files it changed, then how many more', () => {
    const files = (count: number) => Array.from({ length: count }, (_, index) => `src/f${index + 1}.ts`);
    expect(judge(TASKS, '', files(5))).toEqual({ kind: 'broke', reason: 'a converge pass may only append to specs/001-demo/tasks.md, but it changed src/f1.ts, src/f2.ts, src/f3.ts, src/f4.ts, src/f5.ts' });
    expect(judge(TASKS, '', files(7))).toEqual({ kind: 'broke', reason: 'a converge pass may only append to specs/001-demo/tasks.md, but it changed src/f1.ts, src/f2.ts, src/f3.ts, src/f4.ts, src/f5.ts and 2 more' });
  });

  it('a file other than tasks.md changed (code touched): broken, whatever tasks.md shows', () => {
    expect(judge(`${TASKS}- [ ] T003 Add the footer\n`, '', ['src/a.ts'])).toEqual({ kind: 'broke', reason: 'a converge pass may only append to specs/001-demo/tasks.md, but it changed src/a.ts' });
  });

  it('appended tasks that come ticked are not found work: broken', () => {
    expect(judge(`${TASKS}- [X] T003 Add the footer\n`)).toMatchObject({ kind: 'broke', reason: expect.stringContaining('T003 came ticked') });
  });

  it('appended text with no task: converged only on a converged answer', () => {
    expect(judge(`${TASKS}\n<!-- converge: nothing found -->\n`, '✅ Converged')).toEqual({ kind: 'converged' });
    expect(judge(`${TASKS}\nNotes: looked fine.\n`)).toMatchObject({ kind: 'silent' });
  });
});

describe('saysConverged', () => {
  it.each(['✅ Converged', 'Converged.', '## ✅ Converged', '> Converged — nothing left', '- **Converged**'])('reads %j as converged', (text) => expect(saysConverged(`Report.\n${text}\n`)).toBe(true));
  it.each(['The feature has not converged.', 'Not converged', 'It converged on a design.', 'Converged?'])('does not read %j as converged', (text) => expect(saysConverged(text)).toBe(false));
});

describe('projectConvergeCommand', () => {
  it("finds the project's own /speckit.converge for the agent, in its command folders", () => {
    const root = tempDir('ralph-converge-');
    expect(projectConvergeCommand(root, 'claude')).toBeUndefined();
    mkdirSync(path.join(root, '.claude', 'commands'), { recursive: true });
    writeFileSync(path.join(root, '.claude', 'commands', 'speckit.converge.md'), '# converge\n');
    expect(projectConvergeCommand(root, 'claude')).toBe('.claude/commands/speckit.converge.md');
    expect(projectConvergeCommand(root, 'gemini')).toBeUndefined();
    mkdirSync(path.join(root, '.gemini', 'commands'), { recursive: true });
    writeFileSync(path.join(root, '.gemini', 'commands', 'speckit.converge.toml'), 'prompt = "x"\n');
    expect(projectConvergeCommand(root, 'gemini')).toBe('.gemini/commands/speckit.converge.toml');
  });
});

describe('nextTaskId', () => {
  it.each([
    ['after the highest id, wherever it is', '- [x] T007 a\n- [ ] T003 b\n', 'T008'],
    ['three digits, padded', '- [ ] T099 a\n- [x] T001 b\n', 'T100'],
    ['past a thousand', '- [ ] T999 a\n- [ ] T1000 b\n', 'T1001'],
    ['a file with no task', '# Tasks\n', 'T001'],
  ])('%s', (_name, text, expected) => expect(nextTaskId(text)).toBe(expected));
});
