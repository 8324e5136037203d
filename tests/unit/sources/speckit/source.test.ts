import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import { createSpeckitSource } from '../../../../lib/sources/speckit/index.ts';
import { detectSpeckit } from '../../../../lib/sources/speckit/resolve.ts';
import type { Tracking } from '../../../../lib/sources/speckit/progress.ts';
import type { TaskSource } from '../../../../lib/sources/types.ts';
import { copyFixture, emptyProject, info, makeContext, result, type TestContext } from './helpers.ts';

const FEATURE = path.join('specs', '001-user-auth');

function read(root: string, ...parts: string[]): string {
  return readFileSync(path.join(root, ...parts), 'utf8');
}

function tracking(root: string, feature = FEATURE): Tracking {
  return JSON.parse(read(root, feature, 'ralph-tasks.json')) as Tracking;
}

/** Marks tasks done the way an agent does: flip the checkbox, keep every other byte. */
function checkOff(root: string, ...ids: string[]): void {
  const file = path.join(root, FEATURE, 'tasks.md');
  let text = readFileSync(file, 'utf8');
  for (const id of ids) text = text.replace(`- [ ] ${id} `, `- [X] ${id} `);
  writeFileSync(file, text);
}

async function iterate(source: TaskSource, ctx: TestContext, iteration: number, act: (taskId: string) => Parameters<typeof result>[2]) {
  const before = await source.snapshot();
  const task = before.ready[0]!;
  await source.claim?.(task, info(iteration));
  const prompt = await source.prompt(task, info(iteration));
  const overrides = act(task.id);
  ctx.clock.now += 60_000;
  await source.settle?.(result(task, iteration, overrides), info(iteration));
  return { task, prompt, after: await source.snapshot() };
}

describe('detectSpeckit', () => {
  it('sees a .specify/ folder or a specs/*/tasks.md', () => {
    expect(detectSpeckit(copyFixture('user-auth'))).toBe(true);
    const root = emptyProject();
    expect(detectSpeckit(root)).toBe(false);
    mkdirSync(path.join(root, 'specs', '001-x'), { recursive: true });
    expect(detectSpeckit(root)).toBe(false);
    writeFileSync(path.join(root, 'specs', '001-x', 'tasks.md'), '');
    expect(detectSpeckit(root)).toBe(true);
    const other = emptyProject();
    mkdirSync(path.join(other, '.specify'));
    expect(detectSpeckit(other)).toBe(true);
  });
});

