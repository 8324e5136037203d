import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, FAST, makeSandbox, PROJECT, runRalph, scenario, type Sandbox } from './helpers.ts';
import { answer, FEATURE, specKitProject as makeSpecKitProject, TASKS_PATH, tick } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const TASKS = [
  '# Tasks: Demo',
  '',
  '## Phase 1: Setup',
  '',
  '- [X] T001 Create the project structure',
  '',
  '## Phase 2: User Story 1 - Greet (Priority: P1) 🎯 MVP',
  '',
  '- [ ] T002 [US1] Write greet() in src/greet.ts',
  '- [ ] T003 [US1] Test greet() in tests/greet.test.ts (depends on T002)',
  '',
  '## Phase 3: User Story 2 - Farewell (Priority: P2)',
  '',
  '- [ ] T004 [US2] Write farewell() in src/farewell.ts',
  '',
  '## Notes',
  '',
  '```markdown',
  '- [ ] T999 Example line inside a code block, not a task',
  '```',
  '',
].join('\n');

const specKitProject = (box: Sandbox, tasks = TASKS): void => makeSpecKitProject(box, tasks);
const toolResultWithToken = JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'templates say: print <promise>COMPLETE</promise> when done', is_error: false }] } });

describe('Spec Kit mode, end to end', () => {
  it('ticks tasks story by story, writes progress.txt and the tracking JSON, and exits 0', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [
      { edit: [tick('T002'), tick('T003')], lines: [answer('Did T002 and T003.\n\nLearnings:\n- greet lives in src/greet.ts')] },
      { edit: [tick('T004')], lines: [answer('Did T004.\n\n<promise>COMPLETE</promise>')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', source: 'speckit', iterations: 2, tasksCompleted: 3 });
    expect(summary.records.map((r: { tasksDone: string[] }) => r.tasksDone)).toEqual([['T002', 'T003'], ['T004']]);
    const calls = agentCalls(sandbox);
    expect(calls[0]!.stdin).toContain('iteration 1 of 10');
    expect(calls[0]!.stdin).toContain(TASKS_PATH);
    expect(calls[0]!.stdin).not.toMatch(/\{(SPEC_PATH|TASKS_PATH|ITERATION_NUMBER|CURRENT_TASK)\}/);
    expect(calls[0]!.env.SPECIFY_FEATURE_DIRECTORY).toBe(path.join(sandbox.repo, FEATURE));
    const progress = readFileSync(path.join(sandbox.repo, FEATURE, 'progress.txt'), 'utf8');
    expect(progress).toContain('## Codebase Patterns');
    expect(progress.match(/^## Iteration \d+ - /gm)).toHaveLength(2);
    expect(progress).toContain('greet lives in src/greet.ts');
    expect(progress).toMatch(/✅ Completed/);
    expect(existsSync(path.join(sandbox.repo, FEATURE, 'ralph-tasks.json'))).toBe(true);
    // tasks.md was changed only by the agent's ticks.
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH), 'utf8')).toBe(TASKS.replace('- [ ] T002', '- [X] T002').replace('- [ ] T003', '- [X] T003').replace('- [ ] T004', '- [X] T004'));
  });

  it('does not stop on a premature promise, nor on a token inside a tool result', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [
      { edit: [tick('T002')], lines: [answer('Did T002.\n<promise>COMPLETE</promise>')] },
      { edit: [tick('T003')], lines: [toolResultWithToken, answer('Did T003, T004 remains.')] },
      { edit: [tick('T004')], lines: [answer('Did T004. <promise>COMPLETE</promise>')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/premature completion promise in iteration 1: 2 tasks remain/);
    const records = JSON.parse(result.stdout).records as Array<{ claimedComplete: boolean }>;
    expect(records.map((r) => r.claimedComplete)).toEqual([true, false, true]);
    expect(records).toHaveLength(3);
  });

  it('skips a task that fails three iterations in a row, finishes the rest, and does not call that complete', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS.replace('(depends on T002)', ''));
    scenario(sandbox, [
      { lines: [answer('Could not do T002.')] },
      { lines: [answer('Still stuck on T002.')] },
      { lines: [answer('T002 is impossible.')] },
      { edit: [tick('T003')], lines: [answer('Did T003.')] },
      { edit: [tick('T004')], lines: [answer('Did T004.')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/warning: .*T002.*skip/i);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((r: { taskId: string; outcome: string }) => `${r.taskId}:${r.outcome}`)).toEqual(['T002:no_change', 'T002:no_change', 'T002:no_change', 'T003:pass', 'T004:pass']);
    expect(summary).toMatchObject({ status: 'failed', exitCode: 1 });
    expect(summary.message).toMatch(/1 task was skipped after failing iteration after iteration and is still open, so the feature is not complete:\n  T002 /);
    expect(readFileSync(path.join(sandbox.repo, FEATURE, 'progress.txt'), 'utf8')).toMatch(/⏭️ Skipped|❌ Failed/);
    expect(agentCalls(sandbox)[3]!.stdin).toMatch(/T002/);
  });

  it('exits 2 at the limit (default 10 in this mode) with completed vs remaining', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [{ edit: [tick('T002')], lines: [answer('Did T002.')] }, { lines: [answer('nothing')] }]);
    const result = await runRalph(sandbox, ['--max-iterations', '2', '--json', ...FAST]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'limit_reached', tasksCompleted: 1, tasksRemaining: 2 });
  });

  it('exits 0 with "nothing to do" when every task is already checked', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS.replaceAll('- [ ] T00', '- [x] T00'));
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/nothing to do/);
    expect(agentCalls(sandbox)).toHaveLength(0);
  });

  it('exits 1 telling the user to run /speckit.tasks when tasks.md is missing', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    execFileSync('git', ['rm', '-q', TASKS_PATH], { cwd: sandbox.repo, env: sandbox.env });
    const result = await runRalph(sandbox, ['--source', 'speckit', ...FAST]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\/speckit\.tasks/);
  });

  it('warns about uncommitted changes and unchecked checklists, and still runs', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    mkdirSync(path.join(sandbox.repo, FEATURE, 'checklists'), { recursive: true });
    writeFileSync(path.join(sandbox.repo, FEATURE, 'checklists', 'ux.md'), '# UX\n- [ ] CHK001 Is it nice?\n');
    writeFileSync(path.join(sandbox.repo, 'scratch.txt'), 'uncommitted\n');
    scenario(sandbox, [{ edit: [tick('T002'), tick('T003'), tick('T004')], lines: [answer('All done.\n<promise>COMPLETE</promise>')] }]);
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/warning: .*checklist/i);
    expect(result.stderr).toMatch(/warning: uncommitted changes from before the run \(2 paths: scratch\.txt, specs\/001-demo\/checklists\/ux\.md\): ralph's own commits leave them out, but the agent commits its work itself and may include them/);
  });

  it('does not end with exit 0 while T102.1 is open under a ticked T102, and ends once it is ticked', async () => {
    sandbox = makeSandbox();
    const tasks = ['# Tasks: Mail', '', '## Phase 1: Setup', '', '- [X] T101 Create the mail module in src/mail/', '- [X] T102 Send invoices by mail in src/mail/send.ts', '  - [ ] T102.1 Queue the mails in src/mail/queue.ts', ''].join('\n');
    specKitProject(sandbox, tasks);
    const plan = await runRalph(sandbox, ['--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('tasks: 2 done, 1 remaining, 1 ready');
    expect(plan.stdout).toContain('1. T102.1 Queue the mails in src/mail/queue.ts');
    // The agent first claims completion without ticking anything, then ticks the nested line.
    scenario(sandbox, [
      { lines: [answer('Everything is done.\n<promise>COMPLETE</promise>')] },
      { edit: [{ file: TASKS_PATH, from: '  - [ ] T102.1', to: '  - [X] T102.1' }], lines: [answer('Queued the mails.')] },
    ]);
    const limited = await runRalph(sandbox, ['--max-iterations', '1', '--json', ...FAST]);
    expect(limited.code, limited.stderr).toBe(2);
    expect(JSON.parse(limited.stdout)).toMatchObject({ status: 'limit_reached', tasksRemaining: 1 });
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((r: { taskId: string; outcome: string; tasksDone: string[] }) => [r.taskId, r.outcome, r.tasksDone])).toEqual([['T102.1', 'pass', ['T102.1']]]);
    expect(agentCalls(sandbox)[0]!.stdin).toContain('T102.1 Queue the mails in src/mail/queue.ts');
  });

  it('a checklist summary repeating every task: 7 remaining, its lines never worked on, a ticked copy completes nothing, exit 0 once the tasks are ticked', async () => {
    sandbox = makeSandbox();
    // T001-T013 ticked, T014-T020 open, then "## Task Checklist Summary" repeating all 20 unticked (lines 57-85).
    specKitProject(sandbox, readFileSync(path.join(PROJECT, 'tests', 'fixtures', 'speckit', 'patterns', 'checklist-summary.md'), 'utf8'));
    const plan = await runRalph(sandbox, ['--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('tasks: 13 done, 7 remaining, 2 ready');
    expect(plan.stderr).toContain('warning: specs/001-demo/tasks.md: lines 57-61, 65-69, 73-75 repeat tasks already ticked (T001 to T013): not counted and not worked on\n');
    expect(plan.stderr).toContain('warning: specs/001-demo/tasks.md: lines 76-77, 81-85 repeat open tasks (T014 to T020): not counted as tasks of their own; each is done with its task\n');
    const json = await runRalph(sandbox, ['--dry-run', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, remaining: 7, ready: [{ id: 'T014' }, { id: 'T015' }] });
    // The agent first ticks only the summary's copy of T014 (line 76), then the tasks themselves.
    const summaryT014 = '- [ ] T013 [US1] Build the sign-up page in `app/src/pages/SignUp.vue`\n- [ ] T014';
    scenario(sandbox, [
      { edit: [{ file: TASKS_PATH, from: summaryT014, to: summaryT014.replace('- [ ] T014', '- [X] T014') }], lines: [answer('Ticked T014 in the summary.')] },
      { edit: [tick('T014'), tick('T015')], lines: [answer('Did T014 and T015.')] },
      { edit: ['T016', 'T017', 'T018', 'T019', 'T020'].map(tick), lines: [answer('Did T016 to T020.')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', iterations: 3, tasksCompleted: 7 });
    expect(summary.records.map((r: { taskId: string; outcome: string; tasksDone: string[] }) => [r.taskId, r.outcome, r.tasksDone])).toEqual([
      ['T014', 'no_change', []],
      ['T014', 'pass', ['T014', 'T015']],
      ['T016', 'pass', ['T016', 'T017', 'T018', 'T019', 'T020']],
    ]);
    const calls = agentCalls(sandbox);
    expect(calls[0]!.stdin).toContain('- T014 is written again on line 76: tick that line too when this task is done');
    expect(calls[1]!.stdin).toContain('- Line 76 repeats this task and is already ticked: that does not make it done; tick line 33 once the work is done');
    const tracking = JSON.parse(readFileSync(path.join(sandbox.repo, FEATURE, 'ralph-tasks.json'), 'utf8'));
    expect(tracking.summary).toEqual({ total: 20, done: 20, open: 0, skipped: 0 });
    expect(tracking.tasks.find((task: { id: string }) => task.id === 'T001')).toMatchObject({ status: 'done', copies: [57] });
    // The stale summary is left as the agent left it: ralph never needed it ticked.
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH), 'utf8').split('\n').slice(56).filter((line) => line.startsWith('- [ ]'))).toHaveLength(19);
  });

  it('a summary of short titles under "### Phase N (4 tasks)" subheadings: 4 remaining, the rows named in two warnings, never worked, exit 0 once the tasks are ticked', async () => {
    sandbox = makeSandbox();
    // T001-T006 ticked, T007-T010 open, then "## Task Checklist Summary" repeating all ten as "- [ ] T001 - short title".
    specKitProject(sandbox, readFileSync(path.join(PROJECT, 'tests', 'fixtures', 'speckit', 'patterns', 'abbreviated-summary.md'), 'utf8'));
    const plan = await runRalph(sandbox, ['--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('tasks: 6 done, 4 remaining, 1 ready');
    expect(plan.stderr).toContain('warning: specs/001-demo/tasks.md: lines 37-40, 43-44 repeat tasks already ticked (T001 to T006): not counted and not worked on\n');
    expect(plan.stderr).toContain('warning: specs/001-demo/tasks.md: lines 45, 48-50 repeat open tasks (T007, T008, T009, T010): not counted as tasks of their own; each is done with its task\n');
    expect(plan.stderr).not.toContain('is written on');
    expect(plan.stderr.match(/warning:/g)).toHaveLength(2);
    scenario(sandbox, [
      { edit: [tick('T007')], lines: [answer('Did T007.')] },
      { edit: ['T008', 'T009', 'T010'].map(tick), lines: [answer('Did T008 to T010.')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', iterations: 2, tasksCompleted: 4 });
    expect(summary.records.map((r: { taskId: string; tasksDone: string[] }) => [r.taskId, r.tasksDone])).toEqual([
      ['T007', ['T007']],
      ['T008', ['T008', 'T009', 'T010']],
    ]);
    expect(agentCalls(sandbox)[0]!.stdin).toContain('- T007 is written again on line 45: tick that line too when this task is done');
    const tracking = JSON.parse(readFileSync(path.join(sandbox.repo, FEATURE, 'ralph-tasks.json'), 'utf8'));
    expect(tracking.summary).toEqual({ total: 10, done: 10, open: 0, skipped: 0 });
  });

  it('stops with exit 1, naming the line, when an open task line sits outside the phases', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS.replaceAll('- [ ] T00', '- [x] T00').replace('## Notes\n', '## Notes\n\n- [ ] T998 Publish the release notes\n'));
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/specs\/001-demo\/tasks\.md:\d+: - \[ \] T998 Publish the release notes: it sits under "Notes"/);
    expect(result.stderr).not.toMatch(/complete: all tasks/);
    expect(agentCalls(sandbox)).toHaveLength(0);
  });
});
