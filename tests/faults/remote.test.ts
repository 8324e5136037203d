// --remote under faults: a host killed with -9 mid-task, two hosts editing the same line, the remote
// unreachable for a while (and for too long), Ctrl+C on one host. Several hosts are clones on this machine
// against a bare repository served by a real git daemon (tests/e2e/hosts.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { beadsServer, independentEpic, makeHosts, type Hosts } from '../e2e/hosts.ts';
import { agentCalls, closeStep, makeSandbox, pidAlive, prdProject, prdStories, QUICK, ralphPid, report, runRalph, startRalph, waitFor, type Sandbox } from './helpers.ts';

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
afterEach(async () => {
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});

const git = (dir: string, args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });


/** Each story's agent calls in turn take the next of its steps (the last one repeats). */
function scenario(box: Sandbox, byStory: Record<string, unknown[]>, name = 'scenario'): void {
  const file = path.join(box.root, `${name}.json`);
  writeFileSync(file, JSON.stringify({ byPrompt: Object.entries(byStory).map(([id, steps]) => ({ match: `Task: **${id}**`, steps })), steps: [{ lines: [report('failed')] }] }));
  box.env.FAKE_AGENT_SCENARIO = file;
}

const story = (call: { stdin: string; argv: string[] }): string => /Task: \*\*(US-\d+)\*\*/.exec(`${call.stdin} ${call.argv.join(' ')}`)?.[1] ?? '?';
const claims = (hosts: Hosts): string => hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/']).trim();

