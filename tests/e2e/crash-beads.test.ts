// Crash points for beads (issue 33): ralph killed (SIGKILL, the test hook RALPH_TEST_CRASH_AT) at every
// named durable step of an iteration, one worker and --parallel 2, then started again with the same command.
// The agent (tests/fakes/crash-agent.mjs) does what /sp:next does: claims its bead, writes its work, closes
// it in bd. The restart must finish the epic with each bead closed once, by the commit holding its work,
// no bead left claimed, the tree clean, exit 0, nobody asked.
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from './helpers.ts';
import { beadsCrashProject, crashSandbox, expectBeadsSettled, startNode } from './crash-helpers.ts';
import type { CrashPoint } from '../../lib/recovery/crash-points.ts';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.cleanup());

/** The points one worker passes through (as for PRD and Spec Kit, tests/e2e/crash-points.test.ts). */
const ONE_WORKER: Array<[CrashPoint, number | string]> = [
  ['task_claimed', 1],
  ['agent_started', 1],
  ['agent_ended', 1],
  ['gates_run', 1],
  ['state_written', 1],
  ['work_committed', 1],
  // Killed once the step is done but before the journal learns it: the journal a step behind.
  ['state_written', '1:early'],
  ['work_committed', '1:early'],
  ['agent_started', 2],
  ['state_written', 2],
  ['status_written', 1],
];

/** Two workers: each agent works in a worktree, ralph commits there, merges, then records the bead. */
const PARALLEL: Array<[CrashPoint, number | string]> = [
  ['task_claimed', 2],
  ['agent_started', 1],
  ['agent_ended', 1],
  ['gates_run', 1],
  ['work_committed', 1],
  ['merged', 1],
  ['merged', '1:early'],
  ['state_written', 1],
  ['state_written', '1:early'],
  ['merged', 2],
  ['status_written', 1],
];

describe('beads (bd 1.2), one worker: a kill at each durable step, then the same command again', () => {
  it.each(ONE_WORKER)('killed at %s (#%s)', async (point, nth) => {
    sandbox = crashSandbox();
    const { ids, args } = beadsCrashProject(sandbox, '1.2', false);
    const crashed = await startNode(sandbox, args, { RALPH_TEST_CRASH_AT: `${point}:${nth}` }).done;
    expect(crashed.signal, `${crashed.stderr}`).toBe('SIGKILL');
    const rerun = await startNode(sandbox, args).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).not.toMatch(/stay yours|could not/);
    expectBeadsSettled(sandbox, ids);
  });
});

describe('beads (bd 1.2), --parallel 2: a kill at each durable step, then the same command again', () => {
  it.each(PARALLEL)('killed at %s (#%s)', async (point, nth) => {
    sandbox = crashSandbox();
    const { ids, args } = beadsCrashProject(sandbox, '1.2', true);
    const command = [...args, '--parallel', '2'];
    const crashed = await startNode(sandbox, command, { RALPH_TEST_CRASH_AT: `${point}:${nth}` }).done;
    expect(crashed.signal, `${crashed.stderr}`).toBe('SIGKILL');
    const rerun = await startNode(sandbox, command).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).not.toMatch(/could not/);
    expectBeadsSettled(sandbox, ids);
  });
});
