// A host killed while its landing was under way (committed in its clone, never pushed) while another host
// landed meanwhile: restarted with the same command, it recognises its own commits by ralph's trailers,
// replays them on the remote's head and goes on; a user's own diverged commits are still refused. The
// diverged state is made step by step with real runs against a real bare repository: no timing.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prdProject, prdStories, report } from './projects.ts';
import { agentCalls, FAST, makeSandbox, runRalph, type Sandbox } from './helpers.ts';
import { makeHosts, type Hosts } from './hosts.ts';
import { expectSettled, startNode } from './crash-helpers.ts';

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
afterEach(async () => {
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});

const BRANCH = 'ralph/night';
const CLAIMS = 'refs/ralph/ralph%2Fnight/claims/';
const git = (dir: string, args: string[], env?: NodeJS.ProcessEnv): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8', ...(env ? { env } : {}) });
const stories = (host: Sandbox): string[] => agentCalls(host).map((call) => /Task: \*\*(US-\d+)\*\*/.exec(`${call.stdin ?? ''} ${call.argv.join(' ')}`)?.[1] ?? '?');

/**
 * host1 lands US-001, then its push is taken back on the remote (as if it never went out) with host1's
 * claim of US-001 still there, as a run killed between its commit and its push leaves them; host2 then
 * lands US-002 from the old head. Returns the hosts and the head both started from.
 */
async function divergedLanding(files: (story: number) => Record<string, string>): Promise<{ host1: Sandbox; host2: Sandbox; base: string; unpushed: string }> {
  sandbox = makeSandbox({ branch: BRANCH });
  prdProject(sandbox, prdStories(3));
  const byPrompt = [1, 2, 3].map((n) => ({ match: `Task: **US-00${n}**`, steps: [{ write: files(n), lines: [report('completed', `learned ${n}`)] }] }));
  writeFileSync(path.join(sandbox.root, 'scenario.json'), JSON.stringify({ byPrompt, steps: [{ lines: [report('failed')] }] }));
  sandbox.env.FAKE_AGENT_SCENARIO = path.join(sandbox.root, 'scenario.json');
  cluster = await makeHosts(sandbox, 2, 'path');
  const [host1, host2] = cluster.hosts as [Sandbox, Sandbox];
  const base = cluster.remote(['rev-parse', BRANCH]).trim();
  const first = await runRalph(host1, ['--remote', 'origin', '--max-iterations', '1', ...FAST]);
  expect(first.code, first.stderr).toBe(2);
  const unpushed = git(host1.repo, ['rev-parse', 'HEAD']).trim();
  expect(cluster.remote(['rev-parse', BRANCH]).trim()).toBe(unpushed);
  // The push never went out: the remote's branch (and host1's view of it) back where it was; the claim stays.
  cluster.remote(['update-ref', `refs/heads/${BRANCH}`, base]);
  git(host1.repo, ['update-ref', `refs/remotes/origin/${BRANCH}`, base]);
  const tree = cluster.remote(['hash-object', '-t', 'tree', '-w', '/dev/null']).trim();
  const now = Date.now();
  const claim = { task: 'US-001', host: 'host1', clone: host1.repo, run: 'killed-run', pid: 999_999, since: now, renewedAt: now, leaseMs: 600_000 };
  const sha = git(cluster.bare, ['commit-tree', tree, '-m', `ralph-claim ${JSON.stringify(claim)}`], sandbox.env).trim();
  cluster.remote(['update-ref', `${CLAIMS}US-001`, sha]);
  // host2 sees US-001 held by host1 and lands US-002 on the old head.
  const second = await runRalph(host2, ['--remote', 'origin', '--max-iterations', '1', ...FAST]);
  expect(second.code, second.stderr).toBe(2);
  expect(stories(host2)).toEqual(['US-002']);
  // The two landings each on the old head: diverged.
  expect(cluster.remote(['merge-base', unpushed, BRANCH]).trim()).toBe(base);
  expect(cluster.remote(['rev-parse', BRANCH]).trim()).not.toBe(base);
  return { host1, host2, base, unpushed };
}

