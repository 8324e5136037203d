// Faults around the run itself: ralph killed with SIGKILL mid-iteration, two ralphs started at once, and a
// stale lock whose PID now belongs to another process.
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { unrelatedProcess } from '../support/processes.ts';
import {
  agentCalls,
  agentPids,
  answer,
  expectLockGone,
  expectNoSurvivors,
  FEATURE,
  lockPath,
  makeSandbox,
  pidAlive,
  prdHistory,
  prdProject,
  progressIterations,
  progressTxt,
  QUICK,
  ralphPid,
  readPrdJson,
  readTasks,
  report,
  runRalph,
  scenario,
  sessionDirs,
  specKitProject,
  startRalph,
  tick,
  waitFor,
  type RalphResult,
  type Sandbox,
} from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const tracking = (box: Sandbox) => JSON.parse(readFileSync(path.join(box.repo, FEATURE, 'ralph-tasks.json'), 'utf8')) as { current?: { taskId: string; iteration: number } };

/** SIGKILLs the real ralph (named in the lock) and tsx's wrapper, as `kill -9` would. */
async function killNine(box: Sandbox, run: ReturnType<typeof startRalph>): Promise<number> {
  const pid = ralphPid(box);
  process.kill(pid, 'SIGKILL');
  run.child.kill('SIGKILL');
  await run.done;
  await waitFor(() => !pidAlive(pid), 5000, 'ralph to die');
  return pid;
}

