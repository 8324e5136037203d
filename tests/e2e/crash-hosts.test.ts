// Two hosts on one remote (--remote), with a PRD, a Spec Kit feature or beads in server mode (one bd both
// share): host1 is killed (SIGKILL, from inside: the test hook RALPH_TEST_CRASH_AT) at each durable step of
// a landing while host2 runs on, then host1 is started again with the same command. Both end 0 and the remote's branch holds every task done exactly once, each marked
// done by its own commit that holds its work; no claim is left; every clone is clean. The lease is long
// (60 s): a claim the killed run left must be taken back by its clone's next start, never waited out.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor, type Sandbox } from './helpers.ts';
import { BRANCH, crashHosts, expectBeadsHostsSettled, expectHostsSettled, startNode, type HostKind } from './crash-helpers.ts';
import type { Hosts } from './hosts.ts';
import type { CrashPoint } from '../../lib/recovery/crash-points.ts';

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
afterEach(async () => {
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});

/** What host1's restart says of a landing it left unpushed (its first task's, `id`): replayed on host2's. */
const replayed = (id: string): RegExp => new RegExp(`this clone's commit of ${id} that origin lacks \\(a landing cut short\\): replayed on origin/ralph/night \\([0-9a-f]{12}\\) and pushed, up to [0-9a-f]{12}; the claims the killed run left on ${id} released`);

