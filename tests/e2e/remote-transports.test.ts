// --remote over the transports remotes really use: git://, ssh (an sshd of the test's own) and a path.
// Two hosts race on short stories, so landings meet at the server again and again: every story lands
// exactly once whatever words git prints on stderr around a refused push ("the remote end hung up
// unexpectedly" over ssh and a path), and each landed commit says which host and worker made it.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { prdProject, prdStories, report } from './projects.ts';
import { agentCalls, FAST, makeSandbox, runRalph, type Sandbox } from './helpers.ts';
import { makeHosts, sshd, TRANSPORTS, type Hosts } from './hosts.ts';

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
afterEach(async () => {
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});

// Six stories for four workers (two hosts × two): landings meet at the server in every round.
const STORIES = 6;

/** The agent's calls of one host: the story each one worked on. */
function storiesRun(host: Sandbox): string[] {
  return agentCalls(host).map((call) => /Task: \*\*(US-\d+)\*\*/.exec(`${call.stdin ?? ''} ${call.argv.join(' ')}`)?.[1] ?? '?');
}

describe('--remote over git://, ssh and a path: two hosts racing', () => {
  for (const transport of TRANSPORTS) {
    const skip = transport === 'ssh' && sshd.skip;
    const title = `${transport}: every story lands exactly once, no "does not answer", exit 0 on both, no claim left, each commit names its host`;
    it.skipIf(skip)(transport === 'ssh' ? sshd.title(title) : title, async () => {
      sandbox = makeSandbox({ branch: 'ralph/night' });
      prdProject(sandbox, prdStories(STORIES));
      const file = path.join(sandbox.root, 'scenario.json');
      const byPrompt = Array.from({ length: STORIES }, (_, index) => ({
        match: `Task: **US-${String(index + 1).padStart(3, '0')}**`,
        steps: [{ write: { [`story-${index + 1}.txt`]: `story ${index + 1}\n` }, workMs: 100, lines: [report('completed', `learned ${index + 1}`)] }],
      }));
      writeFileSync(file, JSON.stringify({ byPrompt, steps: [{ lines: [report('failed')] }] }));
      sandbox.env.FAKE_AGENT_SCENARIO = file;
      cluster = await makeHosts(sandbox, 2, transport);
      // A short --remote-wait: a refusal taken for silence ends the run in seconds instead of waiting 30 minutes.
      const results = await Promise.all(cluster.hosts.map((host) => runRalph(host, ['--remote', 'origin', '--parallel', '2', '--lease', '20s', '--remote-wait', '20s', '--json', ...FAST])));
      for (const result of results) {
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).not.toMatch(/does not answer|did not answer/);
      }
      const ran = cluster.hosts.flatMap(storiesRun);
      expect(ran.sort()).toEqual(prdStories(STORIES).userStories.map((story) => story.id));
      const landed = results.map((result) => JSON.parse(result.stdout).remote.landedHere as number);
      expect(landed.reduce((a, b) => a + b, 0)).toBe(STORIES);
      expect(cluster.remote(['for-each-ref', 'refs/ralph/'])).toBe('');
      const prd = JSON.parse(cluster.remote(['show', 'ralph/night:prd.json']));
      expect(prd.userStories.every((story: { passes: boolean }) => story.passes)).toBe(true);
      // Who did what: each story's commit names its task, its worker and its host (the one whose agent ran it).
      const log = cluster.remote(['log', '--format=%(trailers:key=Ralph-Task,valueonly,separator=%x2C)|%(trailers:key=Ralph-Worker,valueonly,separator=%x2C)|%(trailers:key=Ralph-Host,valueonly,separator=%x2C)', 'ralph/night']);
      const byTask = new Map(log.split('\n').filter((line) => line.startsWith('US-')).map((line) => line.split('|') as [string, string, string]).map(([task, worker, host]) => [task, { worker: worker.trim(), host: host.trim() }]));
      expect(byTask.size).toBe(STORIES);
      cluster.hosts.forEach((host, index) => {
        for (const story of storiesRun(host)) expect(byTask.get(story), story).toEqual({ worker: expect.stringMatching(/^w[12]$/), host: `host${index + 1}` });
      });
      const head = cluster.remote(['rev-parse', 'ralph/night']).trim();
      for (const host of cluster.hosts) expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: host.repo, encoding: 'utf8' }).trim()).toBe(head);
    }, 240_000);
  }
});
