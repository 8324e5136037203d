// --converge: once every task of a Spec Kit feature is ticked, converge passes compare the spec with the code
// and append what is unbuilt as new tasks; the run ends 0 only when a pass finds nothing left.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, FEATURE, prdProject, specKitProject, TASKS_PATH, tick } from './projects.ts';
import { agentCalls, FAST, makeSandbox, runRalph, signalRalph, startRalph, waitFor, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const TASKS = ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', ''].join('\n');
const FOUND = '\n## Phase 2: Convergence\n\n- [ ] T002 Validate the input per FR-002 (missing)\n';

/** Scenario steps chosen by what the prompt asks: a converge pass, or a task. */
function byPrompt(box: Sandbox, entries: Array<{ match: string; steps: unknown[] }>): void {
  const file = path.join(box.root, 'scenario.json');
  writeFileSync(file, JSON.stringify({ byPrompt: entries }));
  box.env.FAKE_AGENT_SCENARIO = file;
}

const progress = (box: Sandbox): string => readFileSync(path.join(box.repo, FEATURE, 'progress.txt'), 'utf8');

describe('--converge', () => {
  it('a pass appends a task, the task is worked, a second pass converges: exit 0', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    byPrompt(sandbox, [
      { match: 'Converge pass 1 of 3', steps: [{ append: { [TASKS_PATH]: FOUND }, lines: [answer('FR-002 is not built: appended T002.')] }] },
      { match: 'Converge pass 2 of 3', steps: [{ lines: [answer('Checked FR-001 and FR-002 against the code.\n\n✅ Converged')] }] },
      { match: 'T002 Validate', steps: [{ edit: [tick('T002')], lines: [answer('Did T002.')] }] },
      { match: 'T001 Create', steps: [{ edit: [tick('T001')], lines: [answer('Did T001.\n\n<promise>COMPLETE</promise>')] }] },
    ]);
    const plan = await runRalph(sandbox, ['--dry-run', '--converge']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toContain("then converge: once every task is done, up to 3 passes, each a fresh agent that appends what the spec still asks for as tasks; prompt: ralph's templates/converge-prompt.md");
    const result = await runRalph(sandbox, ['--converge', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(4);
    expect(calls[1]!.stdin).toMatch(/^# Converge pass 1 of 3 \(iteration 2\): does feature 001-demo hold its spec\?/);
    expect(calls[1]!.stdin).toContain('(the next is T002)');
    expect(result.stderr).toMatch(/iteration 2 converge-1: pass in \S+ \(found unbuilt work: appended T002\)/);
    expect(result.stderr).toMatch(/iteration 4 converge-2: pass in \S+ \(converged: nothing of the spec is left to build\)/);
    expect(result.stderr).toMatch(/completed: all tasks of Spec Kit feature 001-demo .* are complete, and converge pass 2 found nothing left of the spec/);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', iterations: 4, converge: { passes: 2, resumed: 0, maxPasses: 3, appended: [['T002'], []], converged: true } });
    expect(summary.records.map((record: { taskId: string; converge?: unknown }) => [record.taskId, record.converge ?? null])).toEqual([
      ['T001', null],
      ['converge-1', { pass: 1, verdict: 'appended', appended: ['T002'] }],
      ['T002', null],
      ['converge-2', { pass: 2, verdict: 'converged' }],
    ]);
    expect(progress(sandbox)).toMatch(/## Iteration 2 - [^\n]*\n- Task: converge-1 converge pass 1 of 3\n- Status: ✅ Completed[\s\S]*- Note: found work the spec asks for: appended T002 to tasks.md/);
    expect(progress(sandbox)).toMatch(/- Task: converge-2 converge pass 2 of 3[\s\S]*- Note: converged: nothing of the spec is left to build/);
    const report = readFileSync(path.join(sandbox.repo, '.ralph', 'reports', `${summary.sessionId}.md`), 'utf8');
    expect(report).toContain('| **converge** | 2 of 3 passes: pass 1 appended T002; pass 2 found nothing (converged); converged |');
    // The agent committed nothing: ralph committed the ticks and what the pass appended; the tree ends clean.
    const git = (args: string[]): string => execFileSync('git', args, { cwd: sandbox.repo, encoding: 'utf8', env: sandbox.env });
    expect(git(['status', '--porcelain'])).toBe('');
    expect(git(['log', '--format=%s', '-4']).split('\n').filter(Boolean)).toEqual(['ralph: task state at the end of session ' + summary.sessionId, 'ralph: T002 Validate the input per FR-002 (missing)', 'ralph: converge pass 1 found T002', 'ralph: T001 Create src/a.ts']);
  }, 120_000);

  it('without --converge nothing changes: the run ends once the checklist is ticked', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    byPrompt(sandbox, [{ match: 'T001 Create', steps: [{ edit: [tick('T001')], lines: [answer('Did T001.')] }] }]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox)).toHaveLength(1);
    expect(JSON.parse(result.stdout).converge).toBeUndefined();
  });

  it('--max-converge 1 after a pass that found work: the work is done, then exit 2, not proven converged', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    byPrompt(sandbox, [
      { match: 'Converge pass 1 of 1', steps: [{ append: { [TASKS_PATH]: FOUND }, lines: [answer('Appended T002.')] }] },
      { match: 'T002 Validate', steps: [{ edit: [tick('T002')], lines: [answer('Did T002.')] }] },
      { match: 'T001 Create', steps: [{ edit: [tick('T001')], lines: [answer('Did T001.')] }] },
    ]);
    const result = await runRalph(sandbox, ['--converge', '--max-converge', '1', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    expect(agentCalls(sandbox)).toHaveLength(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'limit_reached', exitCode: 2, tasksRemaining: 0, converge: { passes: 1, converged: false }, message: expect.stringMatching(/are complete, but not proven converged after 1 converge pass \(--max-converge\): the last one found T002, now done$/) });
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH), 'utf8')).toContain('- [X] T002 Validate the input per FR-002 (missing)');
  });

  it('a pass that edits an existing line breaks the contract: exit 1 naming the line, its change left in place', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    byPrompt(sandbox, [
      { match: 'Converge pass 1 of 3', steps: [{ edit: [{ file: TASKS_PATH, from: '- [X] T001 Create src/a.ts', to: '- [X] T001 Create src/a.ts and src/b.ts' }], lines: [answer('✅ Converged')] }] },
      { match: 'T001 Create', steps: [{ edit: [tick('T001')], lines: [answer('Did T001.')] }] },
    ]);
    const result = await runRalph(sandbox, ['--converge', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', message: `converge pass 1 broke its contract: a converge pass may only append to ${TASKS_PATH}, but it changed line 5 ("- [X] T001 Create src/a.ts"); its changes are left in place for you to look at` });
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH), 'utf8')).toContain('and src/b.ts');
    expect(agentCalls(sandbox)).toHaveLength(2);
  });

  it('converge passes are iterations: the iteration limit before a pass ends the run with 2, not proven converged', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    byPrompt(sandbox, [{ match: 'T001 Create', steps: [{ edit: [tick('T001')], lines: [answer('Did T001.')] }] }]);
    const result = await runRalph(sandbox, ['--converge', '--max-iterations', '1', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'limit_reached', message: 'iteration limit of 1 reached before converge pass 1: not proven converged', converge: { passes: 0, converged: false } });
  });

  it('a run cut short after a pass goes on counting: the next run makes pass 2, not pass 1 again', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    byPrompt(sandbox, [
      { match: 'Converge pass 1 of 3', steps: [{ append: { [TASKS_PATH]: FOUND }, lines: [answer('Appended T002.')] }] },
      { match: 'Converge pass 2 of 3', steps: [{ lines: [answer('✅ Converged')] }] },
      // The first run is stopped while T002 is worked; the second run's agent does it.
      { match: 'T002 Validate', steps: [{ hang: true }, { edit: [tick('T002')], lines: [answer('Did T002.')] }] },
      { match: 'T001 Create', steps: [{ edit: [tick('T001')], lines: [answer('Did T001.')] }] },
    ]);
    const first = startRalph(sandbox, ['--converge', ...FAST]);
    await waitFor(() => agentCalls(sandbox).length === 3, 45_000, 'the T002 agent');
    signalRalph(sandbox, 'SIGINT');
    expect((await first.done).code).toBe(130);
    const plan = await runRalph(sandbox, ['--dry-run', '--converge']);
    expect(plan.stdout).toContain('up to 3 passes (1 already made by a run that was cut short: 2 left)');
    const second = await runRalph(sandbox, ['--converge', '--json', ...FAST]);
    expect(second.code, second.stderr).toBe(0);
    expect(agentCalls(sandbox).map((call) => /Converge pass (\d) of/.exec(call.stdin)?.[1]).filter(Boolean)).toEqual(['1', '2']);
    expect(JSON.parse(second.stdout).converge).toEqual({ passes: 2, resumed: 1, maxPasses: 3, appended: [[]], converged: true });
  });

  it('--parallel 2: the workers take the appended tasks like any others', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 [P] Create src/a.ts', '- [ ] T002 [P] Create src/b.ts', ''].join('\n'));
    const found = '\n## Phase 2: Convergence\n\n- [ ] T003 [P] Validate a per FR-003 (missing)\n- [ ] T004 [P] Validate b per FR-004 (missing)\n';
    const work = (id: string, file: string) => ({ match: `${id} `, steps: [{ write: { [file]: `${id}\n` }, edit: [tick(id)], lines: [answer(`Did ${id}.`)] }] });
    byPrompt(sandbox, [
      { match: 'Converge pass 1 of 3', steps: [{ append: { [TASKS_PATH]: found }, lines: [answer('Appended T003 and T004.')] }] },
      { match: 'Converge pass 2 of 3', steps: [{ lines: [answer('✅ Converged')] }] },
      work('T003', 'src/c.ts'),
      work('T004', 'src/d.ts'),
      work('T001', 'src/a.ts'),
      work('T002', 'src/b.ts'),
    ]);
    const result = await runRalph(sandbox, ['--converge', '--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.converge).toMatchObject({ passes: 2, appended: [['T003', 'T004'], []], converged: true });
    const byTask = Object.fromEntries(summary.records.map((record: { taskId: string; worker?: number }) => [record.taskId, record.worker ?? null]));
    expect(byTask['T003']).toEqual(expect.any(Number));
    expect(byTask['T004']).toEqual(expect.any(Number));
    expect(byTask['converge-1']).toBeNull();
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH), 'utf8')).toMatch(/- \[X\] T003[\s\S]*- \[X\] T004/);
  });

  it("the project's own /speckit.converge, where its Spec Kit installed one for the agent, is the pass's prompt", async () => {
    sandbox = makeSandbox();
    mkdirSync(path.join(sandbox.repo, '.claude', 'commands'), { recursive: true });
    writeFileSync(path.join(sandbox.repo, '.claude', 'commands', 'speckit.converge.md'), '---\ndescription: converge\n---\nCompare the spec with the code.\n');
    specKitProject(sandbox, TASKS.replace('- [ ] T001', '- [X] T001'));
    byPrompt(sandbox, [{ match: '/speckit.converge', steps: [{ lines: [answer('✅ Converged')] }] }]);
    const plan = await runRalph(sandbox, ['--dry-run', '--converge']);
    expect(plan.stdout).toContain("prompt: the project's /speckit.converge (.claude/commands/speckit.converge.md)");
    const result = await runRalph(sandbox, ['--converge', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox).map((call) => call.stdin.trim())).toEqual(['/speckit.converge']);
    expect(JSON.parse(result.stdout)).toMatchObject({ iterations: 1, converge: { passes: 1, converged: true } });
  });

  it('PRD mode does not converge yet: --converge is refused before anything runs', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const result = await runRalph(sandbox, ['--dry-run', '--converge']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('✗ --converge works in Spec Kit mode only: prd mode does not converge yet');
  });
});
