// Faults in the task source's own data: a corrupt tasks.md, prd.json or bd output, and a read-only tasks.md.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentCalls,
  answer,
  bdCalls,
  closeStep,
  commitAll,
  expectLockGone,
  expectNoSurvivors,
  FEATURE,
  iterationLog,
  makeSandbox,
  prdProject,
  progressTxt,
  QUICK,
  readBeads,
  readTasks,
  report,
  runRalph,
  scenario,
  seedBeads,
  specKitProject,
  standardEpic,
  TASKS,
  TASKS_PATH,
  type Sandbox,
} from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

/** Deterministic bytes that are neither text nor JSON: NULs, invalid UTF-8, stray brackets. */
const BINARY = Buffer.from(Array.from({ length: 4096 }, (_, index) => (index * 131 + 7) % 256));

/** ralph's error lines (`ralph: …`), without the hint lines. */
const errorLines = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('ralph: '));

/** Nothing of a run was written: no lock, no .ralph/ state, no agent call. */
function expectNothingWritten(box: Sandbox): void {
  expectLockGone(box);
  expect(existsSync(path.join(box.repo, '.ralph')), '.ralph/ written').toBe(false);
  expect(agentCalls(box)).toHaveLength(0);
}

describe('corrupt tasks.md', () => {
  it('binary garbage: exit 1 with one line naming tasks.md; nothing written, the file untouched', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    writeFileSync(path.join(sandbox.repo, TASKS_PATH), BINARY);
    const result = await runRalph(sandbox, QUICK);
    expect(result.code).toBe(1);
    const lines = errorLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ralph: ✗ specs\/001-demo\/tasks\.md lists no tasks: it has no checkbox lines at all; .*\/speckit\.tasks/);
    expect(readFileSync(path.join(sandbox.repo, TASKS_PATH)).equals(BINARY)).toBe(true);
    expect(existsSync(path.join(sandbox.repo, FEATURE, 'progress.txt'))).toBe(false);
    expect(existsSync(path.join(sandbox.repo, FEATURE, 'ralph-tasks.json'))).toBe(false);
    expectNothingWritten(sandbox);
  });

  it('a directory where tasks.md should be: exit 1 saying it cannot be read (not "not found")', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    rmSync(path.join(sandbox.repo, TASKS_PATH));
    mkdirSync(path.join(sandbox.repo, TASKS_PATH));
    const result = await runRalph(sandbox, QUICK);
    expect(result.code).toBe(1);
    const lines = errorLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ralph: ✗ specs\/001-demo\/tasks\.md cannot be read: .*directory/i);
    expectNothingWritten(sandbox);
  });

  it('garbled by the agent mid-run: exit 1 naming tasks.md, never "all tasks complete"', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [{ write: { [TASKS_PATH]: '\u0000\u0001 not a task list any more \uFFFD\n' }, lines: [answer('Rewrote tasks.md.')] }]);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(/complete/);
    expect(errorLines(result.stderr)[0]).toMatch(/^ralph: specs\/001-demo\/tasks\.md lists no tasks any more/);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', exitCode: 1 });
    // ralph left the agent's file as it was.
    expect(readTasks(sandbox)).toBe('\u0000\u0001 not a task list any more \uFFFD\n');
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('corrupt prd.json', () => {
  it('binary garbage: exit 1 with one line naming prd.json; nothing written, the file untouched', async () => {
    sandbox = makeSandbox();
    writeFileSync(path.join(sandbox.repo, 'prd.json'), BINARY);
    commitAll(sandbox, 'corrupt prd');
    const result = await runRalph(sandbox, ['--source', 'prd', ...QUICK]);
    expect(result.code).toBe(1);
    const lines = errorLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ralph: ✗ .*prd\.json: not valid JSON/);
    expect(readFileSync(path.join(sandbox.repo, 'prd.json')).equals(BINARY)).toBe(true);
    expect(existsSync(path.join(sandbox.repo, 'progress.txt'))).toBe(false);
    expect(existsSync(path.join(sandbox.repo, '.rulebook-ralph'))).toBe(false);
    expectNothingWritten(sandbox);
  });

  it('cut short by the agent mid-run: exit 1 naming prd.json, which ralph does not rewrite', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [{ write: { 'prd.json': '{ "userStories": [ { "id": "US-001", ' }, lines: [report('completed')] }]);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(1);
    expect(errorLines(result.stderr)[0]).toMatch(/^ralph: .*prd\.json: not valid JSON/);
    expect(readFileSync(path.join(sandbox.repo, 'prd.json'), 'utf8')).toBe('{ "userStories": [ { "id": "US-001", ');
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('corrupt bd JSON', () => {
  it('garbage from `bd list` while checking: exit 1 naming the command before anything is written', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    const result = await runRalph(sandbox, QUICK, { FAKE_BD_GARBAGE: 'list' });
    expect(result.code).toBe(1);
    const lines = errorLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ralph: ✗ bd list .*--json|^ralph: ✗ bd list .*: bd printed invalid JSON/);
    expect(lines[0]).toMatch(/bd printed invalid JSON: \{"id": "broken/);
    expectNothingWritten(sandbox);
  });

  it('garbage from `bd ready`: exit 1 naming the command; no agent run, no bd write, lock gone', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, ['--json', ...QUICK], { FAKE_BD_GARBAGE: 'ready' });
    expect(result.code).toBe(1);
    const lines = errorLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe('ralph: bd ready --parent ws-9w6 --limit 0 --exclude-type epic: bd printed invalid JSON: {"id": "broken');
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', exitCode: 1, iterations: 0 });
    expect(agentCalls(sandbox)).toHaveLength(0);
    expect(bdCalls(sandbox).filter((argv) => ['update', 'close', 'create'].includes(argv[0]!))).toEqual([]);
    expect(readBeads(sandbox).map((issue) => issue.status)).toEqual(['open', 'closed', 'open', 'open']);
    expectLockGone(sandbox);
  });
});

describe('a read-only tasks.md', () => {
  // Tests run as root, and root writes a 0444 file anyway, so the agent's failed edit is scripted: it reports
  // EACCES and ticks nothing. What matters is ralph's side: it never writes tasks.md itself, so a task
  // only counts when the agent managed to tick it, and an iteration without a tick is not a pass.
  it('ralph never writes it; an iteration whose edit failed is not a pass, and the run stops at the limit', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    const file = path.join(sandbox.repo, TASKS_PATH);
    chmodSync(file, 0o444);
    const before = statSync(file);
    scenario(sandbox, [
      { stderr: `Error: EACCES: permission denied, open '${TASKS_PATH}'`, lines: [answer('I could not tick T002: tasks.md is read-only (EACCES).')] },
    ]);
    const result = await runRalph(sandbox, ['--max-iterations', '2', '--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(2);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { outcome: string; taskId: string }) => [record.taskId, record.outcome])).toEqual([
      ['T002', 'no_change'],
      ['T002', 'no_change'],
    ]);
    expect(summary).toMatchObject({ tasksCompleted: 0, tasksRemaining: 4 });
    const after = statSync(file);
    expect(readTasks(sandbox)).toBe(TASKS);
    expect([after.ino, after.mtimeMs, after.mode & 0o777]).toEqual([before.ino, before.mtimeMs, 0o444]);
    expect(progressTxt(sandbox)).toMatch(/- Status: ❌ Failed/);
    expect(iterationLog(sandbox, 1, 'stderr.log').toString()).toContain('EACCES');
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});
