// --remote as people see it: `ralph status`, `--dry-run`, `ralph serve`, the run's last lines and its
// report, on hosts that share a feature branch through a real `git daemon` (tests/e2e/hosts.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prdProject, report } from './projects.ts';
import { FAST, makeSandbox, runRalph, startRalph, waitFor, type Sandbox } from './helpers.ts';
import { launchChromium, type Browser, type Page } from './cdp.ts';
import { needsTool } from '../support/needs-tool.ts';
import { makeHosts, type Hosts } from './hosts.ts';

const chromium = needsTool('chromium', { bins: ['chromium', 'chromium-browser'] });

let sandbox: Sandbox | undefined;
let cluster: Hosts | undefined;
const cleanups: Array<() => void | Promise<void>> = [];
let browser: Browser | undefined;
afterEach(async () => {
  browser?.close();
  browser = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await cluster?.stop();
  sandbox?.cleanup();
  cluster = undefined;
  sandbox = undefined;
});

const stories = (count: number) => ({
  project: 'Demo',
  branchName: 'ralph/demo',
  description: 'demo',
  userStories: Array.from({ length: count }, (_, index) => ({ id: `US-00${index + 1}`, title: `Story ${index + 1}`, description: 'd', acceptanceCriteria: ['works'], priority: index + 1, passes: false, notes: '' })),
});

/** Three stories; US-001's agent works until `release` exists. */
function project(box: Sandbox, release: string): void {
  prdProject(box, stories(3));
  const done = (n: number) => ({ write: { [`story-${n}.txt`]: `story ${n}\n` }, lines: [report('completed', `learned ${n}`)] });
  const file = path.join(box.root, 'scenario.json');
  writeFileSync(
    file,
    JSON.stringify({
      byPrompt: [
        { match: 'Task: **US-001**', steps: [{ waitFile: release, ...done(1) }] },
        { match: 'Task: **US-002**', steps: [done(2)] },
        { match: 'Task: **US-003**', steps: [done(3)] },
      ],
      steps: [{ lines: [report('failed')] }],
    }),
  );
  box.env.FAKE_AGENT_SCENARIO = file;
}

const passing = (hosts: Hosts): string[] => (JSON.parse(hosts.remote(['show', 'ralph/demo:prd.json'])) as ReturnType<typeof stories>).userStories.filter((story) => story.passes).map((story) => story.id);
const git = (host: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: host.repo, encoding: 'utf8' });

type Shown = { remote: { claims: Array<{ task: string; host: string }>; landed: string | null; error: string | null } | null };

/** `ralph serve` on `host`, stopped after the test by its own PID (as Ctrl+C would, not through tsx's wrapper); its URL. */
async function startServe(host: Sandbox, args: string[]): Promise<string> {
  const serve = startRalph(host, ['serve', '--port', '0', ...args]);
  const servePid = (): number => Number(/ralph serve \(PID (\d+)\)/.exec(serve.output().stderr)?.[1]);
  cleanups.push(async () => {
    if (servePid()) process.kill(servePid(), 'SIGINT');
    else serve.child.kill('SIGINT');
    await serve.done;
  });
  await waitFor(() => /^http:\/\/\S+\n/.test(serve.output().stdout) && servePid() > 0, 30_000, 'ralph serve to listen');
  return serve.output().stdout.split('\n')[0]!;
}

/** The state `ralph serve` at `url` sends, once `check` holds. */
async function serveState(url: string, check: (state: Shown) => boolean): Promise<Shown> {
  let state: Shown | undefined;
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    state = (await (await fetch(`${url}api/state`)).json()) as Shown;
    if (check(state)) return state;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`ralph serve never showed what was expected: ${JSON.stringify(state?.remote)}`);
}

/** What the live page shows of the remote, in a real browser. */
const LOOK = `(() => {
  const section = document.getElementById('remote-section');
  if (document.readyState === 'loading' || !section) return null;
  return { hidden: section.hidden, title: document.getElementById('remote-title').textContent, line: document.getElementById('remote-line').textContent, claims: [...document.querySelectorAll('#claims tr[data-claim]')].map((row) => [...row.cells].map((cell) => cell.textContent)) };
})()`;
type Look = { hidden: boolean; title: string; line: string; claims: string[][] };

