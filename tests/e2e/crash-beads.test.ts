// Crash points for beads (issue 33): ralph killed (SIGKILL, the test hook RALPH_TEST_CRASH_AT) at every
// named durable step of an iteration, one worker and --parallel 2, then started again with the same command.
// The agent (tests/fakes/crash-agent.mjs) does what /sp:next does: claims its bead, writes its work, closes
// it in bd. The restart must finish the epic with each bead closed once, by the commit holding its work,
// no bead left claimed, the tree clean, exit 0, nobody asked.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bdCalls, pidAlive, readBeads, seedBeads, standardEpic, waitFor, type Sandbox } from './helpers.ts';
import { beadsCrashProject, crashAgentTasks, crashSandbox, expectBeadsSettled, expectSessionsEnded, startNode } from './crash-helpers.ts';
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
  // (task_claimed #2 and agent_ended #1: below, with the dry run after the kill)
  ['agent_started', 1],
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

const agentPidsOf = (box: Sandbox): number[] =>
  existsSync(box.env.CRASH_AGENT_LOG!) ? readFileSync(box.env.CRASH_AGENT_LOG!, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { pid: number }).pid) : [];
const quote = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('beads (bd 1.2): --dry-run after a dead run says what it would give back, and does nothing', () => {
  // At task_claimed #2 the second worker's bead is claimed (its agent not started); at agent_ended #1 the first
  // worker's agent has closed its bead, whose work is in no commit yet.
  it.each([
    ['task_claimed', 2, 'in_progress'],
    ['agent_ended', 1, 'closed'],
  ])('--parallel 2, killed at %s (#%s): the dry run names each claim it would give back and each closed bead it would reopen; the restart does it', async (point, nth, surely) => {
    sandbox = crashSandbox();
    const box = sandbox;
    const { ids, args } = beadsCrashProject(box, '1.2', true);
    const command = [...args, '--parallel', '2'];
    const crashed = await startNode(box, command, { RALPH_TEST_CRASH_AT: `${point}:${nth}` }).done;
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    // The first worker's agent, orphaned, may still be finishing its bead: every agent the journal saw
    // start has logged itself (the crash agent does first thing) and ended.
    const journal = JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'journal.json'), 'utf8')) as { inflight: Array<{ taskId: string; step: string }> };
    const started = journal.inflight.filter((entry) => entry.step !== 'task_claimed').map((entry) => entry.taskId);
    await waitFor(() => started.every((id) => crashAgentTasks(box).includes(id)) && agentPidsOf(box).every((pid) => !pidAlive(pid)), 10_000, 'the orphaned agents to end');
    const db = path.join(box.repo, '.beads', 'fake-db.json');
    const before = readFileSync(db, 'utf8');
    const beads = readBeads(box).filter((issue) => ids.includes(issue.id));
    const held = beads.filter((issue) => issue.status === 'in_progress');
    const closed = beads.filter((issue) => issue.status === 'closed');
    // Each bead is either still claimed by its worker or closed by its agent (its work on no branch yet).
    expect(held.length + closed.length).toBe(2);
    expect((surely === 'closed' ? closed : held).length).toBeGreaterThan(0);
    const updates = bdCalls(box).length;
    const plan = await startNode(box, [...command, '--dry-run']).done;
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    for (const bead of held) expect(plan.stdout).toContain(`would recover: give back ${bead.id} "${bead.title}", claimed by ${bead.assignee} for a run of this clone that is gone: open again, unassigned`);
    for (const bead of closed) expect(plan.stdout).toMatch(new RegExp(`would recover: iteration \\d+ \\(${quote(bead.id)}, worker \\d\\): ${quote(bead.id)} shows done but its work never reached the branch: reopen it, to be done again`));
    // The beads as the run will see them once recovered: both ready again.
    expect(plan.stdout).toContain('tasks: 1 done, 2 remaining, 2 ready');
    expect(plan.stdout).toMatch(/1\. ws-9w6\.2 [\s\S]*2\. ws-9w6\.3 /);
    // Nothing done: bd not written, the journal and the dead run's worktrees still there.
    expect(readFileSync(db, 'utf8')).toBe(before);
    expect(bdCalls(box).slice(updates).filter((argv) => ['update', 'close', 'reopen'].includes(argv[0]!))).toEqual([]);
    expect(existsSync(path.join(box.repo, '.ralph', 'journal.json'))).toBe(true);
    // The dead run's session: still "running" in status.json, said, and closed by the restart.
    const dead = (JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'status.json'), 'utf8')) as { sessionId: string; state: string });
    expect(dead.state).not.toBe('finished');
    expect(plan.stdout).toMatch(new RegExp(`would recover: session ${dead.sessionId} \\(PID \\d+\\) died without ending after its last event at \\S+: record its end \\(interrupted, exit 137\\) and write its report`));
    expect(existsSync(path.join(box.repo, '.ralph', 'sessions', `${dead.sessionId}.json`))).toBe(false);
    const rerun = await startNode(box, command).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(new RegExp(`warning: the run before, session ${dead.sessionId} \\(PID \\d+\\), died without ending after its last event at \\S+ \\(0 iterations ended\\): recorded as interrupted \\(exit 137\\); its report: `));
    expect(expectSessionsEnded(box)).toEqual([dead.sessionId]);
    for (const bead of held) expect(rerun.stderr).toContain(`${bead.id} "${bead.title}" was left in_progress by an interrupted run; put back to open`);
    for (const bead of closed) expect(rerun.stderr).toMatch(new RegExp(`${quote(bead.id)} showed done, but the run died before its work reached the branch: reopened, to be done again`));
    expectBeadsSettled(box, ids);
  });

  it('one worker: an agent\'s claim and a worker\'s claim a dead run left: put back and given back, said, not done', async () => {
    sandbox = crashSandbox();
    const box = sandbox;
    const issues = standardEpic(3);
    for (const issue of issues) if (issue.parent) issue.dependencies = [];
    Object.assign(issues[2]!, { status: 'in_progress', assignee: 'agent' });
    Object.assign(issues[3]!, { status: 'in_progress', assignee: 'ralph-w2' });
    seedBeads(box, issues);
    box.env.FAKE_BD_VERSION = '1.2';
    const claims = (): string[] => readBeads(box).map((issue) => `${issue.id} ${issue.status ?? 'open'} ${issue.assignee ?? ''}`);
    const before = claims();
    const plan = await startNode(box, ['--dry-run']).done;
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain('would recover: put ws-9w6.2 "Task 1: build part 1" back to open: an interrupted run left it in_progress (assignee agent)');
    expect(plan.stdout).toContain('would recover: give back ws-9w6.3 "Task 2: build part 2", claimed by ralph-w2 for a run of this clone that is gone: open again, unassigned');
    expect(plan.stdout).toContain('tasks: 1 done, 3 remaining, 3 ready');
    expect(plan.stdout).toMatch(/1\. ws-9w6\.2 [^\n]*\n  2\. ws-9w6\.3 [^\n]*\n  3\. ws-9w6\.4 /);
    expect(claims()).toEqual(before);
    expect(bdCalls(box).filter((argv) => ['update', 'close'].includes(argv[0]!))).toEqual([]);
  });
});

