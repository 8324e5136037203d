// The independent reviewer end to end (--review claude: the fake agent answers as worker and reviewer in
// turn, one scenario step per call): approval, rejection with the task reopened, a review without a
// verdict, and a reviewer that edits the repository.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, bdCalls, closeStep, FAST, makeSandbox, readBeads, runRalph, scenario, seedBeads, standardEpic, type Sandbox } from './helpers.ts';
import { answer, FEATURE, prdHistory, prdProject, report, SNARK, specKitProject, TASKS_PATH, tick } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const TASKS = ['# Tasks: Demo', '', '## Phase 1: User Story 1 - Greet (Priority: P1)', '', '- [ ] T001 [US1] Write greet() in src/greet.ts', ''].join('\n');

const approve = { lines: [answer('The function and its test are there.\n\nVERDICT: APPROVE')] };
const reject = (reasons: string) => ({ lines: [answer(`Problems found.\n\nVERDICT: REJECT: ${reasons}`)] });
const worker = (version: number, extra: Record<string, unknown> = {}) => ({ edit: [tick('T001')], write: { 'greet.ts': `export const greet = () => 'hi ${version}';\n` }, lines: [answer(`Wrote greet() v${version}.`)], ...extra });

interface Review {
  verdict: string;
  reasons?: string;
  attempts: number;
  agent: string;
  costUsd: number;
}
interface Row {
  outcome: string;
  reason: string;
  tasksDone: string[];
  costUsd: number;
  review?: Review;
}

const progressOf = (box: Sandbox): string => readFileSync(path.join(box.repo, FEATURE, 'progress.txt'), 'utf8');