async function waitForPage(page: Page, check: (seen: Look) => boolean, what: string): Promise<Look> {
  let last: Look | null = null;
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    last = await page.evaluate<Look | null>(LOOK);
    if (last && check(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for the page to show ${what}; last seen: ${JSON.stringify(last)}`);
}

describe('--remote: what status, the dry run, serve and the summaries show', () => {
  it("another host's live claim in status, the dry run and serve; each host's summary, end line and report say who landed what", async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    const release = path.join(sandbox.root, 'us-001.release');
    project(sandbox, release);
    cluster = await makeHosts(sandbox, 2);
    const [host1, host2] = cluster.hosts as [Sandbox, Sandbox];
    const run1 = startRalph(host1, ['--remote', 'origin', '--lease', '20s', '--json', ...FAST]);
    cleanups.push(async () => {
      writeFileSync(release, '');
      run1.child.kill('SIGINT');
      await run1.done;
    });
    // The fake agent logs its call before it waits for `release`: host1 holds US-001's claim from then on.
    const working = () => existsSync(host1.agentLog) && readFileSync(host1.agentLog, 'utf8').includes('Task: **US-001**');
    await waitFor(() => working() || run1.child.exitCode !== null, 60_000, 'host1 to start US-001');
    expect(working(), run1.output().stderr).toBe(true);

    // status on host2: host1's claim, by name; its --json; nothing about a remote without --remote.
    const status = await runRalph(host2, ['status', '--remote', 'origin']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/\nclaims on origin\/ralph\/demo:\n {2}US-001 held by host1 \(pid \d+, \S+host1\) since \d\d:\d\d:\d\d \([\d.ms ]+ ago\), renewed [\d.ms ]+ ago\n/);
    expect(status.stdout).not.toContain('expired');
    const json = JSON.parse((await runRalph(host2, ['status', '--remote', 'origin', '--json'])).stdout);
    expect(json.remote).toMatchObject({ name: 'origin', branch: 'ralph/demo', claims: [{ task: 'US-001', host: 'host1', expired: false }] });
    expect(json.remote.error).toBeUndefined();
    expect(Date.parse(json.remote.claims[0].since)).toBeLessThanOrEqual(Date.now());
    const plain = await runRalph(host2, ['status', '--json']);
    expect(JSON.parse(plain.stdout).remote).toBeUndefined();
    // RALPH_REMOTE configures it as well as the flag.
    expect((await runRalph(host2, ['status'], { RALPH_REMOTE: 'origin' })).stdout).toContain('US-001 held by host1');

    // The dry run on host2: the remote, the branch's head, the claim, and the first tasks without US-001.
    const head = cluster.remote(['rev-parse', 'ralph/demo']).trim();
    // By name: host1 renews its claim (a new commit) every third of its lease.
    const claimRefs = cluster.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/']);
    const dry = await runRalph(host2, ['--dry-run', '--remote', 'origin', '--parallel', '2']);
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain('remote: origin, shared branch ralph/demo; this host is host2');
    expect(dry.stdout).toContain(`origin/ralph/demo is at ${head.slice(0, 12)} (this clone's HEAD)`);
    expect(dry.stdout).toMatch(/ {4}US-001 held by host1 /);
    // Both free stories, in the order this host reads them (from a place of its own).
    const first = /first tasks this host would take: (US-00\d) Story \d; (US-00\d) Story \d/.exec(dry.stdout);
    expect(first?.slice(1).sort()).toEqual(['US-002', 'US-003']);
    expect(dry.stdout).toContain(`  w1: ${first![1]} Story ${first![1]!.slice(-1)}\n  w2: ${first![2]} Story ${first![2]!.slice(-1)}`);
    const dryJson = JSON.parse((await runRalph(host2, ['--dry-run', '--remote', 'origin', '--json'])).stdout);
    expect(dryJson.remote).toMatchObject({ name: 'origin', branch: 'ralph/demo', host: 'host2', head, exists: true, claimsIn: 'refs', claims: [{ task: 'US-001', host: 'host1' }], first: [{ id: expect.stringMatching(/^US-00[23]$/) }] });
    // Nothing was written: not on the remote, not in the run's own mirror of the claims, not in the clone.
    expect(cluster.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/'])).toBe(claimRefs);
    expect(git(host2, ['for-each-ref', 'refs/ralph-seen/'])).toBe('');
    expect(git(host2, ['status', '--porcelain'])).toBe('');

    // ralph serve on host2 (no run there: the remote --remote names) shows the claim too.
    await serveState(await startServe(host2, ['--remote', 'origin']), (state) => state.remote?.claims.some((claim) => claim.task === 'US-001' && claim.host === 'host1') ?? false);

    // host2 works on what is left while host1 holds US-001; then US-001 lands.
    const run2 = startRalph(host2, ['--remote', 'origin', '--lease', '20s', '--json', ...FAST]);
    await waitFor(() => passing(cluster!).length === 2, 90_000, 'host2 to land US-002 and US-003');
    writeFileSync(release, '');
    const [result1, result2] = await Promise.all([run1.done, run2.done]);
    expect(result1.code, result1.stderr).toBe(0);
    expect(result2.code, result2.stderr).toBe(0);
    const summary1 = JSON.parse(result1.stdout);
    const summary2 = JSON.parse(result2.stdout);
    expect(summary1.remote).toEqual({ name: 'origin', branch: 'ralph/demo', host: 'host1', landedHere: 1, landedElsewhere: 2 });
    expect(summary2.remote).toEqual({ name: 'origin', branch: 'ralph/demo', host: 'host2', landedHere: 2, landedElsewhere: 1 });
    expect(result1.stderr).toContain('landed here 1 (US-001), by other hosts 2 on origin/ralph/demo\n');
    expect(result2.stderr).toContain('landed here 2 (US-002, US-003), by other hosts 1 on origin/ralph/demo\n');
    const reports = path.join(host1.repo, '.ralph', 'reports');
    const markdown = readFileSync(path.join(reports, `${summary1.sessionId}.md`), 'utf8');
    expect(markdown).toContain('| **remote** | landed here 1 (US-001), by other hosts 2 on origin/ralph/demo; this host: host1 |');
    expect(readFileSync(path.join(reports, `${summary1.sessionId}.html`), 'utf8')).toContain('<dt>remote</dt><dd>landed here 1 (US-001), by other hosts 2 on origin/ralph/demo; this host: host1</dd>');
    expect(readdirSync(reports)).toHaveLength(2);

    // Every claim is gone now.
    expect((await runRalph(host1, ['status', '--remote', 'origin'])).stdout).toContain('claims on origin/ralph/demo: none\n');
  }, 240_000);

  it.skipIf(chromium.skip)(chromium.title("ralph serve beside a run with --remote shows the run's claims on its page, then who landed what"), async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    const release = path.join(sandbox.root, 'us-001.release');
    project(sandbox, release);
    cluster = await makeHosts(sandbox, 1);
    const [host] = cluster.hosts as [Sandbox];
    const run = startRalph(host, ['--remote', 'origin', '--json', ...FAST]);
    cleanups.push(async () => {
      writeFileSync(release, '');
      run.child.kill('SIGINT');
      await run.done;
    });
    await waitFor(() => existsSync(host.agentLog) && readFileSync(host.agentLog, 'utf8').includes('Task: **US-001**'), 60_000, 'the run to start US-001');
    // No --remote for serve: the remote is the one the run shown works with (its session_start says it).
    const url = await startServe(host, []);
    browser = launchChromium(chromium.bin(), sandbox.root);
    const page = await browser.open(url, { width: 1200, height: 900 });
    const live = await waitForPage(page, (seen) => !seen.hidden && seen.claims.length > 0, 'the claim');
    expect(live.title).toBe('Claims on origin/ralph/demo');
    expect(live.claims).toHaveLength(1);
    const [task, holder, since, renewed, state] = live.claims[0]!;
    expect(task).toBe('US-001');
    expect(holder).toMatch(/^host1 \(pid \d+\)$/);
    expect(since).toMatch(/^\d\d:\d\d:\d\d \(\d+s ago\)$/);
    expect(renewed).toMatch(/^\d+s ago$/);
    expect(state).toBe('');
    writeFileSync(release, '');
    expect((await run.done).code).toBe(0);
    const ended = await waitForPage(page, (seen) => seen.line.includes('landed here'), 'who landed what');
    // In the order they landed (hosts read the startable stories from a place of their own).
    const landed = /^landed here 3 \((US-00\d), (US-00\d), (US-00\d)\), by other hosts 0 on origin\/ralph\/demo$/.exec(ended.line);
    expect(landed, ended.line).not.toBeNull();
    expect(landed!.slice(1).sort()).toEqual(['US-001', 'US-002', 'US-003']);
    await waitForPage(page, (seen) => seen.claims.length === 0, 'no claim left');
  }, 180_000);

  it('a remote that does not answer, or never says anything, or is not there: one line, exit 0, no hang', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    project(sandbox, path.join(sandbox.root, 'unused'));
    cluster = await makeHosts(sandbox, 1);
    const [host] = cluster.hosts as [Sandbox];
    await cluster.stop();

    const refused = await runRalph(host, ['status', '--remote', 'origin']);
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stdout).toMatch(/\nclaims on origin\/ralph\/demo: cannot be read: origin does not answer \(.+\)\n/);
    expect(refused.stdout).toContain('tasks (prd');
    const json = JSON.parse((await runRalph(host, ['status', '--remote', 'origin', '--json'])).stdout);
    expect(json.remote).toMatchObject({ name: 'origin', branch: 'ralph/demo', claims: [] });
    expect(json.remote.error).toMatch(/^origin does not answer/);
    // The dry run: the preflight already finds the remote silent (a problem to fix before a run starts).
    const dry = await runRalph(host, ['--dry-run', '--remote', 'origin']);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toMatch(/\n✗ --remote origin \(.+\) does not answer: /);
    expect(dry.stdout).not.toContain('first tasks this host would take');

    // A server that takes the connection and never answers: the look gives up after its timeout.
    // It reads what git sends (so it sees git hang up) and never answers.
    const silent = net.createServer((socket) => void socket.resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
    git(host, ['remote', 'set-url', 'origin', `git://127.0.0.1:${(silent.address() as net.AddressInfo).port}/feature.git`]);
    const began = Date.now();
    const hung = await runRalph(host, ['status', '--remote', 'origin']);
    expect(hung.code, hung.stderr).toBe(0);
    expect(hung.stdout).toMatch(/claims on origin\/ralph\/demo: cannot be read: origin does not answer \(.*timed out.*\)/);
    expect(Date.now() - began).toBeLessThan(40_000);

    const missing = await runRalph(host, ['status', '--remote', 'upstream']);
    expect(missing.code).toBe(0);
    expect(missing.stdout).toContain('claims on upstream/ralph/demo: cannot be read: this repository has no remote named upstream (git remote -v lists them; git remote add upstream URL)');
  }, 120_000);
});
