// --remote end to end: several hosts (clones on this machine, each with its own ralph) share one feature
// branch through a bare repository served by a real git daemon. Claims are refs on the remote; work lands
// by replay and push.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prdProject, report } from './projects.ts';
import { agentCalls, FAST, makeSandbox, runRalph, type Sandbox } from './helpers.ts';
import { makeHosts, type Hosts } from './hosts.ts';

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
afterEach(async () => {
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});

const stories = (count: number) => ({
  project: 'Demo',
  branchName: 'ralph/demo',
  description: 'demo',
  userStories: Array.from({ length: count }, (_, index) => ({
    id: `US-${String(index + 1).padStart(3, '0')}`,
    title: `Story ${index + 1}`,
    description: 'd',
    acceptanceCriteria: ['works'],
    priority: index + 1,
    passes: false,
    notes: '',
  })),
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

describe('--remote: several hosts on one feature', () => {
  it('PRD: three hosts × two workers finish twelve stories, each once, on a linear remote branch; nothing of ralph left there', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, stories(12));
    scenario(
      sandbox,
      Array.from({ length: 12 }, (_, index) => ({
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
    expect(ran.sort()).toEqual(stories(12).userStories.map((story) => story.id));
    const here = summaries.map((summary) => summary.remote.landedHere);
    expect(here.reduce((a, b) => a + b, 0)).toBe(12);
    expect(here.filter((count) => count > 0).length).toBeGreaterThanOrEqual(2);
    // The remote's branch: linear, every story's file, prd.json with every story passing, history for each.
    const log = cluster.remote(['log', '--format=%P', 'ralph/demo']).trim().split('\n');
    expect(log.every((parents) => parents.split(' ').length <= 1)).toBe(true);
    const files = cluster.remote(['ls-tree', '-r', '--name-only', 'ralph/demo']).split('\n');
    for (let n = 1; n <= 12; n += 1) expect(files).toContain(`story-${n}.txt`);
    const prd = JSON.parse(cluster.remote(['show', 'ralph/demo:prd.json']));
    expect(prd.userStories.every((story: { passes: boolean }) => story.passes)).toBe(true);
    const history = files.filter((file) => /^\.rulebook-ralph\/history\/iteration-\d+\.json$/.test(file));
    expect(history).toHaveLength(12);
    // No claim is left on the remote, and every host's clone is at the remote's head.
    expect(cluster.remote(['for-each-ref', 'refs/ralph/'])).toBe('');
    const head = cluster.remote(['rev-parse', 'ralph/demo']).trim();
    for (const host of cluster.hosts) expect(readFileSync(path.join(host.repo, '.git', 'HEAD'), 'utf8')).toContain('ralph/demo');
    for (const host of cluster.hosts) expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: host.repo, encoding: 'utf8' }).trim()).toBe(head);
  }, 240_000);
});