describe('--remote under faults', () => {
  it('kill -9 of a host mid-task: its claim expires, another host takes the task over, nothing is done twice', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(2));
    const started = path.join(sandbox.root, 'host1-started');
    const never = path.join(sandbox.root, 'never');
    cluster = await makeHosts(sandbox, 2);
    const [host1, host2] = cluster.hosts as [Sandbox, Sandbox];
    // host1's agent hangs on whichever story it takes (its host dies); host2's agents finish theirs.
    const finish = (n: number) => ({ write: { [`story-${n}.txt`]: `story ${n}\n` }, lines: [report('completed')] });
    const hang = { touch: started, awaitFiles: [never] };
    scenario(host1, { 'US-001': [hang], 'US-002': [hang] }, 'host1');
    scenario(host2, { 'US-001': [finish(1)], 'US-002': [finish(2)] }, 'host2');
    const first = startRalph(host1, ['--remote', 'origin', '--lease', '3s', ...QUICK]);
    await waitFor(() => existsSync(started), 60_000, 'host1 to start a story');
    const taken = story(agentCalls(host1)[0]!);
    await waitFor(() => claims(cluster!).includes(`claims/${taken}`), 20_000, "host1's claim on the remote");
    const pid = ralphPid(host1);
    const agent = Number(readFileSync(started, 'utf8'));
    process.kill(pid, 'SIGKILL');
    first.child.kill('SIGKILL');
    process.kill(agent, 'SIGKILL'); // the host is gone, with its agent
    await first.done;
    await waitFor(() => !pidAlive(pid), 5000, 'host1 to die');
    // The dead host's claim is still there: nobody may take it before its lease runs out.
    expect(claims(cluster)).toContain(`claims/${taken}`);
    const second = await runRalph(host2, ['--remote', 'origin', '--lease', '3s', '--json', ...QUICK]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(new RegExp(`took over ${taken} from host1 \\(.*\\): its claim was not renewed for \\d+ s \\(lease 3 s\\)`));
    expect(agentCalls(host2).map(story).sort()).toEqual(['US-001', 'US-002']);
    const prd = JSON.parse(cluster.remote(['show', 'ralph/demo:prd.json']));
    expect(prd.userStories.map((item: { passes: boolean }) => item.passes)).toEqual([true, true]);
    expect(claims(cluster)).toBe('');
    // host1 comes back: nothing left to do, nothing done again.
    const back = await runRalph(host1, ['--remote', 'origin', '--lease', '3s', '--json', ...QUICK]);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ status: 'completed', iterations: 0 });
    expect(agentCalls(host1).map(story)).toEqual([taken]);
    expect(git(host1.repo, ['rev-parse', 'HEAD'])).toBe(cluster.remote(['rev-parse', 'ralph/demo']));
  }, 180_000);

  it('two hosts edit the same line at once: both tasks land, the later one replayed on the new head, no conflict marker', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    writeFileSync(path.join(sandbox.repo, 'app.txt'), 'header\nvalue: initial\nfooter\n');
    prdProject(sandbox, prdStories(2));
    const barrier = (id: string) => path.join(sandbox!.root, `started-${id}`);
    // Both agents start from the same head (each waits for the other), change the same line, and finish. A
    // rerun on the new head (on either host: the one whose work conflicted, or the other, idle by then) makes
    // the same edit of the line as it now reads: what the agent does follows the file, not the host's count.
    const edit = (id: string) => ({ touch: barrier(id), awaitFiles: [barrier('US-001'), barrier('US-002')], run: [['sed', '-i', '-e', `s/^value: initial$/value: ${id}/`, '-e', 't', '-e', `s/^value: .*/value: ${id} after the other/`, 'app.txt']], lines: [report('completed')] });
    scenario(sandbox, { 'US-001': [edit('US-001')], 'US-002': [edit('US-002')] });
    cluster = await makeHosts(sandbox, 2);
    const results = await Promise.all(cluster.hosts.map((host) => runRalph(host, ['--remote', 'origin', '--lease', '20s', '--json', ...QUICK])));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const both = results.map((result) => result.stderr).join('\n');
    expect(both).toMatch(/US-00[12] conflicted when merged back \(app\.txt\): it runs again on a fresh base/);
    // The conflicting first attempt is kept on the remote, for a person to look at.
    expect(cluster.remote(['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-kept/'])).toMatch(/ralph-kept\/.*US-00[12]-i\d+/);
    const app = cluster.remote(['show', 'ralph/demo:app.txt']);
    // On a failure, what both hosts said and how app.txt came to be on the remote.
    const howItCame = (): string => `${both}\n${cluster!.remote(['log', '-p', '--format=%h %s (%an)%n%b', 'ralph/demo', '--', 'app.txt'])}`;
    expect(app, howItCame()).toMatch(/^header\nvalue: US-00[12] after the other\nfooter\n$/);
    expect(() => cluster!.remote(['grep', '-q', '<<<<<<<', 'ralph/demo'])).toThrow(); // git grep exits 1: no match
    const prd = JSON.parse(cluster.remote(['show', 'ralph/demo:prd.json']));
    expect(prd.userStories.map((item: { passes: boolean }) => item.passes)).toEqual([true, true]);
    expect(cluster.remote(['log', '--format=%P', 'ralph/demo']).trim().split('\n').every((parents) => parents.split(' ').length <= 1)).toBe(true);
  }, 180_000);

  it('the remote unreachable for a while: the work waits in this clone and lands when the remote answers again', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(2));
    const started = path.join(sandbox.root, 'started');
    const go = path.join(sandbox.root, 'go');
    scenario(sandbox, {
      'US-001': [{ touch: started, awaitFiles: [go], write: { 'story-1.txt': 'story 1\n' }, lines: [report('completed')] }],
      'US-002': [{ write: { 'story-2.txt': 'story 2\n' }, lines: [report('completed')] }],
    });
    cluster = await makeHosts(sandbox, 1);
    const [host] = cluster.hosts as [Sandbox];
    const run = startRalph(host, ['--remote', 'origin', '--lease', '20s', '--json', ...QUICK]);
    await waitFor(() => existsSync(started), 60_000, 'the agent to start');
    await cluster.server.stop();
    writeFileSync(go, 'go\n');
    await waitFor(() => /origin does not answer/.test(run.output().stderr), 60_000, 'ralph to find the remote silent');
    // Meanwhile the work is committed in this clone, on no branch of the remote's.
    await waitFor(() => /US-001/.test(git(host.repo, ['log', '--all', '--format=%s'])), 60_000, 'the work of US-001 committed in this clone');
    expect(cluster.remote(['log', '--format=%s', 'ralph/demo'])).not.toMatch(/US-001/);
    await cluster.server.start();
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/warning: origin does not answer \(.*\): .* waits and tries again for up to 1800 s/);
    expect(result.stderr).toMatch(/origin answers again after \d+ s/);
    const prd = JSON.parse(cluster.remote(['show', 'ralph/demo:prd.json']));
    expect(prd.userStories.map((item: { passes: boolean }) => item.passes)).toEqual([true, true]);
    expect(cluster.remote(['ls-tree', '--name-only', 'ralph/demo'])).toMatch(/story-1\.txt[\s\S]*story-2\.txt/);
    expect(claims(cluster)).toBe('');
  }, 180_000);

  it('the remote unreachable past --remote-wait: exit 1 naming the branch that keeps the work; nothing lost', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(1));
    const started = path.join(sandbox.root, 'started');
    const go = path.join(sandbox.root, 'go');
    scenario(sandbox, { 'US-001': [{ touch: started, awaitFiles: [go], write: { 'story-1.txt': 'story 1\n' }, lines: [report('completed')] }] });
    cluster = await makeHosts(sandbox, 1);
    const [host] = cluster.hosts as [Sandbox];
    const run = startRalph(host, ['--remote', 'origin', '--remote-wait', '3s', '--json', ...QUICK]);
    await waitFor(() => existsSync(started), 60_000, 'the agent to start');
    await cluster.server.stop();
    writeFileSync(go, 'go\n');
    const result = await run.done;
    expect(result.code).toBe(1);
    const line = /^ralph: (.*)$/m.exec(result.stderr)?.[1] ?? '';
    expect(line).toMatch(/^origin did not answer for \d+ s \(.*errno=Connection refused\) while (?:fetching origin\/ralph\/demo|landing US-001): the work of US-001 \(iteration 1\) is kept on branch (ralph-kept\/\S+) in this clone; run ralph again once the remote answers$/);
    const branch = /on branch (ralph-kept\/\S+) in this clone/.exec(line)![1]!;
    expect(git(host.repo, ['show', `${branch}:story-1.txt`])).toBe('story 1\n');
    // The clone is back where the remote left it: no half-landed commit on the feature branch.
    expect(git(host.repo, ['rev-parse', 'HEAD'])).toBe(cluster.remote(['rev-parse', 'ralph/demo']));
    expect(git(host.repo, ['status', '--porcelain'])).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', exitCode: 1 });
    expect(existsSync(path.join(host.repo, '.ralph.lock'))).toBe(false);
  }, 180_000);

  it('Ctrl+C on one host releases its claims on the remote at once', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(2));
    const started = (n: number) => path.join(sandbox!.root, `started-${n}`);
    const never = path.join(sandbox.root, 'never');
    scenario(sandbox, { 'US-001': [{ touch: started(1), awaitFiles: [never] }], 'US-002': [{ touch: started(2), awaitFiles: [never] }] });
    cluster = await makeHosts(sandbox, 1);
    const [host] = cluster.hosts as [Sandbox];
    const run = startRalph(host, ['--remote', 'origin', '--parallel', '2', '--lease', '10m', ...QUICK]);
    await waitFor(() => existsSync(started(1)) && existsSync(started(2)), 60_000, 'both agents to start');
    expect(claims(cluster).split('\n').sort()).toEqual(['refs/ralph/ralph-demo/claims/US-001', 'refs/ralph/ralph-demo/claims/US-002'].map((ref) => ref.replace('ralph-demo', 'ralph%2Fdemo')));
    process.kill(ralphPid(host), 'SIGINT');
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(claims(cluster)).toBe('');
  }, 120_000);

  it('a host frozen past its lease (SIGSTOP): another host takes the task over and lands it; the frozen one, thawed, lands nothing twice', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(2));
    cluster = await makeHosts(sandbox, 2);
    const [host1, host2] = cluster.hosts as [Sandbox, Sandbox];
    const started = path.join(sandbox.root, 'host1-started');
    const go = path.join(sandbox.root, 'go');
    const finish = (n: number, extra: Record<string, unknown> = {}) => ({ write: { [`story-${n}.txt`]: `story ${n} by ${extra.by ?? 'host2'}\n` }, lines: [report('completed')], ...extra });
    // host1 freezes on whichever story it takes first; host2 finishes both.
    scenario(host1, { 'US-001': [{ ...finish(1, { by: 'host1' }), touch: started, awaitFiles: [go] }], 'US-002': [{ ...finish(2, { by: 'host1' }), touch: started, awaitFiles: [go] }] }, 'host1');
    scenario(host2, { 'US-001': [finish(1)], 'US-002': [finish(2)] }, 'host2');
    const first = startRalph(host1, ['--remote', 'origin', '--lease', '3s', '--json', ...QUICK]);
    await waitFor(() => existsSync(started), 60_000, 'host1 to start a story');
    const taken = story(agentCalls(host1)[0]!);
    const n = taken.slice(-1);
    const pid = ralphPid(host1);
    process.kill(pid, 'SIGSTOP');
    try {
      const second = await runRalph(host2, ['--remote', 'origin', '--lease', '3s', '--json', ...QUICK]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toMatch(new RegExp(`took over ${taken} from host1`));
    } finally {
      writeFileSync(go, 'go\n');
      process.kill(pid, 'SIGCONT');
    }
    const thawed = await first.done;
    expect(thawed.code, thawed.stderr).toBe(0);
    expect(thawed.stderr).toMatch(new RegExp(`not landed: the claim of ${taken} (?:is not this run's any more|was taken over by another host)`));
    // The story landed once, host2's; host1's work is kept on the remote for a person to look at.
    expect(cluster.remote(['log', '--format=%s', 'ralph/demo']).split('\n').filter((subject) => subject.startsWith(`ralph: ${taken}`))).toHaveLength(1);
    expect(cluster.remote(['show', `ralph/demo:story-${n}.txt`])).toBe(`story ${n} by host2\n`);
    const kept = cluster.remote(['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-kept/']).trim();
    expect(kept).toMatch(new RegExp(`${taken}-i1`));
    expect(cluster.remote(['show', `${kept}:story-${n}.txt`])).toBe(`story ${n} by host1\n`);
    expect(claims(cluster)).toBe('');
  }, 180_000);

  it('beads in server mode: kill -9 of a host mid-bead; after the lease another host takes the bead over in bd and closes it', async () => {
    sandbox = makeSandbox();
    const database = beadsServer(sandbox, independentEpic(1));
    cluster = await makeHosts(sandbox, 2);
    const [host1, host2] = cluster.hosts as [Sandbox, Sandbox];
    const started = path.join(sandbox.root, 'host1-started');
    const write = (file: string, steps: unknown[]) => {
      writeFileSync(file, JSON.stringify({ byPrompt: [{ match: 'Work on bead ws-9w6.2 ', steps }] }));
      return file;
    };
    host1.env.FAKE_AGENT_SCENARIO = write(path.join(sandbox.root, 'host1.json'), [{ touch: started, awaitFiles: [path.join(sandbox.root, 'never')] }]);
    host2.env.FAKE_AGENT_SCENARIO = write(path.join(sandbox.root, 'host2.json'), [closeStep('ws-9w6.2', { write: { 'part1.txt': 'part 1\n' } })]);
    const first = startRalph(host1, ['--remote', 'origin', '--lease', '3s', ...QUICK]);
    await waitFor(() => existsSync(started), 60_000, 'host1 to start the bead');
    const stored = () => (JSON.parse(readFileSync(database, 'utf8')).issues as Array<{ id: string; status: string; assignee?: string }>).find((issue) => issue.id === 'ws-9w6.2')!;
    expect(stored()).toMatchObject({ status: 'in_progress', assignee: expect.stringMatching(/^ralph-host1-[0-9a-f]{4}-w1$/) });
    const pid = ralphPid(host1);
    process.kill(pid, 'SIGKILL');
    first.child.kill('SIGKILL');
    process.kill(Number(readFileSync(started, 'utf8')), 'SIGKILL');
    await first.done;
    // Another host's status shows who holds the bead in bd (no ref claims with beads).
    const status = await runRalph(host2, ['status', '--remote', 'origin']);
    expect(status.stdout).toMatch(/\nin progress in beads: ws-9w6\.2 held by ralph-host1-[0-9a-f]{4}-w1\n/);
    const second = await runRalph(host2, ['--remote', 'origin', '--lease', '3s', '--json', ...QUICK]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/took over ws-9w6\.2 from ralph-host1-[0-9a-f]{4}-w1: its claim was not renewed/);
    expect(stored().status).toBe('closed');
    expect(agentCalls(host2)).toHaveLength(1);
    expect(cluster.remote(['show', '001-ralph-automation:part1.txt'])).toBe('part 1\n');
  }, 180_000);
});