describe('--review, Spec Kit mode', () => {
  it('APPROVE: the iteration passes, the reviewer saw the task, the diff and the gates, and the review is reported', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [worker(1), approve]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude:claude-opus-4', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { records: Row[]; costUsd: number };
    expect(summary.records).toHaveLength(1);
    expect(summary.records[0]).toMatchObject({ outcome: 'pass', tasksDone: ['T001'], review: { verdict: 'approve', agent: 'claude:claude-opus-4', attempts: 1 } });
    // The review's cost is in the iteration's and the session's totals.
    expect(summary.records[0]!.review!.costUsd).toBeGreaterThan(0);
    expect(summary.records[0]!.costUsd).toBeCloseTo(0.002, 6);
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(2);
    const review = calls[1]!;
    expect(review.argv).toEqual(expect.arrayContaining(['--model', 'claude-opus-4']));
    expect(review.stdin).toContain('Independent review of ralph iteration 1');
    expect(review.stdin).toContain('T001 [US1] Write greet() in src/greet.ts');
    expect(review.stdin).toContain("+export const greet = () => 'hi 1';");
    expect(review.stdin).toContain('VERDICT: APPROVE');
    expect(result.stderr).toMatch(/review of iteration 1 by claude:claude-opus-4: T001/);
    expect(result.stderr).toMatch(/review approved by claude:claude-opus-4/);
    expect(progressOf(sandbox)).toContain('- Review: approved by claude:claude-opus-4');
    const report = readFileSync(path.join(sandbox.repo, '.ralph', 'reports', readdirOne(sandbox)), 'utf8');
    expect(report).toMatch(/\| review \|/);
    expect(report).toContain('approved by claude:claude-opus-4');
  });

  it('REJECT then APPROVE: the task is reopened with the reasons in progress.txt and the next prompt, then done', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [worker(1), reject('greet() has no test; add tests/greet.test.ts'), worker(2), approve]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { records: Row[]; tasksCompleted: number };
    expect(summary.records.map((record) => [record.outcome, record.review?.verdict])).toEqual([
      ['fail', 'reject'],
      ['pass', 'approve'],
    ]);
    expect(summary.records[0]!.reason).toBe('the reviewer (claude) rejected the work: greet() has no test; add tests/greet.test.ts');
    expect(summary.records[0]!.tasksDone).toEqual([]);
    expect(summary.tasksCompleted).toBe(1);
    // Reopened between the two: the second worker found the box open again (its tick needs `- [ ] T001`)
    // and was told why.
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(4);
    expect(calls[2]!.stdin).toContain("ralph's independent reviewer rejected the last attempt at this task (iteration 1) and unchecked it: greet() has no test; add tests/greet.test.ts");
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH), 'utf8')).toContain('- [X] T001');
    const progress = progressOf(sandbox);
    const first = progress.slice(progress.indexOf('## Iteration 1 '), progress.indexOf('## Iteration 2 '));
    expect(first).toContain('❌ Failed');
    expect(first).toContain('greet() has no test; add tests/greet.test.ts');
    expect(first).toContain('- Review: rejected by claude: greet() has no test');
    // The worker's changes stay (no commit policy here): the file holds the second version.
    expect(readFileSync(path.join(sandbox.repo, 'greet.ts'), 'utf8')).toContain('hi 2');
    const tracking = JSON.parse(readFileSync(path.join(sandbox.repo, FEATURE, 'ralph-tasks.json'), 'utf8'));
    expect(tracking.tasks[0]).toMatchObject({ id: 'T001', status: 'done', failures: 1 });
    expect(tracking.tasks[0].review).toBeUndefined();
  });

  it('rejections in a row count as failures toward the skip rule: the third skips the task', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, `${TASKS}- [ ] T002 [US1] Document greet()\n`);
    const t2 = { edit: [tick('T002')], lines: [answer('Documented.')] };
    scenario(sandbox, [worker(1), reject('no test'), worker(2), reject('still no test'), worker(3), reject('the test does not assert'), t2, approve]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', ...FAST]);
    // T001 is set aside (still open work), T002 is done: the run ends stuck, naming the skipped task.
    expect(result.code, result.stderr).toBe(1);
    const summary = JSON.parse(result.stdout) as { records: Row[]; tasksRemaining: number; skippedTaskIds: string[] };
    expect(summary.records.map((record) => [record.outcome, record.review?.verdict])).toEqual([
      ['fail', 'reject'],
      ['fail', 'reject'],
      ['fail', 'reject'],
      ['pass', 'approve'],
    ]);
    expect(summary).toMatchObject({ tasksRemaining: 0, skippedTaskIds: ['T001'] });
    expect(result.stderr).toMatch(/T001 failed 3 iterations in a row: skipped/);
    expect(result.stderr).toMatch(/0 remaining, 1 skipped \(T001\)/);
  });

  it('a review without a verdict line is retried, never taken as approval', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [worker(1), { lines: [answer('Looks good to me, nice work.')] }, approve]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { records: Row[] };
    expect(summary.records).toHaveLength(1);
    expect(summary.records[0]!.review).toMatchObject({ verdict: 'approve', attempts: 2 });
    expect(result.stderr).toMatch(/attempt 1 failed \(transient\): no verdict: the reviewer's answer does not end with a VERDICT line/);
  });

  it('a reviewer that never gives a verdict: the task is reopened and the run stops, exit 1', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [worker(1), { lines: [answer('VERDICT: APPROVE\n\nAnything else?')] }]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', '--retries', '2', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    const summary = JSON.parse(result.stdout) as { records: Row[]; message: string };
    expect(summary.records[0]).toMatchObject({ outcome: 'fail', review: { verdict: 'failed', attempts: 2 } });
    expect(summary.message).toMatch(/^the reviewer claude gave no usable verdict after 2 attempts/);
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH), 'utf8')).toContain('- [ ] T001');
  });

  it('a reviewer that changes files fails the review; its changes are left in place and the task reopened', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [worker(1), { write: { 'reviewer-fix.ts': 'fixed\n' }, ...approve }, worker(2), approve]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { records: Row[] };
    expect(summary.records[0]).toMatchObject({ outcome: 'fail', review: { verdict: 'edited' } });
    expect(summary.records[0]!.reason).toContain('the reviewer changed the repository although it must not (reviewer-fix.ts)');
    expect(summary.records[1]).toMatchObject({ outcome: 'pass', review: { verdict: 'approve' } });
    expect(existsSync(path.join(sandbox.repo, 'reviewer-fix.ts'))).toBe(true);
    expect(result.stderr).toMatch(/warning: the reviewer claude changed reviewer-fix\.ts during the review of iteration 1/);
  });
});