describe('check()', () => {
  it('passes on a complete project and warns about unchecked checklist items', async () => {
    const ctx = makeContext(copyFixture('user-auth'));
    const source = createSpeckitSource(ctx);
    expect(await source.check()).toEqual([]);
    expect(ctx.warnings).toEqual([
      'specs/001-user-auth/tasks.md:115: "- [ ] T950 checkbox-looking line in a prose section is not a task" is not a task ralph works on (it sits under "Dependencies & Execution Order", which explains rather than lists work, and no task of the phases has the id T950); while it stays open the feature is not complete',
      'specs/001-user-auth/checklists/security.md has 2 unchecked items: /speckit.implement would stop to ask about them; ralph goes on without asking',
    ]);
    expect(source.describe()).toBe('Spec Kit feature 001-user-auth (specs/001-user-auth/tasks.md, chosen by the only feature with a tasks.md)');
    expect(source.defaultMaxIterations).toBe(10);
    expect(source.name).toBe('speckit');
  });

  it('asks for /speckit.tasks when tasks.md is missing, empty or has no tasks', async () => {
    const root = copyFixture('user-auth');
    const tasks = path.join(root, FEATURE, 'tasks.md');
    rmSync(tasks);
    expect(await createSpeckitSource(makeContext(root)).check()).toEqual(['specs/001-user-auth/tasks.md not found: run /speckit.tasks first to generate the task list']);
    writeFileSync(tasks, ' \n\n');
    expect(await createSpeckitSource(makeContext(root)).check()).toEqual(['specs/001-user-auth/tasks.md is empty: run /speckit.tasks first to generate the task list']);
    writeFileSync(tasks, '# Tasks\n\nTBD\n');
    expect(await createSpeckitSource(makeContext(root)).check()).toEqual([
      'specs/001-user-auth/tasks.md lists no tasks: it has no checkbox lines at all; ralph reads lines like "- [ ] T001 [P] [US1] Description" (ids: T followed by 3 or more digits, optionally a letter (T002a) or a dotted sub-number (T102.1)): run /speckit.tasks first',
    ]);
  });

  it('names a missing spec.md and plan.md, all problems at once', async () => {
    const root = copyFixture('user-auth');
    rmSync(path.join(root, FEATURE, 'spec.md'));
    rmSync(path.join(root, FEATURE, 'plan.md'));
    expect(await createSpeckitSource(makeContext(root, { extra: { template: 'nope.md' } })).check()).toEqual([
      'specs/001-user-auth/spec.md not found: run /speckit.specify first',
      'specs/001-user-auth/plan.md not found: run /speckit.plan first',
      `prompt template nope.md (from --template) cannot be read: give the path of a file, relative to ${root}`,
    ]);
  });

  it('reports an ambiguous feature with the candidates', async () => {
    const root = copyFixture('user-auth');
    mkdirSync(path.join(root, 'specs', '002-payments'));
    writeFileSync(path.join(root, 'specs', '002-payments', 'tasks.md'), '- [ ] T001 x\n');
    const source = createSpeckitSource(makeContext(root, { branch: 'main' }));
    expect(await source.check()).toEqual([
      "cannot tell which feature to work on: several have a tasks.md: specs/001-user-auth, specs/002-payments; pass --feature NAME, set SPECIFY_FEATURE_DIRECTORY, or check out the feature's branch",
    ]);
    expect(source.describe()).toBe('Spec Kit feature (unresolved)');
    expect(source.agentEnv?.()).toEqual({});
    expect(await source.lastIteration?.()).toBe(0);
    expect(await createSpeckitSource(makeContext(root, { branch: 'feat/002-payments' })).check()).toEqual([
      'specs/002-payments/spec.md not found: run /speckit.specify first',
      'specs/002-payments/plan.md not found: run /speckit.plan first',
    ]);
    expect(createSpeckitSource(makeContext(root, { extra: { feature: '001-user-auth' } })).describe()).toContain('chosen by --feature');
  });

  it('passes parse warnings on', async () => {
    const root = copyFixture('user-auth');
    writeFileSync(path.join(root, FEATURE, 'tasks.md'), '## Phase 1\n- [ ] T001 a (depends on T404)\n');
    const ctx = makeContext(root);
    await createSpeckitSource(ctx).check();
    expect(ctx.warnings[0]).toBe('specs/001-user-auth/tasks.md: T001 depends on T404, not found in tasks.md: that dependency is ignored');
  });
});

