// Two hosts on one remote (--remote): host1 is killed (SIGKILL, from inside: the test hook
// RALPH_TEST_CRASH_AT) at each durable step of a landing while host2 runs on, then host1 is started again
// with the same command. Both end 0 and the remote's branch holds every task done exactly once, each marked
// done by its own commit that holds its work; no claim is left; every clone is clean. The lease is long
// (60 s): a claim the killed run left must be taken back by its clone's next start, never waited out.
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKES, makeSandbox, waitFor, type Sandbox } from './helpers.ts';
import { crashProject, startNode } from './crash-helpers.ts';
import { makeHosts, type Hosts, type Transport } from './hosts.ts';
import type { CrashPoint } from '../../lib/recovery/crash-points.ts';

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
afterEach(async () => {
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});

export const BRANCH = 'ralph/night';
const git = (dir: string, args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A sandbox on BRANCH whose `claude` is the crash tests' agent, with a PRD of `count` stories, and its hosts. */
export async function crashHosts(transport: Transport, count = 2): Promise<{ cluster: Hosts; ids: string[]; args: string[] }> {
  sandbox = makeSandbox({ agents: [], branch: BRANCH });
  symlinkSync(path.join(FAKES, 'crash-agent.mjs'), path.join(sandbox.bin, 'claude'));
  sandbox.env.CRASH_AGENT_LOG = path.join(sandbox.root, 'crash-agent.log');
  const { ids, args } = crashProject(sandbox, 'prd', count);
  cluster = await makeHosts(sandbox, 2, transport);
  return { cluster, ids, args: ['--remote', 'origin', '--lease', '60s', ...args] };
}

/** Whether `id` passes in prd.json at `sha` of the bare repository. */
const passes = (hosts: Hosts, id: string, sha: string): boolean => {
  try {
    return (JSON.parse(hosts.remote(['show', `${sha}:prd.json`])) as { userStories: Array<{ id: string; passes: boolean }> }).userStories.find((story) => story.id === id)?.passes === true;
  } catch {
    return false;
  }
};

/**
 * What every run of two hosts ends with, on the remote's branch: each story flipped to passing by exactly
 * one commit, its own (Ralph-Task), holding its work (work/<id>.txt), never flipped back; one completed
 * history record per story; a linear history; no claim; each clone at the remote's head, clean, with no
 * journal, lock or worker branch left.
 */
export function expectHostsSettled(hosts: Hosts, ids: readonly string[]): void {
  const shas = hosts.remote(['rev-list', '--reverse', BRANCH]).split('\n').filter(Boolean);
  for (const id of ids) {
    const flips: string[] = [];
    let before = false;
    for (const sha of shas) {
      const now = passes(hosts, id, sha);
      expect(before && !now, `${id} went back to not done in ${sha}`).toBe(false);
      if (!before && now) flips.push(sha);
      before = now;
    }
    expect(flips, `${id} is marked done by exactly one commit`).toHaveLength(1);
    expect(hosts.remote(['diff-tree', '--no-commit-id', '--name-only', '-r', flips[0]!]).split('\n'), `the commit marking ${id} done holds its work`).toContain(`work/${id}.txt`);
    expect(hosts.remote(['log', '-1', '--format=%B', flips[0]!]), `the commit marking ${id} done is ${id}'s own`).toMatch(new RegExp(`^Ralph-Task: ${id}$`, 'm'));
  }
  const records = hosts.remote(['ls-tree', '-r', '--name-only', BRANCH]).split('\n').filter((file) => /history\/iteration-\d+\.json$/.test(file));
  const completed = records.map((file) => JSON.parse(hosts.remote(['show', `${BRANCH}:${file}`])) as { taskId: string; completionStatus: string }).filter((record) => record.completionStatus === 'completed');
  expect(completed.map((record) => record.taskId).sort(), 'one completed history record per story').toEqual([...ids].sort());
  expect(hosts.remote(['log', '--format=%P', BRANCH]).trim().split('\n').every((parents) => parents.split(' ').length <= 1), 'a linear history').toBe(true);
  expect(hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/']), 'no claim left on the remote').toBe('');
  expect(hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/heads/ralph-kept/']), 'no kept branch needed').toBe('');
  const head = hosts.remote(['rev-parse', BRANCH]).trim();
  for (const host of hosts.hosts) {
    expect(git(host.repo, ['status', '--porcelain', '--untracked-files=all']), `${host.repo} is clean`).toBe('');
    expect(git(host.repo, ['rev-parse', 'HEAD']).trim(), `${host.repo} at the remote's head`).toBe(head);
    expect(git(host.repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-worker/', 'refs/heads/ralph-kept/']), 'no worker or kept branch left').toBe('');
    expect(git(host.repo, ['ls-files', '--others', '--ignored', '--exclude-standard', '.ralph/journal.json', '.ralph.lock']).trim(), 'no journal, no lock left').toBe('');
  }
}

/** The durable steps of a landing on a remote, where host1 dies (its first task's). */
export const HOSTS: Array<[CrashPoint, string]> = [
  ['claimed', '1'],
  ['merged', '1'],
  ['state_written', '1'],
  ['pushed', '1'],
  ['pushed', '1:early'],
  ['claim_released', '1'],
];

describe('two hosts on a remote: host1 killed at each durable step of a landing while host2 runs on, then host1 again', () => {
  it.each(HOSTS)('killed at %s (#%s)', async (point, nth) => {
    const { cluster: hosts, ids, args } = await crashHosts('path');
    const [host1, host2] = hosts.hosts as [Sandbox, Sandbox];
    const crashed = startNode(host1, args, { RALPH_TEST_CRASH_AT: `${point}:${nth}` });
    // host2 starts once host1 holds a task (or died): host1 reaches its point on a task of its own.
    let ended = false;
    void crashed.done.then(() => (ended = true));
    await waitFor(() => ended || hosts.remote(['for-each-ref', 'refs/ralph/']).trim() !== '', 30_000, 'host1 to claim a task');
    const other = startNode(host2, args);
    const killed = await crashed.done;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const again = await startNode(host1, args).done;
    const second = await other.done;
    expect(again.code, again.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    // The killed run's claim is its clone's to take back, never a lease to wait out.
    expect(`${again.stderr}\n${second.stderr}`).not.toMatch(/took over/);
    expectHostsSettled(hosts, ids);
  }, 120_000);
});