describe('kill -9 of ralph mid-iteration, then a rerun', () => {
  it('Spec Kit: the stale lock is reclaimed with a warning, the interrupted task resumes, iteration numbers stay unique', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [
      { edit: [tick('T002')], lines: [answer('Did T002.')] },
      { lines: [answer('half way through T003')], hang: true, marker: 'AGENT-HANGS' },
      { edit: [tick('T003')], lines: [answer('Did T003.')] },
      { edit: [tick('T004'), tick('T005')], lines: [answer('Did T004 and T005.')] },
    ]);
    const first = startRalph(sandbox, ['--json', ...QUICK]);
    await waitFor(() => agentCalls(sandbox).length >= 2 && existsSync(lockPath(sandbox)), 20_000, 'the second iteration to start');
    await waitFor(() => tracking(sandbox).current?.iteration === 2, 5000, 'the claim of iteration 2');
    const hungLog = () => path.join(sessionDirs(sandbox)[0]!, 'iteration-2.jsonl');
    await waitFor(() => existsSync(hungLog()) && readFileSync(hungLog(), 'utf8').includes('half way through T003'), 5000, 'the hung agent output in the log');
    const killed = await killNine(sandbox, first);
    expect(existsSync(lockPath(sandbox))).toBe(true);
    expect(tracking(sandbox).current).toMatchObject({ taskId: 'T003', iteration: 2 });
    // The killed run could not stop its agent: it is still running, and the rerun must end it.
    const orphan = agentPids(sandbox).at(-1)!;
    expect(pidAlive(orphan)).toBe(true);

    const rerun = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(new RegExp(`warning: reclaiming a stale lock .*PID ${killed}.*: PID ${killed} is gone`));
    expect(rerun.stderr).toMatch(new RegExp(`warning: stopped the agent \\(process group ${orphan}\\) that a killed earlier run left running`));
    expect(pidAlive(orphan)).toBe(false);
    expect(rerun.stderr).toMatch(/iteration 2 on T003 did not finish \(interrupted run\)/);
    const summary = JSON.parse(rerun.stdout);
    expect(summary.records.map((record: { iteration: number; taskId: string; outcome: string }) => [record.iteration, record.taskId, record.outcome])).toEqual([
      [3, 'T003', 'pass'],
      [4, 'T004', 'pass'],
    ]);
    expect(readTasks(sandbox)).not.toMatch(/- \[ \]/);
    const numbers = progressIterations(progressTxt(sandbox));
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(numbers).toEqual([1, 2, 3, 4]);
    expect(progressTxt(sandbox)).toMatch(/## Iteration 2 - [^\n]*\n- Task: T003[^\n]*\n- Status: ⚠️ Interrupted/);
    // Each session kept its own logs; the killed one has the hung attempt's output.
    const [killedSession, rerunSession] = sessionDirs(sandbox);
    expect(readFileSync(path.join(killedSession!, 'iteration-2.jsonl'), 'utf8')).toContain('half way through T003');
    expect(existsSync(path.join(rerunSession!, 'iteration-3.jsonl'))).toBe(true);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });

  it('PRD: the interrupted story goes back to pending, history numbers continue without a gap or a repeat', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [
      { write: { 'app.txt': 'one\n' }, lines: [report('completed')] },
      { lines: [answer('working')], hang: true },
      { write: { 'app.txt': 'one\ntwo\n' }, lines: [report('completed')] },
    ]);
    const first = startRalph(sandbox, QUICK);
    await waitFor(() => agentCalls(sandbox).length >= 2, 20_000, 'the second iteration to start');
    await waitFor(() => readFileSync(path.join(sandbox.repo, 'prd.json'), 'utf8').includes('in_iteration'), 5000, 'the claim of US-002');
    // Killed before the agent wrote its output, the agent would die of the broken pipe and leave no orphan.
    const hungLog = () => path.join(sessionDirs(sandbox)[0]!, 'iteration-2.jsonl');
    await waitFor(() => existsSync(hungLog()) && readFileSync(hungLog(), 'utf8').includes('working'), 5000, 'the hung agent output in the log');
    await killNine(sandbox, first);
    const rerun = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/warning: reclaiming a stale lock/);
    expect(rerun.stderr).toMatch(/warning: stopped the agent \(process group \d+\) that a killed earlier run left running/);
    expect(rerun.stderr).toMatch(/task US-002 was left in_iteration by iteration 2/);
    expect(prdHistory(sandbox).map((record) => [record.iterationNumber, record.taskId, record.completionStatus])).toEqual([
      [1, 'US-001', 'completed'],
      [2, 'US-002', 'interrupted'],
      [3, 'US-002', 'completed'],
    ]);
    expect(readPrdJson(sandbox).userStories.map((story) => story.passes)).toEqual([true, true]);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('two ralphs started at once', () => {
  it('exactly one runs; the other exits 1 at once, naming the holder', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    // The winner's agent waits until the loser has exited, so the two runs overlap whatever the machine's speed.
    const release = path.join(sandbox.root, 'release');
    const wait = `const fs = require('fs'); const timer = setInterval(() => fs.existsSync(${JSON.stringify(release)}) && clearInterval(timer), 20);`;
    scenario(sandbox, [{ run: [['node', '-e', wait]], edit: [tick('T002'), tick('T003'), tick('T004'), tick('T005')], lines: [answer('All done.')] }]);
    const runs = [startRalph(sandbox, ['--json', ...QUICK]), startRalph(sandbox, ['--json', ...QUICK])];
    await Promise.race([...runs.map((run) => run.done), new Promise((resolve) => setTimeout(resolve, 20_000))]);
    writeFileSync(release, '');
    const [a, b] = (await Promise.all(runs.map((run) => run.done))) as [RalphResult, RalphResult];
    const codes = [a.code, b.code].sort();
    expect(codes, `${a.stderr}\n---\n${b.stderr}`).toEqual([0, 1]);
    const winner = a.code === 0 ? a : b;
    const loser = a.code === 0 ? b : a;
    const holder = JSON.parse(winner.stdout) as { status: string; iterations: number };
    expect(holder).toMatchObject({ status: 'completed', iterations: 1 });
    const message = loser.stderr.split('\n').find((line) => line.startsWith('ralph: '));
    expect(message).toMatch(new RegExp(`^ralph: another ralph holds ${lockPath(sandbox).replace(/[.]/g, '\\.')} \\(PID \\d+, started \\d{4}-\\d\\d-\\d\\dT[^,]+, branch 001-ralph-automation\\)$`));
    expect(loser.stderr).toMatch(/hint: wait for it to finish, or stop it \(kill \d+\)/);
    // The loser ran no agent and wrote nothing: one agent call, one session.
    expect(agentCalls(sandbox)).toHaveLength(1);
    expect(sessionDirs(sandbox)).toHaveLength(1);
    expect(progressIterations(progressTxt(sandbox))).toEqual([1]);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});


describe('a stale lock whose PID was reused', () => {
  it('status and --dry-run say why it is stale; a run reclaims it and leaves the process that has the PID alone', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [{ edit: [tick('T002'), tick('T003'), tick('T004'), tick('T005')], lines: [answer('All done.')] }]);
    // A ralph killed on New Year's Day left its lock; its PID now belongs to a process started since.
    const pid = unrelatedProcess(['sleep', '120']);
    const taken = '2026-01-01T00:00:00.000Z';
    writeFileSync(lockPath(sandbox), `${pid}\n${taken}\n001-ralph-automation\n`);
    mkdirSync(`${lockPath(sandbox)}.d`);
    utimesSync(`${lockPath(sandbox)}.d`, new Date(taken), new Date(taken));
    const why = `PID ${pid} now belongs to a process started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, after the lock was taken`;

    const status = await runRalph(sandbox, ['status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^ralph is not running: \\.ralph\\.lock names PID ${pid}, started ${taken}, branch 001-ralph-automation, but ${why}; the next run reclaims the lock$`, 'm'));
    const plan = await runRalph(sandbox, ['--dry-run']);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(new RegExp(`^lock: stale \\(${why}\\); a real run would reclaim it$`, 'm'));

    const run = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`warning: reclaiming a stale lock ${lockPath(sandbox).replace(/[.]/g, '\\.')} \\(PID ${pid}, started ${taken}, branch 001-ralph-automation\\): ${why}\n`));
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', iterations: 1 });
    expect(pidAlive(pid)).toBe(true);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});