describe('beads (bd 0.50): one row each', () => {
  // bd 0.50 claims only an unassigned bead, and never twice for one actor: a bead reopened after a crash
  // must still be claimable by a worker of the restart.
  it.each([
    [1, 'agent_ended:1'],
    [2, 'agent_ended:1'],
  ])('--parallel %s, killed at %s, then the same command again', async (parallel, at) => {
    sandbox = crashSandbox();
    const { ids, args } = beadsCrashProject(sandbox, '0.50', parallel > 1);
    const command = parallel > 1 ? [...args, '--parallel', String(parallel)] : args;
    const crashed = await startNode(sandbox, command, { RALPH_TEST_CRASH_AT: at }).done;
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const rerun = await startNode(sandbox, command).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).not.toMatch(/could not/);
    expectBeadsSettled(sandbox, ids);
  });
});

describe('beads (bd 1.2), one worker, the agent commits its own work (the default commit mode)', () => {
  // /sp:next may commit what it did: ralph then commits only what the agent leaves, and recovery must
  // neither commit the work twice nor leave it out.
  it.each(['agent_ended:1', 'state_written:1', 'agent_started:2'])('killed at %s, then the same command again', async (at) => {
    sandbox = crashSandbox();
    sandbox.env.CRASH_AGENT_COMMIT = '1';
    const { ids, args } = beadsCrashProject(sandbox, '1.2', false);
    const command = args.filter((arg) => arg !== '--commit');
    const crashed = await startNode(sandbox, command, { RALPH_TEST_CRASH_AT: at }).done;
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const rerun = await startNode(sandbox, command).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expectBeadsSettled(sandbox, ids, true);
  });
});