describe('--review, PRD mode', () => {
  const prd = { ...SNARK, userStories: [SNARK.userStories[0]] };

  // One run checks both: the first review gives no verdict, the second approves.
  it('APPROVE: the story passes, and the history and progress.txt carry the review; a review without a verdict line is retried, not approved', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prd);
    scenario(sandbox, [{ write: { 'app.txt': 'one\n' }, lines: [report('completed')] }, { lines: [answer('Fine.')] }, approve]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { records: Row[] }).records[0]!.review).toMatchObject({ verdict: 'approve', attempts: 2 });
    const review = agentCalls(sandbox)[1]!.stdin;
    expect(review).toContain('### Task US-001: First story');
    expect(review).toContain('- works');
    expect(review).toContain('passed');
    expect(prdHistory(sandbox)[0]).toMatchObject({ completionStatus: 'completed', review: { verdict: 'approve', agent: 'claude' } });
    expect(readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8')).toContain('Review: approved by claude');
  });

  it('REJECT then APPROVE: passes goes back to false with the reasons, the next prompt shows them, then the story passes', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prd);
    scenario(sandbox, [
      { write: { 'app.txt': 'one\n' }, lines: [report('completed')] },
      reject('app.txt must end with a blank line'),
      { write: { 'app.txt': 'one\n\n' }, lines: [report('completed')] },
      approve,
    ]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { records: Row[] };
    expect(summary.records.map((record) => record.outcome)).toEqual(['fail', 'pass']);
    const calls = agentCalls(sandbox);
    expect(calls[2]!.stdin).toContain('An earlier attempt failed (1 so far): the reviewer (claude) rejected the work: app.txt must end with a blank line');
    const history = prdHistory(sandbox);
    expect(history[0]).toMatchObject({ completionStatus: 'failed', review: { verdict: 'reject', reasons: 'app.txt must end with a blank line' } });
    expect(history[0]!.commit).toBeNull();
    expect(history[1]).toMatchObject({ completionStatus: 'completed', review: { verdict: 'approve' } });
    const progress = readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8');
    expect(progress).toMatch(/iteration 1: failed \(blocked\)\nTask: US-001 First story\nReason: the reviewer \(claude\) rejected the work: app.txt must end with a blank line/);
    expect(JSON.parse(readFileSync(path.join(sandbox.repo, 'prd.json'), 'utf8')).userStories[0].passes).toBe(true);
  });
});