/** The durable steps of a landing on a remote where host1 dies (its first task's), and what its restart says. */
export const HOSTS: Array<[HostKind, CrashPoint, string, RegExp | undefined]> = [
  // The claim is all there is: the restart takes it back (US-001 goes to whichever host picks it next).
  ['prd', 'claimed', '1', /released the claim a killed run of this clone left on US-001/],
  // Merged in this clone, not recorded: recorded into that commit, then replayed on host2's landing.
  ['prd', 'merged', '1', replayed('US-001')],
  ['prd', 'state_written', '1', replayed('US-001')],
  // Pushed with the claim's release in one atomic push: nothing left to settle.
  ['prd', 'pushed', '1', undefined],
  ['prd', 'pushed', '1:early', undefined],
  ['prd', 'claim_released', '1', undefined],
  // Spec Kit: the same landing; what differs is the state (tasks.md's tick, progress.txt's entry) replayed.
  ['speckit', 'merged', '1', replayed('T002')],
  ['speckit', 'state_written', '1', replayed('T002')],
  ['speckit', 'pushed', '1', undefined],
  // Beads in server mode: the state and the claims are in the bd all hosts share, not in the commits.
  ['beads', 'merged', '1', /this clone's commit of ws-9w6\.2 that origin lacks \(a landing cut short\): replayed on origin\/ralph\/night \([0-9a-f]{12}\) and pushed/],
  ['beads', 'pushed', '1', undefined],
];

describe('two hosts on a remote: host1 killed at each durable step of a landing while host2 runs on, then host1 again', () => {
  it.each(HOSTS)('%s: killed at %s (#%s)', async (kind, point, nth, says) => {
    const made = await crashHosts('path', 2, kind);
    ({ box: sandbox, cluster } = made);
    const { cluster: hosts, ids, args, database, holding } = made;
    const [host1, host2] = hosts.hosts as [Sandbox, Sandbox];
    // Killed once its landing is on the remote: host2's landing comes second, and the iteration number it
    // took at its start is host1's by then (a record numbered twice once went by here). In that order every
    // time: host1's agent waits for host2's to start, host2's for host1's death.
    const ordered = point === 'pushed' && kind !== 'beads';
    const marks = { started: path.join(sandbox!.root, 'host2-agent-started'), dead: path.join(sandbox!.root, 'host1-dead') };
    const crashed = startNode(host1, args, { RALPH_TEST_CRASH_AT: `${point}:${nth}`, ...(ordered ? { CRASH_AGENT_AWAIT: marks.started } : {}) });
    // host2 starts once host1 holds a task (or died): host1 reaches its point on a task of its own.
    let ended = false;
    void crashed.done.then(() => (ended = true));
    await waitFor(() => ended || holding(), 30_000, 'host1 to claim a task');
    const other = startNode(host2, args, ordered ? { CRASH_AGENT_STARTED: marks.started, CRASH_AGENT_AWAIT: marks.dead } : {});
    const killed = await crashed.done;
    if (ordered) writeFileSync(marks.dead, '');
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    if (point === 'claimed') {
      // The dry run names the claim the dead run left, and only looks: the claim is still on the remote.
      const claims = hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/']);
      const dry = await startNode(host1, ['--dry-run', ...args]).done;
      expect(dry.stdout).toContain('would recover: release the claim a killed run of this clone left on US-001\n');
      expect(dry.stdout).not.toMatch(/would recover: release the claims? a killed run of this clone left on .*US-002/);
      expect(hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/'])).toContain(claims.split('\n').find((ref) => ref.endsWith('/US-001'))!);
    }
    // host2 lands its task meanwhile: a landing host1 left unpushed must be replayed on that new head.
    await waitFor(() => /^host2$/m.test(hosts.remote(['log', '--format=%(trailers:key=Ralph-Host,valueonly)', BRANCH])), 60_000, 'host2 to land a task');
    const again = await startNode(host1, args).done;
    const second = await other.done;
    expect(again.code, again.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    if (says) expect(again.stderr).toMatch(says);
    // The killed run's claim is its clone's to take back, never a lease to wait out.
    expect(`${again.stderr}\n${second.stderr}`).not.toMatch(/took over/);
    if (ordered) {
      // The order held: host2 numbered its iteration 1 before host1 landed its own 1, so its landing took 2.
      const numbered = hosts.remote(['log', '--format=%(trailers:key=Ralph-Host,valueonly,separator=%x2C) %(trailers:key=Ralph-Iteration,valueonly,separator=%x2C)', BRANCH]).split('\n').filter((line) => line.startsWith('host'));
      expect(numbered.sort()).toEqual(['host1 1', 'host2 2']);
    }
    if (kind === 'beads') expectBeadsHostsSettled(hosts, database!, ids);
    else expectHostsSettled(hosts, ids, false, kind);
  }, 120_000);

  it('prd: killed at merged after host2 landed a record of the same number: the restart records its task under a free number, host2\'s record stays', async () => {
    const made = await crashHosts('path', 2, 'prd');
    ({ box: sandbox, cluster } = made);
    const { cluster: hosts, ids, args } = made;
    const [host1, host2] = hosts.hosts as [Sandbox, Sandbox];
    // host1's agent finishes only once host2 has landed (its iteration 1, history/iteration-1.json): host1's
    // landing then fetches that record, merges, and dies before recording its own iteration 1.
    const landed = path.join(sandbox!.root, 'host2-landed');
    const crashed = startNode(host1, args, { RALPH_TEST_CRASH_AT: 'merged:1', CRASH_AGENT_AWAIT: landed });
    let ended = false;
    void crashed.done.then(() => (ended = true));
    await waitFor(() => ended || made.holding(), 30_000, 'host1 to claim a task');
    const other = startNode(host2, args);
    await waitFor(() => /^host2$/m.test(hosts.remote(['log', '--format=%(trailers:key=Ralph-Host,valueonly)', BRANCH])), 60_000, 'host2 to land a task');
    writeFileSync(landed, '');
    const killed = await crashed.done;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const again = await startNode(host1, args).done;
    const second = await other.done;
    expect(again.code, again.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expectHostsSettled(hosts, ids, false, 'prd');
    // host2's record keeps number 1; host1's took 2, and its commit's trailer says 2 as well.
    const landings = hosts.remote(['log', '--format=%(trailers:key=Ralph-Host,valueonly,separator=%x2C) %(trailers:key=Ralph-Task,valueonly,separator=%x2C) %(trailers:key=Ralph-Iteration,valueonly,separator=%x2C)', BRANCH]).split('\n').filter((line) => line.startsWith('host')).sort();
    expect(landings).toEqual([expect.stringMatching(/^host1 US-00\d 2$/), expect.stringMatching(/^host2 US-00\d 1$/)]);
    for (const landing of landings) {
      const [, task, number] = landing.split(' ');
      expect(JSON.parse(hosts.remote(['show', `${BRANCH}:.rulebook-ralph/history/iteration-${number}.json`]))).toMatchObject({ taskId: task, iterationNumber: Number(number), completionStatus: 'completed' });
    }
  }, 120_000);

  it('a forced exit (Ctrl+C twice) under --remote with workers: its claims released at once, its worktrees said as news at the next start', async () => {
    const made = await crashHosts('path', 2, 'prd');
    ({ box: sandbox, cluster } = made);
    const { cluster: hosts, ids, args } = made;
    const host1 = hosts.hosts[0]!;
    // Both agents work long and ignore SIGTERM: the first Ctrl+C waits for them (kill grace 30 s), the second forces.
    const run = startNode(host1, [...args, '--parallel', '2', '--kill-grace', '30s'], { CRASH_AGENT_MS: '60000', CRASH_AGENT_DEAF: '1' });
    const started = (): number => (existsSync(host1.env.CRASH_AGENT_LOG!) ? readFileSync(host1.env.CRASH_AGENT_LOG!, 'utf8').split('\n').filter(Boolean).length : 0);
    await waitFor(() => started() === 2 && hosts.remote(['for-each-ref', 'refs/ralph/']).trim().split('\n').length === 2, 30_000, 'host1 to claim both tasks and start their agents');
    run.child.kill('SIGINT');
    await waitFor(() => run.output().stderr.includes('SIGINT received: stopping (again to force)'), 20_000, 'ralph to take the first SIGINT');
    run.child.kill('SIGINT');
    const forced = await run.done;
    expect(forced.code, forced.stderr).toBe(130);
    expect(forced.stderr).toMatch(/SIGINT again: forcing exit/);
    expect(hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/']), 'no claim left on the remote').toBe('');
    const again = await startNode(host1, args).done;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/claims? a killed run of this clone left/);
    // What the forced exit left of its workers is news, as its task put back is: no warning.
    for (const worker of ['w1', 'w2']) expect(again.stderr).toMatch(new RegExp(`^\\S+ \\S+ removed the worktree \\.ralph/worktrees/${worker} the run forced to exit \\(a second Ctrl\\+C\\) left behind$`, 'm'));
    expect(again.stderr).toMatch(/^\S+ \S+ the run before, session \S+ \(PID \d+\), was forced to exit \(a second Ctrl\+C\) after its last event at \S+ \(0 iterations ended\): recorded as interrupted \(exit 130\); its report: /m);
    expect(again.stderr).not.toMatch(/warning:/);
    expect(hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/'])).toBe('');
    expect(hosts.remote(['log', '--format=%(trailers:key=Ralph-Task,valueonly)', BRANCH]).split('\n').filter(Boolean).sort()).toEqual([...ids].sort());
  }, 120_000);
});
