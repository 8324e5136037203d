// Spec Kit's extension hooks (.specify/extensions.yml): the mandatory before_implement hooks run as agent
// passes of their own before the first task, the after_implement ones once every task is done; optional
// ones are listed, never run; a passed hook is not run again by the run that resumes; a failed one ends the
// run naming it; a file ralph cannot read stops it before anything runs.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, FAST, makeSandbox, runRalph, scenario, type Sandbox } from './helpers.ts';
import { answer, commitAll, FEATURE, specKitProject, tick } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const TASKS = ['# Tasks: Demo', '', '## Phase 1: Setup', '', '- [X] T001 Create the project structure', '', '## Phase 2: User Story 1 - Greet (Priority: P1)', '', '- [ ] T002 [US1] Write greet() in src/greet.ts', '- [ ] T003 [US1] Write farewell() in src/farewell.ts', ''].join('\n');

// As `specify extension add` writes it (PyYAML block style).
const EXTENSIONS = [
  'installed:',
  '- git',
  '- review',
  'settings:',
  '  auto_execute_hooks: true',
  'hooks:',
  '  before_implement:',
  '  - extension: git',
  '    command: speckit.git.commit',
  '    enabled: true',
  '    optional: true',
  '    priority: 10',
  '    prompt: Commit outstanding changes before implementation?',
  "    description: ''",
  '    condition: null',
  '  - extension: git',
  '    command: speckit.git.validate',
  '    enabled: true',
  '    optional: false',
  '    priority: 10',
  '    prompt: Execute speckit.git.validate?',
  '    description: Check the feature branch',
  '    condition: null',
  '  after_implement:',
  '  - extension: review',
  '    command: speckit.review.run',
  '    enabled: true',
  '    optional: false',
  '    priority: 10',
  '    prompt: Execute speckit.review.run?',
  '    description: Review the implementation',
  '    condition: null',
  '  - extension: jira',
  '    command: speckit.jira.sync',
  '    optional: false',
  '    condition: env.JIRA_TOKEN is set',
  '',
].join('\n');

function project(box: Sandbox, extensions = EXTENSIONS): void {
  specKitProject(box, TASKS);
  writeFileSync(path.join(box.repo, '.specify', 'extensions.yml'), extensions);
  commitAll(box, 'extension hooks');
}

const failed = JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true, result: 'the review found no tests', num_turns: 1, total_cost_usd: 0.001 });