describe('--review with --parallel 2 (PRD)', () => {
  it('each worker\'s iteration is reviewed in its worktree; a rejected story runs again and its first work is kept on a branch', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, { ...SNARK, userStories: SNARK.userStories.map((story) => ({ ...story })) });
    const file = path.join(sandbox.root, 'scenario.json');
    // What each call does follows its prompt, not the order of calls: two agents run at once.
    const byPrompt = [
      { match: '### Task US-001:', steps: [reject('story 1 needs a test'), approve] },
      { match: '### Task US-002:', steps: [approve] },
      { match: '**US-001**', steps: [1, 2].map((n) => ({ write: { 'story-1.txt': `story 1 v${n}\n` }, lines: [report('completed')] })) },
      { match: '**US-002**', steps: [{ write: { 'story-2.txt': 'story 2\n' }, lines: [report('completed')] }] },
    ];
    writeFileSync(file, JSON.stringify({ byPrompt, steps: [{ lines: [answer('unexpected call')] }] }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    const result = await runRalph(sandbox, ['--json', '--parallel', '2', '--review', 'claude', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { records: Array<Row & { taskId: string; kept?: string }> };
    const byTask = (id: string) => summary.records.filter((record) => record.taskId === id).map((record) => [record.outcome, record.review?.verdict]);
    expect(byTask('US-001')).toEqual([
      ['fail', 'reject'],
      ['pass', 'approve'],
    ]);
    expect(byTask('US-002')).toEqual([['pass', 'approve']]);
    const rejected = summary.records.find((record) => record.review?.verdict === 'reject')!;
    expect(rejected.kept).toMatch(/^ralph-kept\//);
    const calls = agentCalls(sandbox);
    const reviews = calls.filter((call) => call.stdin.includes('Independent review of ralph iteration'));
    expect(reviews).toHaveLength(3);
    for (const review of reviews) expect(review.cwd).toContain(path.join('.ralph', 'worktrees'));
    expect(calls.some((call) => call.stdin.includes('An earlier attempt failed (1 so far): the reviewer (claude) rejected the work: story 1 needs a test'))).toBe(true);
    const git = (args: string[]) => execFileSync('git', args, { cwd: sandbox.repo, env: sandbox.env, encoding: 'utf8' });
    expect(git(['show', 'HEAD:story-1.txt'])).toBe('story 1 v2\n');
    expect(git(['show', `${rejected.kept}:story-1.txt`])).toBe('story 1 v1\n');
  });
});

describe('--review, beads mode', () => {
  it('REJECT reopens the bead and tells the next run why; APPROVE then closes the epic', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [closeStep('ws-9w6.2'), reject('the bead asks for a CLI flag; none was added'), closeStep('ws-9w6.2'), approve]);
    const result = await runRalph(sandbox, ['--json', '--review', 'claude', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { records: Row[] };
    expect(summary.records.map((record) => [record.outcome, record.review?.verdict])).toEqual([
      ['fail', 'reject'],
      ['pass', 'approve'],
    ]);
    expect(bdCalls(sandbox)).toContainEqual(['update', 'ws-9w6.2', '--status', 'open', '--json']);
    const calls = agentCalls(sandbox);
    expect(calls[1]!.stdin).toContain('### Bead ws-9w6.2: Task 1: build part 1');
    expect(calls[2]!.stdin).toMatch(/^\/sp:next\n\nralph's independent reviewer rejected the work on these beads/);
    expect(calls[2]!.stdin).toContain('- ws-9w6.2 "Task 1: build part 1" (iteration 1): the bead asks for a CLI flag; none was added');
    expect(readBeads(sandbox).find((issue) => issue.id === 'ws-9w6.2')?.status).toBe('closed');
  });

  it('refuses to start when the reviewer CLI is missing or unknown, naming it', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    const missing = await runRalph(sandbox, ['--review', 'codex', ...FAST]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("reviewer CLI 'codex' (--review codex) not found on PATH");
    const unknown = await runRalph(sandbox, ['--review', 'nosuch', ...FAST]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("--review nosuch: unknown agent 'nosuch'");
    expect(agentCalls(sandbox)).toHaveLength(0);
    const plan = await runRalph(sandbox, ['--dry-run', '--review', 'claude:claude-opus-4']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^review: claude:claude-opus-4 after each passing iteration \(templates\/review-prompt\.md\): claude -p .*--model claude-opus-4/m);
    const json = await runRalph(sandbox, ['--dry-run', '--json', '--review', 'claude:claude-opus-4']);
    expect(JSON.parse(json.stdout)).toMatchObject({ review: { agent: 'claude', model: 'claude-opus-4', label: 'claude:claude-opus-4' } });
  });
});

/** The one Markdown report of the session. */
function readdirOne(box: Sandbox): string {
  return readdirSync(path.join(box.repo, '.ralph', 'reports')).find((name) => name.endsWith('.md'))!;
}
