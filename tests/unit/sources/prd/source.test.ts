import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import type { GateResult } from '../../../../lib/gates.ts';
import { readHistory } from '../../../../lib/sources/prd/history.ts';
import { initFromRulebook } from '../../../../lib/sources/prd/init.ts';
import { progressContext } from '../../../../lib/sources/prd/progress.ts';
import { detectPrd } from '../../../../lib/sources/prd/locate.ts';
import { createPrdSource, MAX_ATTEMPTS } from '../../../../lib/sources/prd/source.ts';
import type { IterationInfo, IterationResult, Task, TaskSource } from '../../../../lib/sources/types.ts';
import { copyFixture, FIXTURES, fakeDeps, makeConfig, tempDir, type FakeDeps } from './helpers.ts';
import type { OptionValue } from '../../../../lib/config/values.ts';

interface Harness {
  root: string;
  deps: FakeDeps;
  warnings: string[];
  source: TaskSource;
  prd: () => Record<string, any>;
  progress: () => string;
}

/** A temp project with `fixture` copied to `at`, and a fresh source over it (call again to "restart"). */
function harness(fixture: string | undefined, at = '.rulebook-ralph/prd.json', flags: Record<string, OptionValue> = {}, root = tempDir()): Harness {
  if (fixture) {
    mkdirSync(path.dirname(path.join(root, at)), { recursive: true });
    copyFileSync(path.join(FIXTURES, fixture), path.join(root, at));
  }
  const deps = fakeDeps(root);
  const warnings: string[] = [];
  const source = createPrdSource({ root, config: makeConfig({ gate: ['none'], ...flags }), deps, warn: (message) => warnings.push(message) });
  return {
    root,
    deps,
    warnings,
    source,
    prd: () => JSON.parse(readFileSync(path.join(root, at), 'utf8')),
    progress: () => readFileSync(path.join(root, path.dirname(at), 'progress.txt'), 'utf8'),
  };
}

const info = (iteration: number): IterationInfo => ({ iteration, maxIterations: 10, sessionId: 'session-1' });

function result(task: Task, iteration: number, kind: IterationResult['kind'], extra: Partial<IterationResult> & { gates?: GateResult[] } = {}): IterationResult {
  return {
    iteration,
    task,
    kind,
    reason: kind === 'pass' ? 'completed' : kind === 'fail' ? 'quality gates failed' : 'no finished task',
    tasksDone: [],
    filesChanged: ['src/a.ts'],
    claimedComplete: false,
    agentText: '',
    durationMs: 1234,
    ...extra,
  };
}

const failingTest: GateResult = {
  name: 'test',
  command: 'npm run test',
  passed: false,
  exitCode: 1,
  durationMs: 900,
  outputTail: ' FAIL  tests/orders.test.ts\nAssertionError: expected 2 to be 3\n Tests  1 failed | 4 passed (5)\n',
};

const REPORT = '## Ralph Report\nStatus: completed\nSummary: added the priority column\nChanges:\n- db/migrations/004_priority.sql: new column\nLearnings:\n- migrations live in db/migrations and run with npm run migrate\n';

describe('detectPrd', () => {
  it('looks in .rulebook-ralph/, then .rulebook/ralph/, then the root', () => {
    const root = tempDir();
    expect(detectPrd(root)).toBeUndefined();
    writeFileSync(path.join(root, 'prd.json'), '{}');
    expect(detectPrd(root)).toBe(path.join(root, 'prd.json'));
    mkdirSync(path.join(root, '.rulebook/ralph'), { recursive: true });
    writeFileSync(path.join(root, '.rulebook/ralph/prd.json'), '{}');
    expect(detectPrd(root)).toBe(path.join(root, '.rulebook/ralph/prd.json'));
    mkdirSync(path.join(root, '.rulebook-ralph'));
    writeFileSync(path.join(root, '.rulebook-ralph/prd.json'), '{}');
    expect(detectPrd(root)).toBe(path.join(root, '.rulebook-ralph/prd.json'));
  });
});