describe('--remote: a host killed while landing, restarted with the same command', () => {
  it("replays its own unpushed landing on the remote's head and goes on: every story once, no claim left", async () => {
    const { host1, host2, unpushed } = await divergedLanding((n) => ({ [`story-${n}.txt`]: `story ${n}\n` }));
    const again = await runRalph(host1, ['--remote', 'origin', '--json', ...FAST]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/have each moved on/);
    expect(again.stderr).toMatch(/this clone's commit of US-001 that origin lacks \(a landing cut short\): replayed on origin\/ralph\/night \([0-9a-f]{12}\) and pushed, up to [0-9a-f]{12}; the claims the killed run left on US-001 released/);
    // Nothing done twice: host1's agent ran US-001 (before the kill) and US-003, host2's US-002.
    expect(stories(host1)).toEqual(['US-001', 'US-003']);
    expect(stories(host2)).toEqual(['US-002']);
    const remote = cluster!;
    const prd = JSON.parse(remote.remote(['show', `${BRANCH}:prd.json`]));
    expect(prd.userStories.map((story: { passes: boolean }) => story.passes)).toEqual([true, true, true]);
    const files = remote.remote(['ls-tree', '-r', '--name-only', BRANCH]).split('\n');
    for (const n of [1, 2, 3]) expect(files).toContain(`story-${n}.txt`);
    // Each iteration's record under a number of its own (host1's US-001 record was renumbered past host2's).
    const records = files.filter((file) => /history\/iteration-\d+\.json$/.test(file));
    const tasks = records.map((file) => (JSON.parse(remote.remote(['show', `${BRANCH}:${file}`])) as { taskId: string; iterationNumber: number }));
    expect(tasks.map((record) => record.taskId).sort()).toEqual(['US-001', 'US-002', 'US-003']);
    expect(new Set(tasks.map((record) => record.iterationNumber)).size).toBe(3);
    for (const [index, file] of records.entries()) expect(file).toContain(`iteration-${tasks[index]!.iterationNumber}.json`);
    // progress.txt keeps what both hosts appended.
    const progress = remote.remote(['show', `${BRANCH}:progress.txt`]);
    for (const n of [1, 2, 3]) expect(progress).toContain(`learned ${n}`);
    // The replayed commit is host1's, with its trailers; the remote's history linear; no claim left.
    const subjects = remote.remote(['log', '--format=%s|%(trailers:key=Ralph-Host,valueonly,separator=%x2C)|%P', BRANCH]).trim().split('\n');
    expect(subjects.some((line) => line.startsWith('ralph: US-001') && line.includes('|host1|'))).toBe(true);
    expect(subjects.every((line) => line.split('|')[2]!.split(' ').length <= 1)).toBe(true);
    expect(remote.remote(['rev-parse', BRANCH]).trim()).not.toBe(unpushed);
    expect(remote.remote(['for-each-ref', 'refs/ralph/'])).toBe('');
    expect(git(host1.repo, ['status', '--porcelain']).trim()).toBe('');
  }, 240_000);

  it('a landing that conflicts with what the other host landed is kept on a ralph-kept branch; the task runs again', async () => {
    // Every story writes the same file: host1's unpushed US-001 and host2's US-002 cannot both stand.
    const { host1, unpushed } = await divergedLanding((n) => ({ 'shared.txt': `story ${n}\n` }));
    const again = await runRalph(host1, ['--remote', 'origin', ...FAST]);
    expect(again.code, again.stderr).toBe(0);
    const kept = /conflict with origin\/ralph\/night \(shared\.txt\): kept on branch origin\/(ralph-kept\/\S+\/unpushed-[0-9a-f]{12}), and this clone moved to [0-9a-f]{12}; US-001 run again/.exec(again.stderr);
    expect(kept, again.stderr).not.toBeNull();
    expect(cluster!.remote(['rev-parse', kept![1]!]).trim()).toBe(unpushed);
    expect(stories(host1)).toEqual(['US-001', 'US-001', 'US-003']);
    const prd = JSON.parse(cluster!.remote(['show', `${BRANCH}:prd.json`]));
    expect(prd.userStories.map((story: { passes: boolean }) => story.passes)).toEqual([true, true, true]);
  }, 240_000);

  it("a user's own commit among them: refused as before, nothing pushed", async () => {
    const { host1 } = await divergedLanding((n) => ({ [`story-${n}.txt`]: `story ${n}\n` }));
    writeFileSync(path.join(host1.repo, 'notes.md'), 'mine\n');
    git(host1.repo, ['add', 'notes.md'], host1.env);
    git(host1.repo, ['commit', '-qm', 'a commit of my own'], host1.env);
    const head = cluster!.remote(['rev-parse', BRANCH]).trim();
    const refused = await runRalph(host1, ['--remote', 'origin', ...FAST]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ralph: this clone's ralph\/night \([0-9a-f]{12}\) and origin\/ralph\/night \([0-9a-f]{12}\) have each moved on: ralph never force-pushes; git pull --rebase origin ralph\/night/m);
    expect(cluster!.remote(['rev-parse', BRANCH]).trim()).toBe(head);
    expect(readFileSync(path.join(host1.repo, 'notes.md'), 'utf8')).toBe('mine\n');
  }, 240_000);
});

describe('--remote: a host killed inside a batch (its tasks ready together, one push for all)', () => {
  // Three stories whose agents finish at once, on one host with three workers: they land as one batch (the
  // first waits for the workers whose agents just ended). Killed with the batch committed in the clone and
  // not pushed (state_written #3), or once its one push went out (pushed #1): the same command again lands
  // or settles every story once.
  it.each([['state_written', 3], ['pushed', 1]])('killed at %s #%i: the same command again leaves every story done once on the remote, in the commit that holds its work', async (point, nth) => {
    sandbox = makeSandbox({ branch: BRANCH });
    writeFileSync(path.join(sandbox.root, 'check.sh'), 'sleep 0.5\necho "$(ls work 2>/dev/null | tr "\\n" " ")" >> "$GATE_LOG"\n');
    sandbox.env.GATE_LOG = path.join(sandbox.root, 'gate-runs.log');
    prdProject(sandbox, prdStories(3));
    const marker = (n: number) => path.join(sandbox!.root, `marker-${n}`);
    const work = (n: number) => ({ [`work/US-00${n}.txt`]: `story ${n}\n` });
    const byPrompt = [1, 2, 3].map((n) => ({ match: `Task: **US-00${n}**`, steps: [{ write: work(n), touch: marker(n), awaitFiles: [1, 2, 3].map(marker), lines: [report('completed')] }, { write: work(n), lines: [report('completed')] }] }));
    writeFileSync(path.join(sandbox.root, 'scenario.json'), JSON.stringify({ byPrompt, steps: [{ lines: [report('failed')] }] }));
    sandbox.env.FAKE_AGENT_SCENARIO = path.join(sandbox.root, 'scenario.json');
    cluster = await makeHosts(sandbox, 1, 'path');
    const [host] = cluster.hosts as [Sandbox];
    const command = ['--remote', 'origin', '--parallel', '3', '--gate', `sh ${path.join(sandbox.root, 'check.sh')}`, ...FAST];
    const crashed = await startNode(host, command, { RALPH_TEST_CRASH_AT: `${point}:${nth}` }).done;
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    expect(readFileSync(sandbox.env.GATE_LOG, 'utf8'), 'the batch was gated as one stack').toMatch(/^US-001\.txt US-002\.txt US-003\.txt $/m);
    const rerun = await startNode(host, command).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(cluster.remote(['rev-parse', BRANCH]).trim(), 'the clone ends at the remote head').toBe(git(host.repo, ['rev-parse', 'HEAD']).trim());
    expect(cluster.remote(['for-each-ref', CLAIMS]), `no claim left\n${rerun.stderr}`).toBe('');
    expectSettled(host, 'prd', ['US-001', 'US-002', 'US-003']);
  }, 120_000);
});
