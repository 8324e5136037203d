// Faults of the agent process itself: crashes, hangs, a tree that ignores SIGTERM, usage limits.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentCalls,
  agentPids,
  answer,
  closeStep,
  expectLockGone,
  expectNoSurvivors,
  iterationLog,
  makeSandbox,
  prdHistory,
  prdProject,
  progressIterations,
  progressTxt,
  QUICK,
  rawCounts,
  readBeads,
  readPrdJson,
  readTasks,
  report,
  runRalph,
  scenario,
  seedBeads,
  specKitProject,
  standardEpic,
  tick,
  useRawAgent,
  type Sandbox,
} from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const INIT = readFileSync(path.join(__dirname, '..', 'fixtures', 'recordings', 'claude-ok.jsonl'), 'utf8').split('\n')[0]!;
// A hung agent is given 3 s of silence: the agents that must finish count their start-up against the same
// timeout, and a fake agent (node) took up to 1.7 s to start on the loaded 2-core machine.
const IDLE = '3s';
const partial = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'Working on it…' }] } });

describe('agent crash', () => {
  it('exit 1 and a SIGSEGV with no result are retried in the same iteration, then it succeeds', async () => {
    sandbox = makeSandbox();
    useRawAgent(sandbox);
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [
      { lines: [INIT, partial], exit: 1 },
      { lines: [INIT, partial], selfSignal: 'SIGSEGV' },
      closeStep('ws-9w6.2'),
    ]);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', iterations: 1, tasksCompleted: 1 });
    expect(summary.records[0]).toMatchObject({ iteration: 1, attempts: 3, outcome: 'pass' });
    expect(result.stderr).toMatch(/attempt 1 failed \(transient\): agent exited with code 1/);
    expect(result.stderr).toMatch(/attempt 2 failed \(transient\): agent killed by SIGSEGV/);
    expect(readBeads(sandbox).find((issue) => issue.id === 'ws-9w6.2')?.status).toBe('closed');
    // All three attempts are in the iteration's log, byte for byte.
    expect(iterationLog(sandbox, 1).length).toBe(rawCounts(sandbox).reduce((sum, count) => sum + count, 0));
    expect(agentCalls(sandbox)).toHaveLength(3);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('agent hang', () => {
  it('the idle timeout ends the iteration as a failure and the loop carries on', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [
      { lines: [INIT, partial], hang: true, marker: 'HANGING' },
      { edit: [tick('T002'), tick('T003')], lines: [answer('Did T002 and T003.')] },
      { edit: [tick('T004'), tick('T005')], lines: [answer('Did T004 and T005.')] },
    ]);
    const result = await runRalph(sandbox, ['--idle-timeout', IDLE, '--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { outcome: string; attempts: number }) => [record.outcome, record.attempts])).toEqual([
      ['fail', 1],
      ['pass', 1],
      ['pass', 1],
    ]);
    expect(summary.records[0].reason).toMatch(/printed nothing for the idle timeout/);
    expect(result.stderr).toMatch(/attempt 1 failed \(timeout\)/);
    expect(readTasks(sandbox)).not.toMatch(/- \[ \]/);
    const progress = progressTxt(sandbox);
    expect(progressIterations(progress)).toEqual([1, 2, 3]);
    expect(progress).toMatch(/## Iteration 1 - [^\n]*\n- Task: T002[^\n]*\n- Status: ❌ Failed\n- Reason: agent printed nothing for the idle timeout/);
    // What the hung agent printed before it went quiet is in its log.
    expect(iterationLog(sandbox, 1).toString()).toContain('Working on it');
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('agent ignoring SIGTERM, with a grandchild', () => {
  it('both are killed (SIGKILL after the grace period), the story is retried and completed', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, { userStories: [{ id: 'US-001', title: 'Only story', description: 'd', acceptanceCriteria: ['works'], priority: 1, passes: false }] });
    scenario(sandbox, [
      { lines: [INIT], hang: true, ignoreTerm: true, grandchild: true },
      { write: { 'app.txt': 'done\n' }, lines: [report('completed')] },
    ]);
    const result = await runRalph(sandbox, ['--idle-timeout', IDLE, '--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { outcome: string }) => record.outcome)).toEqual(['fail', 'pass']);
    // The agent, its grandchild (recorded by the fake) and the second agent: all gone.
    expect(agentPids(sandbox).length).toBeGreaterThanOrEqual(3);
    await expectNoSurvivors(sandbox);
    expect(readPrdJson(sandbox).userStories[0]).toMatchObject({ passes: true });
    expect(prdHistory(sandbox).map((record) => [record.iterationNumber, record.completionStatus])).toEqual([
      [1, 'failed'],
      [2, 'completed'],
    ]);
    expect(String(prdHistory(sandbox)[0]!.reason)).toMatch(/idle timeout/);
    expectLockGone(sandbox);
  });
});

describe('usage limit with a reset time', () => {
  it('sleeps until the reset, then goes on, spending neither a retry nor an iteration', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    const rejected = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 0, rateLimitType: 'five_hour' } }).replace('"resetsAt":0', '"resetsAt":__RESET_EPOCH__');
    const limited = answer("You've hit your limit · resets soon").replace('"is_error":false', '"is_error":true');
    scenario(sandbox, [
      { lines: [INIT, rejected, limited], resetInSeconds: 1, exit: 1 },
      { edit: [tick('T002'), tick('T003'), tick('T004'), tick('T005')], lines: [answer('All done.\n<promise>COMPLETE</promise>')] },
    ]);
    const started = Date.now();
    // --retries 1: a spent retry would end the run with exit 1.
    const result = await runRalph(sandbox, ['--retries', '1', '--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeGreaterThan(1000);
    expect(result.stderr).toMatch(/usage limit: waiting until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d .*five_hour/);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', iterations: 1 });
    expect(summary.records[0]).toMatchObject({ iteration: 1, attempts: 1, outcome: 'pass', claimedComplete: true });
    expect(agentCalls(sandbox)).toHaveLength(2);
    expect(progressIterations(progressTxt(sandbox))).toEqual([1]);
    // Both runs of the agent went to iteration 1's log.
    expect(iterationLog(sandbox, 1).toString()).toContain('rate_limit_event');
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