describe('check', () => {
  it('reports a missing prd.json with what to do', async () => {
    const { source } = harness(undefined);
    const problems = await source.check();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^no prd\.json found in .*: looked for \.rulebook-ralph\/prd\.json, \.rulebook\/ralph\/prd\.json, prd\.json; run 'ralph init'/);
    await expect(source.snapshot()).rejects.toThrow(/no prd\.json found/);
  });

  it('reports a --prd path that does not exist', async () => {
    const { source, root } = harness(undefined, undefined, { prd: 'plans/prd.json' });
    expect(await source.check()).toEqual([`--prd plans/prd.json: file not found (${path.join(root, 'plans/prd.json')})`]);
  });

  it('uses --prd relative to the root', async () => {
    const { source } = harness('snarktank.json', 'plans/prd.json', { prd: 'plans/prd.json' });
    expect(await source.check()).toEqual([]);
    expect(source.describe()).toBe('plans/prd.json "TaskApp" (snarktank shape, 3 tasks)');
  });

  for (const [fixture, detail] of [
    ['malformed.json', /not valid JSON at line 5, column 5/],
    ['schema-errors/priority-string.json', /\$\.userStories\[1\]\.priority: expected a number, found "high"/],
  ] as const) {
    it(`names the file and the problem of ${fixture}, and never touches it`, async () => {
      const h = harness(fixture, 'prd.json');
      const file = path.join(h.root, 'prd.json');
      const before = readFileSync(file);
      const problems = await h.source.check();
      expect(problems).toHaveLength(1);
      expect(problems[0]!.startsWith(`${file}: `)).toBe(true);
      expect(problems[0]).toMatch(detail);
      expect(problems[0]).toMatch(/ralph leaves it untouched/);
      await expect(h.source.snapshot()).rejects.toThrow(detail);
      await expect(h.source.claim!({ id: 'US-001', title: 'x', status: 'pending' }, info(1))).rejects.toThrow(detail);
      await expect(h.source.recover()).rejects.toThrow(detail);
      expect(readFileSync(file).equals(before)).toBe(true);
      expect(readdirSync(h.root)).toEqual(['prd.json']);
    });
  }
});

describe('snapshot', () => {
  it('snarktank: ready by priority, passes: true is done', async () => {
    const { source } = harness('snarktank.json', 'prd.json');
    const snapshot = await source.snapshot();
    expect(snapshot.ready.map((task) => task.id)).toEqual(['US-002', 'US-003']);
    expect(snapshot.remaining.map((task) => task.id)).toEqual(['US-002', 'US-003']);
    expect(snapshot.done.map((task) => task.id)).toEqual(['US-001']);
    expect(snapshot.ready[0]).toMatchObject({ title: 'Display priority indicator on task cards', status: 'pending', priority: 2, meta: { shape: 'snarktank', attempts: 0 } });
  });

  it('rulebook: a task blocked outside ralph waits for a person', async () => {
    const { source } = harness('rulebook.json');
    const snapshot = await source.snapshot();
    expect(snapshot.ready.map((task) => task.id)).toEqual(['add-auth']);
    expect(snapshot.remaining.map((task) => task.id)).toEqual(['add-auth', 'migrate-api']);
    expect(source.explainStuck({ ...snapshot, ready: [] })).toBe(
      [
        'add-auth "Add JWT authentication": pending',
        'migrate-api "Migrate the public API to v2": blocked outside ralph; set its status to pending to let ralph work on it',
      ].join('\n'),
    );
  });
});

