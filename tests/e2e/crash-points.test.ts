// Kill ralph (SIGKILL, from inside: the test hook RALPH_TEST_CRASH_AT) at every named durable step of an
// iteration (lib/recovery/crash-points.ts), then start it again with the same command: the restart must
// finish the work with each task done exactly once, in the commit that holds its work, the tree clean,
// exit 0, and nobody asked for anything.
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from './helpers.ts';
import { crashProject, crashSandbox, expectSettled, startNode, type Kind } from './crash-helpers.ts';
import type { CrashPoint } from '../../lib/recovery/crash-points.ts';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.cleanup());

// Two tasks each: a kill in the first leaves one to go on with, and the second task's points (#2) are the
// last iteration's. A third task only costs the suite another iteration per start (88 starts in all).

/** The points one worker in the repository passes through (merged, claimed, pushed, released: several workers or hosts). */
export const ONE_WORKER: Array<[CrashPoint, number | string]> = [
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

describe.each<Kind>(['prd', 'speckit'])('%s, one worker: a kill at each durable step, then the same command again', (kind) => {
  it.each(ONE_WORKER)('killed at %s (#%s)', async (point, nth) => {
    sandbox = crashSandbox();
    const { ids, args } = crashProject(sandbox, kind, 2);
    const crashed = await startNode(sandbox, args, { RALPH_TEST_CRASH_AT: `${point}:${nth}` }).done;
    expect(crashed.signal, `${crashed.stderr}`).toBe('SIGKILL');
    const rerun = await startNode(sandbox, args).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).not.toMatch(/stay yours/);
    expectSettled(sandbox, kind, ids);
  });
});

/** Several workers: the agent works in a worktree, ralph commits there, merges, then records the task. */
export const PARALLEL: Array<[CrashPoint, number | string]> = [
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

describe.each<Kind>(['prd', 'speckit'])('%s, --parallel 2: a kill at each durable step, then the same command again', (kind) => {
  it.each(PARALLEL)('killed at %s (#%s)', async (point, nth) => {
    sandbox = crashSandbox();
    const { ids, args } = crashProject(sandbox, kind, 2);
    const command = [...args, '--parallel', '2'];
    const crashed = await startNode(sandbox, command, { RALPH_TEST_CRASH_AT: `${point}:${nth}` }).done;
    expect(crashed.signal, `${crashed.stderr}`).toBe('SIGKILL');
    const rerun = await startNode(sandbox, command).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expectSettled(sandbox, kind, ids);
  });
});
