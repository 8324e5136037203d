// --remote end to end: several hosts (clones on this machine, each with its own ralph) share one feature
// branch through a bare repository served by a real git daemon. Claims are refs on the remote; work lands
// by replay and push.
import { execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prdProject, prdStories, report, specKitProject, tick, TASKS_PATH } from './projects.ts';
import { agentCalls, closeStep, FAKES, FAST, makeSandbox, runRalph, type Sandbox } from './helpers.ts';
import { beadsServer, independentEpic, makeHosts, type Hosts } from './hosts.ts';

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
afterEach(async () => {
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});


function scenario(box: Sandbox, byPrompt: Array<{ match: string; steps: unknown[] }>): void {
  const file = path.join(box.root, 'scenario.json');
  writeFileSync(file, JSON.stringify({ byPrompt, steps: [{ lines: [report('failed')] }] }));
  box.env.FAKE_AGENT_SCENARIO = file;
}

/** The agent's calls of one host: the story each one worked on (the prompt's task line). */
function storiesRun(host: Sandbox): string[] {
  return agentCalls(host).map((call) => /Task: \*\*(US-\d+)\*\*/.exec(`${call.stdin ?? ''} ${call.argv.join(' ')}`)?.[1] ?? '?');
}

// Eight stories for six workers (three hosts × two): every host lands some, and landings meet at the remote.
const STORIES = 8;