describe('an iteration through the source', () => {
  it('claim marks the task in_iteration atomically and keeps unknown fields', async () => {
    const h = harness('snarktank.json', 'prd.json');
    const [task] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(4));
    const story = h.prd().userStories[0];
    expect(story).toMatchObject({ id: 'US-002', status: 'in_iteration', iterationNumber: 4, startedAt: '2026-11-20T10:00:00.000Z', passes: false, notes: '' });
    expect(h.prd().branchName).toBe('ralph/task-priority');
    expect(readdirSync(h.root).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect((await h.source.snapshot()).ready.map((item) => item.id)).toEqual(['US-003']);
  });

  it('prompt carries the PRD path, task, criteria, progress, last commits and iteration', async () => {
    const h = harness('rulebook.json', '.rulebook-ralph/prd.json', { gate: ['npm run typecheck', 'npm test'], prompt: 'Prefer small commits.' });
    writeFileSync(
      path.join(h.root, '.rulebook-ralph/progress.txt'),
      '# Ralph Progress Log\n\n## Codebase Patterns\n- use zod for input validation\n\n---\n\n## 2026-11-19 09:00 - fix-logging - iteration 1: completed\nTask: fix-logging Structured request logging\n---\n',
    );
    const [task] = (await h.source.snapshot()).ready;
    const prompt = await h.source.prompt(task!, info(2));
    expect(prompt).toContain('# Ralph iteration 2 of 10');
    expect(prompt).toContain('- PRD: `.rulebook-ralph/prd.json`');
    expect(prompt).toContain('- Task: **add-auth** Add JWT authentication');
    expect(prompt).toContain('Add POST /auth/login and a middleware for /api/*.');
    expect(prompt).toContain('- [ ] 1.2 Create src/auth/token.ts with sign and verify helpers');
    expect(prompt).toContain('- [ ] The system SHALL issue a signed JWT');
    expect(prompt).toContain('## Codebase Patterns\n\n- use zod for input validation');
    expect(prompt).toContain('## 2026-11-19 09:00 - fix-logging - iteration 1: completed');
    expect(prompt).toContain('- a1b2c3d ralph: US-001 Add priority field\n- 0f0f0f0 initial commit');
    expect(prompt).toContain('   - typecheck: `npm run typecheck`\n   - test: `npm test`');
    expect(prompt).toContain('## Additional instructions\n\nPrefer small commits.');
    expect(prompt).not.toMatch(/\{\{\w+\}\}/);
    expect(h.deps.calls).toEqual([{ bin: 'git', args: ['log', '--oneline', '-20'], options: { cwd: h.root, timeoutMs: 15_000 } }]);
  });

  it('prompt bounds the progress history but always keeps the patterns', async () => {
    const h = harness('snarktank.json', 'prd.json');
    const entries = Array.from({ length: 400 }, (_, index) => `## 2026-11-01 10:00 - US-00X - iteration ${index + 1}: failed (blocked)\nReason: entry number ${index + 1}\n---\n`).join('\n');
    writeFileSync(path.join(h.root, 'progress.txt'), `# Ralph Progress Log\n\n## Codebase Patterns\n- keep handlers thin\n\n---\n\n${entries}`);
    const [task] = (await h.source.snapshot()).ready;
    const prompt = await h.source.prompt(task!, info(401));
    expect(prompt).toContain('- keep handlers thin');
    expect(prompt).toContain('entry number 400');
    expect(prompt).not.toContain('entry number 1\n');
    expect(prompt).toContain('[… earlier entries omitted');
    expect(Buffer.byteLength(prompt)).toBeLessThan(12 * 1024);
    const context = progressContext(readFileSync(path.join(h.root, 'progress.txt'), 'utf8'));
    expect(Buffer.byteLength(context.recent)).toBeLessThan(8 * 1024 + 100);
  });

  it('recorded(): the history record of that iteration and that story only (another host may use the number, --remote)', async () => {
    const h = harness('snarktank.json', 'prd.json', { agent: 'claude' });
    const [task, other] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(1));
    await h.source.settle!(result(task!, 1, 'pass', { agentText: REPORT }), info(1));
    expect(await h.source.recorded!(1, task!.id)).toBe(true);
    expect(await h.source.recorded!(1, other!.id)).toBe(false);
    expect(await h.source.recorded!(2, task!.id)).toBe(false);
  });

  it('recorded(): a record its landing renumbered past another host\'s counts for the iteration it began as', async () => {
    const h = harness('snarktank.json', 'prd.json', { agent: 'claude' });
    const [task, other] = (await h.source.snapshot()).ready;
    // Iteration 2 of this host, recorded as 3 (another host's record held 2): a kill before its commit.
    await h.source.claim!(task!, info(2));
    await h.source.settle!(result(task!, 3, 'pass', { agentText: REPORT }), info(3));
    expect(await h.source.recorded!(2, task!.id)).toBe(true);
    expect(await h.source.recorded!(2, other!.id)).toBe(false);
    expect(await h.source.recorded!(4, task!.id)).toBe(false);
  });

  it('settle pass: completed (passes: true), history record and progress entry', async () => {
    const h = harness('snarktank.json', 'prd.json', { agent: 'claude' });
    const [task] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(1));
    h.deps.clock.now += 60_000;
    const passed: GateResult = { name: 'typecheck', command: 'npm run typecheck', passed: true, exitCode: 0, durationMs: 2000, outputTail: 'ok' };
    await h.source.settle!(result(task!, 1, 'pass', { agentText: REPORT, commit: 'abc1234', gates: [passed] }), info(1));

    expect(h.prd().userStories[0]).toMatchObject({ id: 'US-002', passes: true, status: 'completed', completedAt: '2026-11-20T10:01:00.000Z', iterationNumber: 1 });
    const [record] = readHistory(h.root);
    expect(record).toEqual({
      iterationNumber: 1,
      timestamp: '2026-11-20T10:01:00.000Z',
      sessionId: 'session-1',
      taskId: 'US-002',
      taskTitle: 'Display priority indicator on task cards',
      tasksAttempted: ['US-002'],
      tasksCompleted: ['US-002'],
      failedCount: 0,
      qualityMetrics: {
        gates: [{ name: 'typecheck', command: 'npm run typecheck', passed: true, exitCode: 0, durationMs: 2000 }],
        gatesPassed: 1,
        gatesFailed: 0,
        allPassed: true,
        reported: [],
      },
      durationMs: 1234,
      agent: 'claude',
      commit: 'abc1234',
      learnings: ['migrations live in db/migrations and run with npm run migrate'],
      completionStatus: 'completed',
      reason: 'completed',
      summary: 'added the priority column',
    });
    const progress = h.progress();
    expect(progress.startsWith('# Ralph Progress Log\n')).toBe(true);
    expect(progress).toContain(
      [
        '## 2026-11-20 10:01 - US-002 - iteration 1: completed',
        'Task: US-002 Display priority indicator on task cards',
        'Reason: completed',
        'Gates: typecheck pass 2.0s',
        'Summary: added the priority column',
        'Changes:',
        '- db/migrations/004_priority.sql: new column',
        'Commit: abc1234',
        'Learnings:',
        '- migrations live in db/migrations and run with npm run migrate',
        '---',
      ].join('\n'),
    );
  });

  it('settle fail: blocked with the error, a learning note, retried until the attempts run out', async () => {
    const h = harness('rulebook.json');
    for (let iteration = 1; iteration <= MAX_ATTEMPTS; iteration += 1) {
      const ready = (await h.source.snapshot()).ready;
      expect(ready.map((task) => task.id)).toEqual(['add-auth']);
      await h.source.claim!(ready[0]!, info(iteration));
      await h.source.settle!(result(ready[0]!, iteration, 'fail', { gates: [failingTest] }), info(iteration));
      const stored = h.prd().tasks[1];
      expect(stored).toMatchObject({ status: 'blocked', attempts: iteration, labels: ['security'] });
      expect(stored.lastError).toBe('test (`npm run test`) failed with exit 1: AssertionError: expected 2 to be 3');
    }
    const snapshot = await h.source.snapshot();
    expect(snapshot.ready).toEqual([]);
    expect(h.source.explainStuck(snapshot).split('\n')[0]).toBe(
      'add-auth "Add JWT authentication": blocked after 3 failed attempts: test (`npm run test`) failed with exit 1: AssertionError: expected 2 to be 3; fix the cause, then set its status to pending',
    );
    const progress = h.progress();
    expect(progress).toContain('## 2026-11-20 10:00 - add-auth - iteration 1: failed (blocked)');
    expect(progress).toContain('Gates: test FAIL exit 1 0.9s');
    expect(progress).toContain('- Iteration 1 failed on add-auth: test (`npm run test`) failed with exit 1: AssertionError: expected 2 to be 3. Fix this first when the task is retried.');
    expect(progress).toContain('- Iteration 3 failed on add-auth: test (`npm run test`) failed with exit 1: AssertionError: expected 2 to be 3. The task is now blocked for good until a person looks at it.');
    const history = readHistory(h.root);
    expect(history.map((record) => [record.iterationNumber, record.completionStatus, record.failedCount, record.tasksCompleted])).toEqual([
      [1, 'failed', 1, []],
      [2, 'failed', 1, []],
      [3, 'failed', 1, []],
    ]);
    expect(history[0]!.qualityMetrics).toMatchObject({ gatesPassed: 0, gatesFailed: 1, allPassed: false, gates: [{ name: 'test', outputTail: failingTest.outputTail }] });
  });

  it('a failed task carries its error into the next prompt', async () => {
    const h = harness('rulebook.json');
    const [task] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(1));
    await h.source.settle!(result(task!, 1, 'fail', { gates: [failingTest] }), info(1));
    const prompt = await h.source.prompt((await h.source.snapshot()).ready[0]!, info(2));
    expect(prompt).toContain('An earlier attempt failed (1 so far): test (`npm run test`) failed with exit 1: AssertionError: expected 2 to be 3');
    expect(prompt).toContain('- Iteration 1 failed on add-auth');
  });

  it('settle no_change: the task goes back to pending, no attempt counted', async () => {
    const h = harness('snarktank.json', 'prd.json');
    const [task] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(1));
    await h.source.settle!(result(task!, 1, 'no_change', { agentText: '## Ralph Report\nStatus: partial\nSummary: badge only\n' }), info(1));
    expect(h.prd().userStories[0]).toMatchObject({ status: 'pending', passes: false, iterationNumber: 1 });
    expect(h.prd().userStories[0].attempts).toBeUndefined();
    expect(readHistory(h.root)[0]).toMatchObject({ completionStatus: 'partial', summary: 'badge only', failedCount: 0 });
    expect(h.progress()).toContain('- US-002 - iteration 1: partial');
  });
});