describe('Spec Kit extension hooks, end to end', () => {
  it('the dry run shows the hooks it runs, offers and leaves', async () => {
    sandbox = makeSandbox();
    project(sandbox);
    const plan = await runRalph(sandbox, ['--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('hooks before_implement (.specify/extensions.yml), each an agent pass before the first task: /speckit.git.validate (git)\n');
    expect(plan.stdout).toContain('hooks before_implement, optional (not run by ralph; run them yourself): /speckit.git.commit "Commit outstanding changes before implementation?"\n');
    expect(plan.stdout).toContain('hooks after_implement (.specify/extensions.yml), each an agent pass once every task is done: /speckit.review.run (review)\n');
    expect(plan.stdout).toContain('hooks after_implement with a condition (not run, as /speckit.implement does not): /speckit.jira.sync if env.JIRA_TOKEN is set\n');
    expect(agentCalls(sandbox)).toEqual([]);
  });

  it('runs the mandatory before hook first, the tasks, then the after hook; records each once', async () => {
    sandbox = makeSandbox();
    project(sandbox);
    scenario(sandbox, [
      { lines: [answer('The branch is a feature branch.')] },
      { edit: [tick('T002'), tick('T003')], lines: [answer('Did T002 and T003.')] },
      { lines: [answer('Reviewed: looks good.')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((r: { taskId: string; outcome: string }) => [r.taskId, r.outcome])).toEqual([
      ['before_implement:speckit.git.validate', 'pass'],
      ['T002', 'pass'],
      ['after_implement:speckit.review.run', 'pass'],
    ]);
    expect(summary.message).toBe("all tasks of Spec Kit feature 001-demo (specs/001-demo/tasks.md, chosen by the branch name) are complete; the project's hooks passed: before_implement speckit.git.validate (git), after_implement speckit.review.run (review)");
    expect(summary.hooks).toEqual([
      { name: 'before_implement speckit.git.validate (git)', outcome: 'pass', iteration: 1 },
      { name: 'after_implement speckit.review.run (review)', outcome: 'pass', iteration: 3 },
    ]);
    const calls = agentCalls(sandbox);
    expect(calls.map((call) => call.stdin)).toEqual(['/speckit.git.validate', expect.stringContaining('T002'), '/speckit.review.run']);
    expect(calls[0]!.env.SPECIFY_FEATURE_DIRECTORY).toBe(path.join(sandbox.repo, FEATURE));
    expect(result.stderr).toMatch(/iteration 1\/\d+: before_implement:speckit\.git\.validate git extension's hook: Check the feature branch\n/);
    const progress = readFileSync(path.join(sandbox.repo, FEATURE, 'progress.txt'), 'utf8');
    expect(progress).toContain("- Task: after_implement:speckit.review.run review extension's hook: Review the implementation\n- Status: ");
    const tracking = JSON.parse(readFileSync(path.join(sandbox.repo, FEATURE, 'ralph-tasks.json'), 'utf8'));
    expect(tracking.hooks).toEqual({ passed: ['before_implement:speckit.git.validate', 'after_implement:speckit.review.run'], closed: true });
    // Run again: the feature is complete and its hooks passed: nothing runs.
    const again = await runRalph(sandbox, ['--json', ...FAST]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).records).toEqual([]);
    expect(agentCalls(sandbox)).toHaveLength(3);
  });

  it('a failed after hook ends the run with exit 1 naming it; the resumed run runs only that hook again', async () => {
    sandbox = makeSandbox();
    project(sandbox);
    scenario(sandbox, [
      { lines: [answer('Validated.')] },
      { edit: [tick('T002'), tick('T003')], lines: [answer('Did T002 and T003.')] },
      { lines: [failed] },
      { lines: [answer('Reviewed.')] },
    ]);
    const first = await runRalph(sandbox, ['--json', '--retries', '1', ...FAST]);
    expect(first.code, first.stderr).toBe(1);
    expect(JSON.parse(first.stdout).message).toBe("the project's after_implement speckit.review.run (review) hook failed (iteration 3): the review found no tests; nothing else runs, and the next run tries the hook again");
    const second = await runRalph(sandbox, ['--json', ...FAST]);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).records.map((r: { taskId: string }) => r.taskId)).toEqual(['after_implement:speckit.review.run']);
    expect(agentCalls(sandbox).map((call) => call.stdin)).toEqual(['/speckit.git.validate', expect.stringContaining('T002'), '/speckit.review.run', '/speckit.review.run']);
  });

  it('with --parallel 2 nothing starts beside a hook pass, which runs in the repository itself', async () => {
    sandbox = makeSandbox();
    project(sandbox);
    scenario(sandbox, [
      { workMs: 1500, lines: [answer('Validated.')] },
      { edit: [tick('T002')], lines: [answer('Did T002.')] },
      { edit: [tick('T003')], lines: [answer('Did T003.')] },
      { lines: [answer('Reviewed.')] },
    ]);
    const result = await runRalph(sandbox, ['--json', '--parallel', '2', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(4);
    expect(calls[0]!.stdin).toBe('/speckit.git.validate');
    expect(calls[0]!.cwd).toBe(sandbox.repo);
    // The tasks start once the hook's agent ended, not beside it.
    for (const call of calls.slice(1, 3)) expect(Date.parse(call.time) - Date.parse(calls[0]!.time)).toBeGreaterThanOrEqual(1400);
    expect(calls[3]!.stdin).toBe('/speckit.review.run');
  });

  it('a malformed extensions.yml: one line naming the file and the line, exit 1, no agent started', async () => {
    sandbox = makeSandbox();
    project(sandbox, 'hooks:\n  after_implement:\n  - command: speckit.review.run\n      optional: false\n');
    const result = await runRalph(sandbox, FAST);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('.specify/extensions.yml:4: indented deeper than the mapping it belongs to');
    expect(result.stderr).not.toMatch(/at .*\.ts:\d+/);
    expect(agentCalls(sandbox)).toEqual([]);
  });
});