describe('--remote: several hosts on one feature', () => {
  it('PRD: three hosts × two workers finish eight stories, each once, on a linear remote branch; nothing of ralph left there', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(STORIES));
    scenario(
      sandbox,
      Array.from({ length: STORIES }, (_, index) => ({
        match: `Task: **US-${String(index + 1).padStart(3, '0')}**`,
        steps: [{ write: { [`story-${index + 1}.txt`]: `story ${index + 1}\n` }, workMs: 300, lines: [report('completed', `learned ${index + 1}`)] }],
      })),
    );
    cluster = await makeHosts(sandbox, 3);
    const runs = cluster.hosts.map((host) => runRalph(host, ['--remote', 'origin', '--parallel', '2', '--lease', '20s', '--json', ...FAST]));
    const results = await Promise.all(runs);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const summaries = results.map((result) => JSON.parse(result.stdout));
    // Every story ran on exactly one host (no story done twice), and the hosts shared the work.
    const ran = cluster.hosts.flatMap(storiesRun);
    expect(ran.sort()).toEqual(prdStories(STORIES).userStories.map((story) => story.id));
    const here = summaries.map((summary) => summary.remote.landedHere);
    expect(here.reduce((a, b) => a + b, 0)).toBe(STORIES);
    expect(here.filter((count) => count > 0).length).toBeGreaterThanOrEqual(2);
    // The remote's branch: linear, every story's file, prd.json with every story passing, history for each.
    const log = cluster.remote(['log', '--format=%P', 'ralph/demo']).trim().split('\n');
    expect(log.every((parents) => parents.split(' ').length <= 1)).toBe(true);
    const files = cluster.remote(['ls-tree', '-r', '--name-only', 'ralph/demo']).split('\n');
    for (let n = 1; n <= STORIES; n += 1) expect(files).toContain(`story-${n}.txt`);
    const prd = JSON.parse(cluster.remote(['show', 'ralph/demo:prd.json']));
    expect(prd.userStories.every((story: { passes: boolean }) => story.passes)).toBe(true);
    const history = files.filter((file) => /^\.rulebook-ralph\/history\/iteration-\d+\.json$/.test(file));
    expect(history).toHaveLength(STORIES);
    // No claim is left on the remote, and every host's clone is at the remote's head.
    expect(cluster.remote(['for-each-ref', 'refs/ralph/'])).toBe('');
    const head = cluster.remote(['rev-parse', 'ralph/demo']).trim();
    for (const host of cluster.hosts) expect(readFileSync(path.join(host.repo, '.git', 'HEAD'), 'utf8')).toContain('ralph/demo');
    for (const host of cluster.hosts) expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: host.repo, encoding: 'utf8' }).trim()).toBe(head);
  }, 240_000);

  it('Spec Kit: three hosts × two workers on [P] phases; a phase starts only once the one before has landed; every box ticked once', async () => {
    sandbox = makeSandbox({ branch: '001-demo' });
    const ids = Array.from({ length: 10 }, (_, index) => `T${String(index + 1).padStart(3, '0')}`);
    specKitProject(
      sandbox,
      [
        '# Tasks: demo',
        '',
        '## Phase 1: Setup',
        ...ids.slice(0, 6).map((id) => `- [ ] ${id} [P] Create ${id}.txt`),
        '',
        '## Phase 2: Core',
        `- [ ] ${ids[6]} Create ${ids[6]}.txt`,
        '',
        '## Phase 3: Polish',
        ...ids.slice(7).map((id) => `- [ ] ${id} [P] Create ${id}.txt`),
        '',
      ].join('\n'),
    );
    const runs = path.join(sandbox.root, 'runs.log');
    const done = JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'done', total_cost_usd: 0.001 });
    const file = path.join(sandbox.root, 'scenario.json');
    writeFileSync(
      file,
      JSON.stringify({
        byPrompt: ids.map((id) => ({
          match: `${id} `,
          // Each run says which task it is and how many boxes of the phases before it saw ticked.
          steps: [{ run: [['sh', '-c', `echo "${id} $(grep -c '^- \\[X\\]' ${TASKS_PATH})" >> ${runs}`]], write: { [`${id}.txt`]: `${id}\n` }, edit: [tick(id)], workMs: 200, lines: [done] }],
        })),
      }),
    );
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    cluster = await makeHosts(sandbox, 3);
    const results = await Promise.all(cluster.hosts.map((host) => runRalph(host, ['--remote', 'origin', '--parallel', '2', '--lease', '20s', '--json', ...FAST])));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const seen = readFileSync(runs, 'utf8').trim().split('\n').map((line) => line.split(' ') as [string, string]);
    expect(seen.map(([id]) => id).sort()).toEqual(ids);
    // T007 saw the six [P] boxes of phase 1 ticked; the polish tasks saw at least seven.
    expect(Number(seen.find(([id]) => id === 'T007')![1])).toBe(6);
    for (const [id, ticked] of seen) if (id > 'T007') expect(Number(ticked)).toBeGreaterThanOrEqual(7);
    const tasks = cluster.remote(['show', `001-demo:${TASKS_PATH}`]);
    for (const id of ids) expect(tasks).toContain(`- [X] ${id}`);
    expect(tasks).not.toContain('- [ ]');
    const summaries = results.map((result) => JSON.parse(result.stdout));
    expect(summaries.reduce((sum, summary) => sum + summary.remote.landedHere, 0)).toBe(10);
    expect(cluster.remote(['for-each-ref', 'refs/ralph/'])).toBe('');
  }, 240_000);

  it('beads in server mode: two hosts × two workers share one bd database; bd claims each bead, no ref on the remote', async () => {
    sandbox = makeSandbox();
    // beads 1.x in server mode: .beads/metadata.json (tracked) names one dolt server every clone talks to.
    const beads = ['ws-9w6.2', 'ws-9w6.3', 'ws-9w6.4', 'ws-9w6.5'];
    const database = beadsServer(sandbox, independentEpic(4));
    const runs = path.join(sandbox.root, 'runs.log');
    const file = path.join(sandbox.root, 'scenario.json');
    writeFileSync(file, JSON.stringify({ byPrompt: beads.map((id) => ({ match: `Work on bead ${id} `, steps: [closeStep(id, { append: { [runs]: `${id}\n` }, write: { [`${id}.txt`]: `${id}\n` }, workMs: 300 })] })) }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    cluster = await makeHosts(sandbox, 2);
    const results = await Promise.all(cluster.hosts.map((host) => runRalph(host, ['--remote', 'origin', '--parallel', '2', '--lease', '20s', '--json', ...FAST])));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(runs, 'utf8').trim().split('\n').sort()).toEqual(beads);
    const stored = JSON.parse(readFileSync(database, 'utf8')).issues as Array<{ id: string; status: string }>;
    for (const id of beads) expect(stored.find((issue) => issue.id === id)?.status).toBe('closed');
    const files = cluster.remote(['ls-tree', '--name-only', '001-ralph-automation']);
    for (const id of beads) expect(files).toContain(`${id}.txt`);
    expect(cluster.remote(['for-each-ref', 'refs/ralph/'])).toBe('');
    const summaries = results.map((result) => JSON.parse(result.stdout));
    expect(summaries.reduce((sum, summary) => sum + summary.remote.landedHere, 0)).toBe(4);
  }, 240_000);

  it('beads without a shared database: --remote is refused in one line saying what is needed', async () => {
    sandbox = makeSandbox();
    const { seedBeads, standardEpic } = await import('./helpers.ts');
    seedBeads(sandbox, standardEpic(2));
    cluster = await makeHosts(sandbox, 1);
    const [host] = cluster.hosts as [Sandbox];
    seedBeads(host, standardEpic(2));
    const result = await runRalph(host, ['--remote', 'origin', ...FAST]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--remote with beads needs a bd database every host shares: beads 1\.0\.4 or later in server mode/);
    expect(agentCalls(host)).toHaveLength(0);
  }, 60_000);

  it('joining: the first host creates the branch on the remote, a clone with new commits pushes them, a diverged clone is refused', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    const done = prdStories(1);
    done.userStories[0]!.passes = true;
    prdProject(sandbox, done);
    cluster = await makeHosts(sandbox, 2);
    const [one, two] = cluster.hosts as [Sandbox, Sandbox];
    const git = (box: Sandbox, args: string[]) => execFileSync('git', args, { cwd: box.repo, env: box.env, encoding: 'utf8' });
    git(one, ['checkout', '-q', '-b', 'ralph/next']);
    const created = await runRalph(one, ['--remote', 'origin', ...FAST]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(/origin had no branch ralph\/next: created it at [0-9a-f]{12} \(this clone's\)/);
    expect(cluster.remote(['rev-parse', 'ralph/next'])).toBe(git(one, ['rev-parse', 'HEAD']));
    writeFileSync(path.join(one.repo, 'notes.md'), 'mine\n');
    git(one, ['add', 'notes.md']);
    git(one, ['commit', '-qm', 'a commit of my own']);
    const pushed = await runRalph(one, ['--remote', 'origin', ...FAST]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toMatch(/pushed this clone's new commits on ralph\/next \(up to [0-9a-f]{12}\) to origin/);
    expect(cluster.remote(['log', '-1', '--format=%s', 'ralph/next']).trim()).toBe('a commit of my own');
    // host two: behind on ralph/demo is fine (it moves); a commit of its own while the remote moved is not.
    git(two, ['fetch', '-q', 'origin']);
    git(two, ['checkout', '-q', '-b', 'ralph/next', 'origin/ralph/next~1']);
    writeFileSync(path.join(two.repo, 'other.md'), 'theirs\n');
    git(two, ['add', 'other.md']);
    git(two, ['commit', '-qm', 'a commit of theirs']);
    const refused = await runRalph(two, ['--remote', 'origin', ...FAST]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ralph: this clone's ralph\/next \([0-9a-f]{12}\) and origin\/ralph\/next \([0-9a-f]{12}\) have each moved on: ralph never force-pushes; git pull --rebase origin ralph\/next/m);
    expect(cluster.remote(['log', '-1', '--format=%s', 'ralph/next']).trim()).toBe('a commit of my own');
    // A remote that does not answer at the start is a mistake to fix, said before anything runs.
    git(two, ['remote', 'add', 'nobody', `git://127.0.0.1:${cluster.server.port}/missing.git`]);
    await cluster.server.stop();
    const silent = await runRalph(two, ['--remote', 'nobody', ...FAST]);
    expect(silent.code).toBe(1);
    expect(silent.stderr).toMatch(/--remote nobody \(git:\/\/127\.0\.0\.1:\d+\/missing\.git\) does not answer: fatal: unable to connect/);
    expect(agentCalls(two)).toHaveLength(0);
  }, 120_000);

  it("an agent's own commit of an environment file: not landed, and its kept branch stays in this clone, never pushed", async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(1));
    scenario(sandbox, [
      { match: 'Task: **US-001**', steps: [{ write: { '.env': 'TOKEN=abc123\n', 'story.txt': 'story\n' }, after: [['git', 'add', '.env', 'story.txt'], ['git', 'commit', '-qm', 'story with env']], lines: [report('completed')] }] },
    ]);
    cluster = await makeHosts(sandbox, 1);
    const [host] = cluster.hosts as [Sandbox];
    const result = await runRalph(host, ['--remote', 'origin', '--max-iterations', '1', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/not merged: the agent's own commits add \.env \(an environment file: never committed by ralph\); the work is kept on branch (ralph-kept\/\S+) and the task runs again/);
    const branch = /kept on branch (ralph-kept\/\S+) and/.exec(result.stderr)![1]!;
    expect(execFileSync('git', ['show', `${branch}:.env`], { cwd: host.repo, encoding: 'utf8' })).toBe('TOKEN=abc123\n');
    // Nothing of it on the remote: no kept branch, no object of the agent's commit reachable there.
    expect(cluster.remote(['for-each-ref', 'refs/heads/ralph-kept/'])).toBe('');
    expect(cluster.remote(['log', '--all', '--format=%s'])).not.toMatch(/story with env/);
    expect(cluster.remote(['for-each-ref', 'refs/ralph/'])).toBe('');
  }, 120_000);

  it('--pr with --remote: every landing is already a push; one pull request for the feature, opened once, ready when all is done', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(4));
    symlinkSync(path.join(FAKES, 'gh'), path.join(sandbox.bin, 'gh'));
    sandbox.env.FAKE_GH_LOG = path.join(sandbox.root, 'gh.log');
    sandbox.env.FAKE_GH_STATE = path.join(sandbox.root, 'gh-state.json');
    scenario(sandbox, [1, 2, 3, 4].map((n) => ({ match: `Task: **US-00${n}**`, steps: [{ write: { [`story-${n}.txt`]: `story ${n}\n` }, workMs: 200, lines: [report('completed')] }] })));
    cluster = await makeHosts(sandbox, 2);
    // The remote's default branch, which the pull request goes into.
    cluster.remote(['branch', 'main', cluster.remote(['rev-list', '--max-parents=0', 'ralph/demo']).trim()]);
    cluster.remote(['symbolic-ref', 'HEAD', 'refs/heads/main']);
    for (const host of cluster.hosts) for (const args of [['fetch', '-q', 'origin'], ['remote', 'set-head', 'origin', '--auto']]) execFileSync('git', args, { cwd: host.repo, env: host.env });
    // Every git command the runs make, to see that --pr pushes nothing beside the landings' own pushes.
    const gitLog = path.join(sandbox.root, 'git-calls.log');
    writeFileSync(path.join(sandbox.bin, 'git'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(gitLog)}\nexec /usr/bin/git "$@"\n`, { mode: 0o755 });
    const results = await Promise.all(cluster.hosts.map((host) => runRalph(host, ['--remote', 'origin', '--pr', '--json', ...FAST])));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    for (const result of results) expect(result.stderr).not.toMatch(/could not push/);
    const pushes = readFileSync(gitLog, 'utf8').split('\n').filter((line) => line.startsWith('push '));
    expect(pushes.filter((line) => line.includes('--atomic')).length).toBeGreaterThanOrEqual(4);
    // --pr's own push: only the one at each run's end that makes sure the remote holds its head, never one per landing.
    expect(pushes.filter((line) => /^push --porcelain origin [0-9a-f]{40}:refs\/heads\//.test(line)).length).toBeLessThanOrEqual(cluster.hosts.length);
    const calls = readFileSync(sandbox.env.FAKE_GH_LOG!, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { argv: string[] }).argv.slice(0, 2).join(' '));
    // Opened once: hosts ending at the same moment may both ask GitHub to open it; it opens one and refuses
    // the other, which then updates that one (tests/e2e/pr.test.ts stages that race). Never more than that.
    const creates = calls.filter((call) => call === 'pr create').length;
    expect(creates).toBeGreaterThanOrEqual(1);
    expect(creates).toBeLessThanOrEqual(cluster.hosts.length);
    const said = results.map((result) => result.stderr).join('\n');
    expect(said.match(/which another host opened meanwhile, updated with this run's summary/g) ?? [], said).toHaveLength(creates - 1);
    const state = JSON.parse(readFileSync(sandbox.env.FAKE_GH_STATE!, 'utf8')) as { prs: Array<{ head: string; base: string; isDraft: boolean }> };
    expect(state.prs).toHaveLength(1);
    expect(state.prs[0]).toMatchObject({ head: 'ralph/demo', base: 'main', isDraft: false });
    const summaries = results.map((result) => JSON.parse(result.stdout));
    expect(summaries.reduce((sum, summary) => sum + summary.remote.landedHere, 0)).toBe(4);
  }, 180_000);
});