describe('recover and resume', () => {
  it('puts a task left in_iteration back to pending, returns the warning (the caller prints it once), and records the cut-short iteration once', async () => {
    const h = harness('snarktank.json', 'prd.json');
    const [task] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(3));
    h.deps.clock.now += 5_000;

    const restarted = harness(undefined, 'prd.json', {}, h.root);
    const warnings = await restarted.source.recover();
    expect(warnings).toEqual(['task US-002 was left in_iteration by iteration 3 (started 2026-11-20T10:00:00.000Z); put it back to pending']);
    expect(restarted.warnings).toEqual([]);
    expect(restarted.prd().userStories[0]).toMatchObject({ status: 'pending', iterationNumber: 3 });
    expect(restarted.prd().userStories[0].startedAt).toBeUndefined();
    expect(readHistory(h.root)).toMatchObject([{ iterationNumber: 3, completionStatus: 'interrupted', taskId: 'US-002', tasksCompleted: [] }]);
    expect(restarted.progress()).toContain('- US-002 - iteration 3: interrupted');
    expect(await restarted.source.recover()).toEqual([]);
    expect(await restarted.source.lastIteration!()).toBe(3);
  });

  it('abandon(): an iteration a clean ending cut short puts its task back and records it, so the next recover() finds nothing', async () => {
    const h = harness('snarktank.json', 'prd.json');
    const [task] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(3));
    h.deps.clock.now += 5_000;
    // Another iteration's number, or a task not in flight: nothing to put back.
    expect(await h.source.abandon!(task!, info(2), 'interrupted by SIGINT')).toBeUndefined();
    expect(h.prd().userStories[0]).toMatchObject({ status: 'in_iteration' });
    expect(await h.source.abandon!(task!, info(3), 'interrupted by SIGINT')).toBe('task US-002 is back to pending: iteration 3 did not finish (interrupted by SIGINT)');
    expect(h.prd().userStories[0]).toMatchObject({ status: 'pending', iterationNumber: 3 });
    expect(h.prd().userStories[0].startedAt).toBeUndefined();
    expect(readHistory(h.root)).toMatchObject([{ iterationNumber: 3, completionStatus: 'interrupted', taskId: 'US-002', durationMs: 5_000, reason: 'the run stopped before this iteration finished (interrupted by SIGINT); the task is back to pending' }]);
    expect(h.progress()).toContain('- US-002 - iteration 3: interrupted');
    // A second call (the loop's own failure path) changes nothing.
    expect(await h.source.abandon!(task!, info(3), 'again')).toBeUndefined();
    expect(h.progress().match(/iteration 3: interrupted/g)).toHaveLength(1);

    const restarted = harness(undefined, 'prd.json', {}, h.root);
    expect(await restarted.source.recover()).toEqual([]);
    expect(await restarted.source.lastIteration!()).toBe(3);
  });

  it('abandon() after the iteration was settled leaves the verdict alone', async () => {
    const h = harness('snarktank.json', 'prd.json');
    const [task] = (await h.source.snapshot()).ready;
    await h.source.claim!(task!, info(1));
    await h.source.settle!(result(task!, 1, 'fail'), info(1));
    const settled = h.prd().userStories[0];
    expect(await h.source.abandon!(task!, info(1), 'could not commit')).toBeUndefined();
    expect(h.prd().userStories[0]).toEqual(settled);
    expect(readHistory(h.root).map((record) => record.completionStatus)).not.toContain('interrupted');
  });

  it('a resumed run continues the numbering: no duplicates, every learning kept', async () => {
    const root = copyFixture('rulebook-project');
    initFromRulebook(root, { force: false, now: Date.parse('2026-11-20T09:00:00.000Z') });
    const first = harness(undefined, '.rulebook-ralph/prd.json', {}, root);
    expect(await first.source.check()).toEqual([]);
    expect(await first.source.lastIteration!()).toBe(0);

    // Iteration 1 passes, iteration 2 is killed (kill -9: no settle).
    const one = (await first.source.snapshot()).ready[0]!;
    expect(one.id).toBe('fix-logging');
    await first.source.claim!(one, info(1));
    await first.source.settle!(result(one, 1, 'pass', { agentText: REPORT }), info(1));
    const two = (await first.source.snapshot()).ready[0]!;
    expect(two.id).toBe('add-auth');
    await first.source.claim!(two, info(2));

    // `ralph resume`: a new process, same files.
    const second = harness(undefined, '.rulebook-ralph/prd.json', {}, root);
    expect(await second.source.recover()).toHaveLength(1);
    const next = (await second.source.lastIteration!()) + 1;
    expect(next).toBe(3);
    const again = (await second.source.snapshot()).ready[0]!;
    expect(again.id).toBe('add-auth');
    await second.source.claim!(again, info(next));
    await second.source.settle!(result(again, next, 'pass', { agentText: '## Ralph Report\nStatus: completed\nLearnings:\n- tokens live in src/auth\n' }), info(next));

    const history = readHistory(root);
    expect(history.map((record) => [record.iterationNumber, record.taskId, record.completionStatus])).toEqual([
      [1, 'fix-logging', 'completed'],
      [2, 'add-auth', 'interrupted'],
      [3, 'add-auth', 'completed'],
    ]);
    expect(readdirSync(path.join(root, '.rulebook-ralph/history')).sort()).toEqual(['iteration-1.json', 'iteration-2.json', 'iteration-3.json']);
    const progress = second.progress();
    const headings = [...progress.matchAll(/^## .* - iteration (\d+): (\w+)/gm)].map((match) => `${match[1]} ${match[2]}`);
    expect(headings).toEqual(['1 completed', '2 interrupted', '3 completed']);
    expect(progress).toContain('- migrations live in db/migrations and run with npm run migrate');
    expect(progress).toContain('- tokens live in src/auth');
    expect(progress.startsWith('# Ralph Progress Log\n')).toBe(true);
    const last = (await second.source.snapshot()).ready;
    expect(last.map((task) => task.id)).toEqual(['legacy-cleanup']);
    expect(await second.source.prompt(last[0]!, info(4))).toContain('The rulebook task folder `rulebook/tasks/legacy-cleanup/` (proposal.md, tasks.md, specs/) has the full context');
  });

  it('lastIteration takes the highest number from history, prd.json and progress.txt', async () => {
    const h = harness('rulebook.json');
    expect(await h.source.lastIteration!()).toBe(1);
    mkdirSync(path.join(h.root, '.rulebook-ralph/history'), { recursive: true });
    writeFileSync(path.join(h.root, '.rulebook-ralph/history/iteration-7.json'), '{ cut short');
    expect(await h.source.lastIteration!()).toBe(7);
    writeFileSync(path.join(h.root, '.rulebook-ralph/progress.txt'), '## 2026-11-20 10:00 - add-auth - iteration 9: completed\n---\n');
    expect(await h.source.lastIteration!()).toBe(9);
    expect(readHistory(h.root)).toEqual([]);
  });
});