describe('snapshot() and prompt()', () => {
  it('offers the first open task of the first phase with open tasks', async () => {
    const source = createSpeckitSource(makeContext(copyFixture('user-auth')));
    const snapshot = await source.snapshot();
    expect(snapshot.ready.map((task) => task.id)).toEqual(['T005', 'T006']);
    // 13 open tasks and the open T950 line of a prose section.
    expect(snapshot.remaining).toHaveLength(14);
    expect(snapshot.done).toHaveLength(4);
    expect(snapshot.skipped).toEqual([]);
  });

  it('renders the default template with relative paths, the iteration and the task block', async () => {
    const ctx = makeContext(copyFixture('user-auth'), { env: { ANTHROPIC_API_KEY: 'sk-secret-value', GITHUB_TOKEN: 'ghp_secret' } });
    const source = createSpeckitSource(ctx);
    const task = (await source.snapshot()).ready[0]!;
    const prompt = await source.prompt(task, { iteration: 4, maxIterations: 12, sessionId: 's' });
    expect(prompt).toContain('# Ralph loop, iteration 4 of 12: implement Spec Kit feature 001-user-auth');
    expect(prompt).toContain('`specs/001-user-auth/progress.txt`');
    expect(prompt).toContain('`specs/001-user-auth/spec.md`');
    expect(prompt).toContain('`specs/001-user-auth/plan.md`');
    expect(prompt).toContain('`specs/001-user-auth/tasks.md`');
    expect(prompt).toContain('T005 [P] Implement password hashing helpers in src/lib/hash.ts\n');
    expect(prompt).toContain('- Open tasks of this phase, in order: T005, T006');
    expect(prompt).toContain('`feat(001-user-auth): <story id> <story title>`');
    expect(prompt).not.toMatch(/\{[A-Z_]+\}/);
    expect(prompt).not.toContain('sk-secret-value');
    expect(prompt).not.toContain('ghp_secret');
    expect(prompt).not.toContain(ctx.root);
  });

  it('does not expand placeholders that appear inside a task', async () => {
    const root = copyFixture('user-auth');
    const file = path.join(root, FEATURE, 'tasks.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace('Implement password hashing helpers', 'Document {SPEC_PATH} and {CURRENT_TASK}'));
    const source = createSpeckitSource(makeContext(root));
    const task = (await source.snapshot()).ready[0]!;
    const prompt = await source.prompt(task, info(1));
    expect(prompt).toContain('T005 [P] Document {SPEC_PATH} and {CURRENT_TASK} in src/lib/hash.ts');
  });

  it('uses the template option, else .specify/templates/ralph-prompt.md', async () => {
    const root = copyFixture('user-auth');
    mkdirSync(path.join(root, '.specify', 'templates'), { recursive: true });
    writeFileSync(path.join(root, '.specify', 'templates', 'ralph-prompt.md'), 'PROJECT {FEATURE_NAME} {ITERATION_NUMBER}/{MAX_ITERATIONS}\n{CURRENT_TASK}\n');
    writeFileSync(path.join(root, 'mine.md'), 'MINE {TASKS_PATH}\n');
    const project = createSpeckitSource(makeContext(root));
    const task = (await project.snapshot()).ready[0]!;
    expect(await project.prompt(task, info(2, 5))).toMatch(/^PROJECT 001-user-auth 2\/5\nT005 \[P\]/);
    const mine = await createSpeckitSource(makeContext(root, { extra: { template: 'mine.md' } })).prompt(task, info(1));
    expect(mine).toMatch(/^MINE specs\/001-user-auth\/tasks.md\n\n## Current task\n\nT005 \[P\] Implement password hashing helpers/);
  });

  it('gives the agent SPECIFY_FEATURE_DIRECTORY', () => {
    const root = copyFixture('user-auth');
    expect(createSpeckitSource(makeContext(root)).agentEnv?.()).toEqual({ SPECIFY_FEATURE_DIRECTORY: path.join(root, FEATURE), SPECIFY_FEATURE: '001-user-auth' });
  });

  it('resolves the feature from .specify/feature.json (colon fixture) and explains a stuck run', async () => {
    const root = copyFixture('colon');
    const source = createSpeckitSource(makeContext(root));
    expect(await source.check()).toEqual([]);
    expect(source.describe()).toContain('chosen by .specify/feature.json');
    const snapshot = await source.snapshot();
    expect(snapshot.ready.map((task) => task.id)).toEqual(['T003', 'T005']);
    expect(source.explainStuck(snapshot)).toContain('T004 waits on T003 (open)');
  });

  it('reads the CRLF fixture and leaves its bytes alone', async () => {
    const root = copyFixture('crlf');
    const file = path.join(root, 'specs', '002-csv-export', 'tasks.md');
    const bytes = readFileSync(file);
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    expect(await source.check()).toEqual([]);
    await source.recover();
    const { task } = await iterate(source, ctx, 1, () => ({}));
    expect(task.id).toBe('T002');
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });
});

describe('reopen()', () => {
  it('opens the rejected task and the copies ticked with it; other lines keep their boxes', async () => {
    const root = copyFixture('user-auth');
    const file = path.join(root, FEATURE, 'tasks.md');
    const original = read(root, FEATURE, 'tasks.md');
    const line = original.split('\n').find((item) => item.startsWith('- [ ] T005 '))!;
    const other = original.split('\n').find((item) => item.startsWith('- [ ] T006 '))!;
    const tick = (text: string): string => text.replace('- [ ] ', '- [X] ');
    writeFileSync(file, `${original.replace(line, tick(line))}\n## Summary\n\n${tick(line)}\n${tick(other)}\n`);
    const source = createSpeckitSource(makeContext(root));
    await source.reopen?.({ id: 'T005', title: 'x', status: 'done' }, 'no test', info(3));
    expect(read(root, FEATURE, 'tasks.md')).toBe(`${original}\n## Summary\n\n${line}\n${tick(other)}\n`);
    expect(tracking(root).tasks.find((task) => task.id === 'T005')).toMatchObject({ status: 'open', review: { iteration: 3, reasons: 'no test' } });
  });
});

describe('agentDefaults()', () => {
  it('takes the integration from .specify/init-options.json', () => {
    expect(createSpeckitSource(makeContext(copyFixture('user-auth'))).agentDefaults?.()).toEqual({ agent: 'claude' });
  });

  it('gives copilot the speckit.implement profile (older "ai" key)', () => {
    const ctx = makeContext(copyFixture('colon'));
    expect(createSpeckitSource(ctx).agentDefaults?.()).toEqual({ agent: 'copilot', profile: 'speckit.implement' });
    expect(ctx.warnings).toEqual([]);
  });

  it('warns when copilot has no speckit.implement agent file', () => {
    const root = copyFixture('colon');
    rmSync(path.join(root, '.github'), { recursive: true });
    const ctx = makeContext(root);
    expect(createSpeckitSource(ctx).agentDefaults?.()).toEqual({ agent: 'copilot', profile: 'speckit.implement' });
    expect(ctx.warnings[0]).toMatch(/^\.github\/agents\/speckit.implement.agent.md not found/);
  });

  it('falls back to the agent folders, preferring one with Spec Kit commands', () => {
    const root = copyFixture('crlf');
    expect(createSpeckitSource(makeContext(root)).agentDefaults?.()).toEqual({});
    mkdirSync(path.join(root, '.claude'));
    expect(createSpeckitSource(makeContext(root)).agentDefaults?.()).toEqual({ agent: 'claude' });
    mkdirSync(path.join(root, '.gemini', 'commands'), { recursive: true });
    writeFileSync(path.join(root, '.gemini', 'commands', 'speckit.implement.toml'), '');
    expect(createSpeckitSource(makeContext(root)).agentDefaults?.()).toEqual({ agent: 'gemini' });
  });
});

describe('settle(): progress.txt and ralph-tasks.json', () => {
  it('writes a header, a session header and exactly one entry per iteration', async () => {
    const root = copyFixture('user-auth');
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    expect(await source.recover()).toEqual([]);
    expect(await source.lastIteration?.()).toBe(0);

    await iterate(source, ctx, 1, (id) => {
      checkOff(root, id);
      return {
        kind: 'pass',
        reason: `completed ${id}`,
        tasksDone: [id],
        filesChanged: ['src/lib/hash.ts', 'specs/001-user-auth/tasks.md'],
        agentText: 'Implemented T005.\n\n**Learnings:**\n- bcrypt rounds live in src/config.ts\n\nDone.',
        commit: 'abc1234',
      };
    });
    // The agent records a pattern at the top; ralph must keep it.
    const progressFile = path.join(root, FEATURE, 'progress.txt');
    writeFileSync(progressFile, read(root, FEATURE, 'progress.txt').replace('## Codebase Patterns\n', '## Codebase Patterns\n- Use zod schemas for every request body\n'));
    await iterate(source, ctx, 2, () => ({ kind: 'fail', reason: 'agent timed out after 60m', claimedComplete: true }));

    const progress = read(root, FEATURE, 'progress.txt');
    expect(progress.replace(/2026-01-18 \d\d:\d\d:\d\d/g, '<time>')).toBe(
      [
        '# Ralph Progress Log',
        'Feature: 001-user-auth',
        'Tasks: specs/001-user-auth/tasks.md',
        'Started: <time>',
        '',
        '## Codebase Patterns',
        '- Use zod schemas for every request body',
        '<!-- Reusable patterns for this codebase, most useful first. Agents read this section before anything else. -->',
        '',
        '---',
        '',
        '## Session <time> (run run-1)',
        'Starting at iteration 1.',
        '',
        '---',
        '',
        '## Iteration 1 - <time>',
        '- Task: T005 Implement password hashing helpers in src/lib/hash.ts',
        '- Status: ✅ Completed',
        '- Tasks completed: T005',
        '- Files changed:',
        '  - src/lib/hash.ts',
        '  - specs/001-user-auth/tasks.md',
        '- Commit: abc1234',
        '- Duration: 1m 05s',
        '- Learnings:',
        '  - bcrypt rounds live in src/config.ts',
        '',
        '---',
        '',
        '## Iteration 2 - <time>',
        '- Task: T006 Configure error handling and logging infrastructure in src/lib/errors.ts',
        '- Status: ❌ Failed',
        '- Reason: agent timed out after 60m (1 of 3 failed iterations in a row before the task is skipped)',
        '- Tasks completed: none',
        '- Files changed: none',
        '- Duration: 1m 05s',
        '- Note: the agent claimed completion, but 12 tasks remain open in tasks.md: premature promise, not accepted',
        '- Learnings: none reported',
        '',
        '---',
        '',
      ].join('\n'),
    );
    const lines = progress.split('\n');
    expect(lines.filter((line) => line.startsWith('## Iteration '))).toHaveLength(2);
    expect(lines.filter((line) => line.startsWith('## Session '))).toHaveLength(1);
    expect(progress).toContain('## Codebase Patterns\n- Use zod schemas for every request body\n');

    const data = tracking(root);
    expect(data.lastIteration).toBe(2);
    expect(data.current).toBeUndefined();
    expect(data.summary).toEqual({ total: 17, done: 5, open: 12, skipped: 0 });
    expect(data.tasks.find((task) => task.id === 'T005')).toMatchObject({ status: 'done', attempts: 1, failures: 0 });
    expect(data.tasks.find((task) => task.id === 'T006')).toMatchObject({ status: 'open', attempts: 1, failures: 1, consecutiveFailures: 1, lastOutcome: 'fail' });

    // A second run appends under a new session header and numbers on.
    const again = createSpeckitSource(makeContext(root));
    expect(await again.lastIteration?.()).toBe(2);
    await again.recover();
    await iterate(again, ctx, 3, () => ({}));
    const second = read(root, FEATURE, 'progress.txt');
    expect(second.startsWith(progress)).toBe(true);
    expect(second.slice(progress.length)).toMatch(/^\n## Session .* \(run run-1\)\nStarting at iteration 3\.\n\n---\n\n## Iteration 3 - /);
  });

  it('abandon(): a clean ending records the cut-short iteration and clears it, so the next recover() is silent and numbering goes on', async () => {
    const root = copyFixture('user-auth');
    const source = createSpeckitSource(makeContext(root));
    const task = (await source.snapshot()).ready[0]!;
    await source.claim?.(task, info(4));
    expect(await source.abandon!(task, info(3), 'interrupted by SIGTERM')).toBeUndefined();
    expect(await source.abandon!(task, info(4), 'interrupted by SIGTERM')).toBe('iteration 4 on T005 did not finish (interrupted by SIGTERM); tasks.md decides what is done');
    expect(tracking(root).current).toBeUndefined();
    expect(tracking(root).lastIteration).toBe(4);
    expect(read(root, FEATURE, 'progress.txt')).toMatch(/## Iteration 4 - [^\n]*\n- Task: T005[^\n]*\n- Status: ⚠️ Interrupted\n- Reason: the run stopped before this iteration finished \(started [^;]+; interrupted by SIGTERM\)/);
    expect(await source.abandon!(task, info(4), 'again')).toBeUndefined();
    const next = createSpeckitSource(makeContext(root));
    expect(await next.recover()).toEqual([]);
    expect(await next.lastIteration?.()).toBe(4);
  });

  it('abandon() of one worker leaves the other running iteration in ralph-tasks.json', async () => {
    const root = copyFixture('user-auth');
    const source = createSpeckitSource(makeContext(root));
    const [first, second] = (await source.snapshot()).ready;
    await source.claim?.(first!, { ...info(1), worker: 1 });
    await source.claim?.(second ?? first!, { ...info(2), worker: 2 });
    expect(await source.abandon!(first!, { ...info(1), worker: 1 }, 'interrupted by SIGINT')).toMatch(/^iteration 1 on /);
    expect(tracking(root).running?.map((item) => item.iteration)).toEqual([2]);
  });

  it('ralph-tasks.json changed under the source (another host\'s landing, --remote): read again, that host\'s record of its task kept', async () => {
    const root = copyFixture('user-auth');
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    const pass = (id: string) => ({ kind: 'pass' as const, reason: `completed ${id}`, tasksDone: [id], filesChanged: [], agentText: 'Done.' });
    const { task: first } = await iterate(source, ctx, 1, (id) => (checkOff(root, id), pass(id)));
    // The main worktree moves to the remote's head: another host landed the next task, with its record.
    const next = (await source.snapshot()).ready[0]!;
    checkOff(root, next.id);
    const theirs = tracking(root);
    const file = path.join(root, FEATURE, 'ralph-tasks.json');
    writeFileSync(file, `${JSON.stringify({ ...theirs, lastIteration: 2, tasks: theirs.tasks.map((item) => (item.id === next.id ? { ...item, status: 'done', attempts: 1, lastIteration: 2, lastOutcome: 'pass' } : item)) }, null, 2)}\n`);
    await iterate(source, ctx, 3, (id) => (checkOff(root, id), pass(id)));
    const records = tracking(root).tasks;
    expect(records.find((item) => item.id === next.id)).toMatchObject({ status: 'done', attempts: 1, lastIteration: 2, lastOutcome: 'pass' });
    expect(records.find((item) => item.id === first.id)).toMatchObject({ status: 'done', attempts: 1, lastOutcome: 'pass' });
  });

  it('recorded(): the progress entry of that iteration and that task only (another host may use the number, --remote)', async () => {
    const root = copyFixture('user-auth');
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    const { task } = await iterate(source, ctx, 1, (id) => (checkOff(root, id), { kind: 'pass' as const, reason: 'done', tasksDone: [id], filesChanged: [], agentText: 'Done.' }));
    const other = (await source.snapshot()).ready[0]!;
    expect(await source.recorded!(1, task.id)).toBe(true);
    expect(await source.recorded!(1, other.id)).toBe(false);
    expect(await source.recorded!(2, task.id)).toBe(false);
    // A task id that begins another's (T005 in T0050) is not it.
    expect(await source.recorded!(1, task.id.slice(0, -1))).toBe(false);
  });

  it('recorded(): an entry its landing renumbered past another host\'s counts for the iteration it began as', async () => {
    const root = copyFixture('user-auth');
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    const { task } = await iterate(source, ctx, 3, (id) => (checkOff(root, id), { kind: 'pass' as const, reason: 'done', tasksDone: [id], filesChanged: [], agentText: 'Done.' }));
    const other = (await source.snapshot()).ready[0]!;
    expect(await source.recorded!(2, task.id)).toBe(true);
    expect(await source.recorded!(2, other.id)).toBe(false);
    expect(await source.recorded!(4, task.id)).toBe(false);
  });

  it('claim() records the running iteration; recover() of the next run notes it was interrupted', async () => {
    const root = copyFixture('user-auth');
    const source = createSpeckitSource(makeContext(root));
    const task = (await source.snapshot()).ready[0]!;
    await source.claim?.(task, info(1));
    expect(tracking(root).current).toMatchObject({ taskId: 'T005', iteration: 1 });
    const next = createSpeckitSource(makeContext(root));
    expect(await next.recover()).toEqual(['iteration 1 on T005 did not finish (interrupted run); tasks.md decides what is done']);
    expect(tracking(root).current).toBeUndefined();
  });
});

describe('skip after 3 failed iterations of the same task', () => {
  it('sets the task aside with a warning, lists it as skipped and tells later prompts to leave it', async () => {
    const root = copyFixture('user-auth');
    const tasksBefore = read(root, FEATURE, 'tasks.md');
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    await source.recover();
    const kinds = ['no_change', 'fail', 'no_change'] as const;
    for (const [index, kind] of kinds.entries()) {
      const { task } = await iterate(source, ctx, index + 1, () => ({ kind, reason: kind === 'fail' ? 'agent exited with code 1' : 'the task source shows no finished task' }));
      expect(task.id).toBe('T005');
    }
    expect(ctx.warnings).toEqual(['T005 failed 3 iterations in a row: skipped; fix it by hand and check it off, or run ralph again to retry it']);

    const snapshot = await source.snapshot();
    expect(snapshot.skipped?.map((task) => task.id)).toEqual(['T005']);
    expect(snapshot.skipped?.[0]?.status).toBe('skipped');
    expect(snapshot.remaining.map((task) => task.id)).not.toContain('T005');
    expect(snapshot.ready[0]?.id).toBe('T006');

    const prompt = await source.prompt(snapshot.ready[0]!, info(4));
    expect(prompt).toContain('Skipped tasks: ralph set these aside after repeated failed iterations. Leave them alone');
    expect(prompt).toContain('- T005 Implement password hashing helpers in src/lib/hash.ts (failed 3 iterations)');
    expect(prompt).toContain('- Open tasks of this phase, in order: T006');

    const progress = read(root, FEATURE, 'progress.txt');
    expect(progress.match(/^- Status: .*$/gm)).toEqual(['- Status: ❌ Failed', '- Status: ❌ Failed', '- Status: ⏭️ Skipped']);
    expect(progress).toContain('- Reason: the task source shows no finished task; T005 failed 3 iterations in a row, so it is skipped and later iterations leave it alone');
    expect(tracking(root).tasks.find((task) => task.id === 'T005')).toMatchObject({ status: 'skipped', skipped: true, failures: 3, consecutiveFailures: 3, attempts: 3 });
    expect(tracking(root).summary.skipped).toBe(1);
    expect(read(root, FEATURE, 'tasks.md')).toBe(tasksBefore);

    // A later run gives it another chance.
    const next = createSpeckitSource(makeContext(root));
    expect(await next.recover()).toEqual(['tasks skipped by an earlier run get another chance: T005']);
    expect((await next.snapshot()).ready[0]?.id).toBe('T005');
  });

  it('a task whose dependency was skipped leaves the run stuck with an explanation', async () => {
    const root = copyFixture('user-auth');
    writeFileSync(path.join(root, FEATURE, 'tasks.md'), '## Phase 1: Setup\n- [ ] T001 a\n- [ ] T002 b (depends on T001)\n');
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    for (const iteration of [1, 2, 3]) await iterate(source, ctx, iteration, () => ({}));
    const snapshot = await source.snapshot();
    expect(snapshot.ready).toEqual([]);
    expect(snapshot.remaining.map((task) => task.id)).toEqual(['T002']);
    expect(source.explainStuck(snapshot)).toContain('T002 waits on T001 (skipped after repeated failures)');
  });

  it('skipped tasks do not block completion', async () => {
    const root = copyFixture('wide-ids');
    const ctx = makeContext(root);
    const source = createSpeckitSource(ctx);
    expect(await source.check()).toEqual([]);
    expect(source.describe()).toContain('20260118-101500-bulk-import');
    const feature = path.join(root, 'specs', '20260118-101500-bulk-import');
    for (const iteration of [1, 2, 3]) await iterate(source, ctx, iteration, () => ({}));
    const file = path.join(feature, 'tasks.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace('- [ ] T1001', '- [x] T1001').replace('- [ ] T10000', '- [x] T10000'));
    const snapshot = await source.snapshot();
    expect(snapshot.remaining).toEqual([]);
    expect(snapshot.skipped?.map((task) => task.id)).toEqual(['T1000']);
    expect(existsSync(path.join(feature, 'progress.txt'))).toBe(true);
  });
});