describe('recent commits in the prompt', () => {
  it('asks git only when HEAD moved, and extends its own log after ralph commits', async () => {
    const h = harness('snarktank.json', 'prd.json');
    const gitLogs = () => h.deps.calls.filter((call) => call.bin === 'git' && call.args[0] === 'log').length;
    const [task] = (await h.source.snapshot()).ready;
    await h.source.prompt(task!, { ...info(1), head: 'aaaa' });
    await h.source.prompt(task!, { ...info(1), head: 'aaaa' });
    expect(gitLogs()).toBe(1);
    await h.source.claim!(task!, info(1));
    await h.source.settle!(result(task!, 1, 'pass'), info(1));
    await h.source.recordCommit!(1, 'bbbbbbbbbbbb', 'aaaa');
    const [next] = (await h.source.snapshot()).ready;
    const prompt = await h.source.prompt(next!, { ...info(2), head: 'bbbbbbbbbbbb' });
    expect(gitLogs()).toBe(1);
    expect(prompt).toContain(`bbbbbbb ralph: ${task!.id} ${task!.title}`);
    // A HEAD ralph did not make (the agent committed, or someone else) is read from git again.
    await h.source.prompt(next!, { ...info(2), head: 'cccc' });
    expect(gitLogs()).toBe(2);
  });
});
