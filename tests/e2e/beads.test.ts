import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_BD_VERSIONS, type FakeBdVersion } from '../fakes/bd-seed.ts';
import { agentCalls, agentPids, bdCalls, closeStep, FAST, makeSandbox as makeBareSandbox, pidAlive, readBeads, runRalph, scenario, seedBeads, signalRalph, standardEpic, startRalph, waitFor, type Sandbox, type SandboxOptions } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const statusOf = (box: Sandbox, id: string) => readBeads(box).find((issue) => issue.id === id)?.status;
/** ralph's own bd calls, as command words (`ready`, `list`, …): the fake agent's closes and claims left out. */
const ralphBdWords = (box: Sandbox): string[] =>
  bdCalls(box)
    .filter((argv) => argv[0] !== 'close' && !argv.includes('--claim'))
    .map((argv) => (argv[0] === 'list' ? (argv.includes('--type') ? 'list-epics' : 'list') : argv[0] === 'ready' && argv.includes('--exclude-type') ? 'ready-exclude' : argv[0]!));

// The suite runs against the fake bd behaving like beads 0.50 and like 1.x (FAKE_BD_VERSION): a test
// runs against the default (1.x) unless its describe.each sets another.
let version: FakeBdVersion = '1.x';
beforeEach(() => {
  version = '1.x';
});
function makeSandbox(options: SandboxOptions = {}): Sandbox {
  const box = makeBareSandbox(options);
  box.env.FAKE_BD_VERSION = version;
  return box;
}
const lockPath = (box: Sandbox) => path.join(box.repo, '.ralph.lock');

describe.each(FAKE_BD_VERSIONS)('beads mode, end to end, bd %s', (bdVersion) => {
  beforeEach(() => {
    version = bdVersion;
  });

  it('works through the epic task by task and exits 0 with a JSON summary', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(3));
    scenario(sandbox, [closeStep('ws-9w6.2'), closeStep('ws-9w6.3'), closeStep('ws-9w6.4')]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ status: 'completed', exitCode: 0, iterations: 3, tasksCompleted: 3, tasksRemaining: 0 });
    expect(summary.startedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((summary.records as Array<{ taskId: string; outcome: string }>).map((r) => [r.taskId, r.outcome])).toEqual([
      ['ws-9w6.2', 'pass'],
      ['ws-9w6.3', 'pass'],
      ['ws-9w6.4', 'pass'],
    ]);
    // The agent got exactly the ralph.sh command, the prompt on stdin, and no nested-session variables.
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(3);
    expect(calls[0]!.argv).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
    expect(calls[0]!.stdin).toBe('/sp:next');
    expect(calls[0]!.env.CLAUDECODE).toBeUndefined();
    // ralph asked bd only through its CLI with --json and --limit 0; a bd without --exclude-type (0.50) is
    // asked once with it, then without it for the rest of the run.
    const ready = bdCalls(sandbox).filter((argv) => argv[0] === 'ready');
    expect(ready[0]).toEqual(['ready', '--parent', 'ws-9w6', '--limit', '0', '--exclude-type', 'epic', '--json']);
    if (bdVersion === '0.50') expect(ready.slice(1).every((argv) => !argv.includes('--exclude-type'))).toBe(true);
    else expect(ready.every((argv) => argv.includes('--exclude-type'))).toBe(true);
    expect(bdCalls(sandbox).every((argv) => argv.includes('--json'))).toBe(true);
    // Two bd calls an iteration: bd ready before it, bd list after it; the run ends on a fresh list.
    const ready1 = bdVersion === '0.50' ? ['ready-exclude', 'ready'] : ['ready-exclude'];
    const readyN = bdVersion === '0.50' ? ['ready'] : ['ready-exclude'];
    expect(ralphBdWords(sandbox)).toEqual(['list-epics', 'list', 'list', ...ready1, 'list', ...readyN, 'list', ...readyN, 'list', ...readyN, 'list']);
    // Plain timestamped lines off a TTY, no control codes; iteration lines and summaries.
    expect(result.stderr).not.toMatch(/\u001b\[/);
    expect(result.stderr).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d iteration 1\/50: ws-9w6\.2 Task 1: build part 1$/m);
    expect(result.stderr).toMatch(/iteration 1 ws-9w6\.2: pass in /);
    expect(result.stderr).toMatch(/completed: all tasks of epic ws-9w6/);
    // Raw stream kept per iteration; lock released.
    const sessions = readdirSync(path.join(sandbox.repo, '.ralph', 'logs'));
    expect(readFileSync(path.join(sandbox.repo, '.ralph', 'logs', sessions[0]!, 'iteration-1.jsonl'), 'utf8')).toContain('"type":"result"');
    expect(existsSync(lockPath(sandbox))).toBe(false);
    // ralph's own files are kept out of git without touching the project's .gitignore.
    expect(readFileSync(path.join(sandbox.repo, '.git', 'info', 'exclude'), 'utf8')).toMatch(/^\/\.ralph\.lock$[\s\S]*^\/\.ralph\/$/m);
  });

  it('exits 1 explaining why nothing is ready when work remains', async () => {
    sandbox = makeSandbox();
    const issues = standardEpic(2);
    issues.push({ id: 'ws-x1', title: 'Outside blocker', priority: 1 });
    issues[2]!.dependencies = ['ws-x1'];
    seedBeads(sandbox, issues);
    const result = await runRalph(sandbox, FAST);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no task of epic ws-9w6 .* is ready; 2 remain/);
    expect(result.stderr).toMatch(/ws-9w6\.2 "Task 1: build part 1" \(open, waits for ws-x1\)/);
    expect(agentCalls(sandbox)).toHaveLength(0);
  });

  it('--dry-run explains the run without taking the lock, running the agent or writing files', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    const result = await runRalph(sandbox, ['--dry-run', '--model', 'opus']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('source: beads, epic ws-9w6 "Feature: ralph-automation"');
    expect(result.stdout).toMatch(/1\. ws-9w6\.2 Task 1: build part 1/);
    expect(result.stdout).toContain('agent: claude -p --output-format stream-json --verbose --dangerously-skip-permissions --model opus < prompt on stdin');
    expect(result.stdout).toContain('  | /sp:next');
    expect(result.stdout).toContain('lock: free');
    expect(agentCalls(sandbox)).toHaveLength(0);
    expect(existsSync(path.join(sandbox.repo, '.ralph'))).toBe(false);
    expect(bdCalls(sandbox).some((argv) => ['update', 'close'].includes(argv[0]!))).toBe(false);
    // At most 4 bd calls: the epics, the children, bd ready (and, on a bd without --exclude-type, once more).
    expect(ralphBdWords(sandbox)).toEqual(bdVersion === '0.50' ? ['list-epics', 'list', 'ready-exclude', 'ready'] : ['list-epics', 'list', 'ready-exclude']);
  });

  it('says an epic given with --epic does not exist, in bd\'s plural wording too', async () => {
    sandbox = makeSandbox({ branch: 'main' });
    seedBeads(sandbox, standardEpic(1));
    const result = await runRalph(sandbox, ['--epic', 'ws-nope', '--dry-run']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('✗ epic ws-nope (from --epic) does not exist in beads');
    expect(bdCalls(sandbox)).toEqual([['show', 'ws-nope', '--json']]);
  });
});

describe('beads mode, end to end: what does not depend on the bd version', () => {
  // The iteration limit, the prerequisite checks, the clarify gate, a dry run that could not start and a task
  // an interrupted run left in_progress: ralph reads and writes bd the same way for both versions here (the
  // full run, blocked tasks, the dry run's calls and a missing epic above do differ), so they run once, against
  // the default (1.x).

  it('exits 2 at the iteration limit with tasks remaining', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(3));
    scenario(sandbox, [closeStep('ws-9w6.2'), closeStep('ws-9w6.3')]);
    const result = await runRalph(sandbox, ['--max-iterations', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'limit_reached', iterations: 2, tasksCompleted: 2, tasksRemaining: 1 });
    expect(statusOf(sandbox, 'ws-9w6.4')).toBe('open');
  });

  it('reports every failed prerequisite, then exits 1 without touching anything', async () => {
    sandbox = makeSandbox({ branch: '007-unknown-feature', bd: true, agents: [] });
    seedBeads(sandbox, standardEpic(1, 'open'));
    const result = await runRalph(sandbox, FAST);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/✗ agent CLI 'claude' not found on PATH/);
    expect(result.stderr).toMatch(/✗ no epic titled "Feature: unknown-feature" \(from branch 007-unknown-feature\)/);
    expect(existsSync(lockPath(sandbox))).toBe(false);
    expect(existsSync(path.join(sandbox.repo, '.ralph'))).toBe(false);
  });

  it('refuses to start while the clarify phase is open, and finds the epic with --epic', async () => {
    sandbox = makeSandbox({ branch: 'main' });
    seedBeads(sandbox, standardEpic(1, 'in_progress'));
    const result = await runRalph(sandbox, ['--epic', 'ws-9w6', ...FAST]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/clarify phase ws-9w6\.1 "\[sp:02-clarify\] Clarify the spec" is in_progress, not closed/);
  });

  it('--dry-run exits 1 when a real run could not start', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1, 'open'));
    const result = await runRalph(sandbox, ['--dry-run']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ clarify phase/);
  });

});

describe("the agent's failures, the settings and the command line, in beads mode", () => {
  // Retries, a crash, the root refusal, where the limit is read from, the branch's feat/ prefix and argv
  // errors: nothing these check comes from bd, so they run once, against the default (1.x).

  it('reads the limit from RALPH_MAX_ITERATIONS and ralph.config.json, flags first', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(3));
    writeFileSync(path.join(sandbox.repo, 'ralph.config.json'), JSON.stringify({ maxIterations: 3, retryDelay: '10ms' }));
    scenario(sandbox, [closeStep('ws-9w6.2'), closeStep('ws-9w6.3')]);
    const result = await runRalph(sandbox, ['--json'], { RALPH_MAX_ITERATIONS: '1' });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).iterations).toBe(1);
  });

  it('retries a failing agent with backoff, then succeeds in the same iteration', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'claude-429.jsonl', exit: 1 }, { replay: 'claude-529.jsonl', exit: 1 }, closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox)).toHaveLength(3);
    const summary = JSON.parse(result.stdout);
    expect(summary.iterations).toBe(1);
    expect(summary.records[0]).toMatchObject({ attempts: 3, outcome: 'pass' });
    expect(result.stderr).toMatch(/attempt 1 failed \(transient\): API Error: Request rejected \(429\)/);
    expect(result.stderr).toMatch(/backing off \d+ms before attempt 2/);
  });

  it('exits 1 once the retries are spent', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'claude-500.jsonl', exit: 1 }]);
    const result = await runRalph(sandbox, ['--retries', '3', '--json', ...FAST]);
    expect(result.code).toBe(1);
    expect(agentCalls(sandbox)).toHaveLength(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', exitCode: 1 });
    expect(result.stderr).toMatch(/agent still failing after 3 attempts: API Error: 500/);
    expect(existsSync(lockPath(sandbox))).toBe(false);
  });

  it('treats a run that ends without a result as transient (crash)', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'claude-429-retry.jsonl', exit: 0 }, closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/ended without a result/);
  });

  it('stops at once with a hint when claude refuses to skip permissions as root', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    const env = { ...sandbox.env };
    delete env.IS_SANDBOX;
    sandbox.env = env;
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code).toBe(1);
    if (process.getuid?.() === 0) {
      // Found before the first agent (the dry run says the same), with the open task still counted.
      expect(agentCalls(sandbox)).toHaveLength(0);
      expect(result.stderr).toContain('ralph: ✗ claude refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1: run ralph as a normal user, or set IS_SANDBOX=1 where the agent is contained');
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', tasksRemaining: 1, problems: [expect.stringMatching(/^claude refuses --dangerously-skip-permissions as root/)] });
      const plan = await runRalph(sandbox, ['--dry-run']);
      expect(plan.code).toBe(1);
      expect(plan.stdout).toMatch(/✗ claude refuses --dangerously-skip-permissions as root[\s\S]*a real run could not start: 1 problem/);
    }
  });

  // claude refuses only root: as another user there is nothing to find.
  it.skipIf(process.getuid?.() !== 0)('asks the same of a --fallback claude and a --review claude as root, naming which', async () => {
    sandbox = makeSandbox({ agents: ['codex', 'claude'] });
    seedBeads(sandbox, standardEpic(1));
    const env = { ...sandbox.env };
    delete env.IS_SANDBOX;
    sandbox.env = env;
    const result = await runRalph(sandbox, ['--agent', 'codex', '--fallback', 'claude', '--review', 'claude:opus', ...FAST]);
    expect(result.code).toBe(1);
    expect(agentCalls(sandbox)).toHaveLength(0);
    expect(result.stderr).toContain('ralph: ✗ the fallback claude (--fallback): claude refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1');
    expect(result.stderr).toContain('ralph: ✗ the reviewer (--review claude:opus): claude refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1');
  });

  it('exits 1 with a one-line error for an unknown flag or bad value', async () => {
    sandbox = makeSandbox();
    const unknown = await runRalph(sandbox, ['--max-iteration', '3']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.split('\n')[0]).toBe('ralph: unknown option --max-iteration');
    const bad = await runRalph(sandbox, ['--retry-delay', 'soon']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.split('\n')[0]).toBe('ralph: --retry-delay: invalid value "soon": expected a duration such as 250ms, 30s, 5m or 2h');
    const env = await runRalph(sandbox, [], { RALPH_RETRIES: 'x' });
    expect(env.stderr.split('\n')[0]).toBe('ralph: RALPH_RETRIES: invalid value "x": expected a whole number');
  });
});

describe('the lock', () => {
  // Lock and signal handling do not depend on the bd version: these run once, against the default (1.x).

  it('a second run exits 1 naming the holder; the first finishes normally', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    // The first run's agent waits until the second ralph has exited, so the lock is held throughout, whatever
    // the machine's speed (a fixed delay let the first run finish before a slow second one started).
    const release = path.join(sandbox.root, 'release');
    scenario(sandbox, [{ ...closeStep('ws-9w6.2'), waitFile: release }]);
    const first = startRalph(sandbox, FAST);
    try {
      await waitFor(() => agentCalls(sandbox).length === 1, 20_000, 'first run to start its agent');
      const second = await runRalph(sandbox, FAST);
      expect(second.code, second.stderr).toBe(1);
      const holder = readFileSync(lockPath(sandbox), 'utf8').split('\n');
      expect(second.stderr).toContain(`another ralph holds ${lockPath(sandbox)} (PID ${holder[0]}, started ${holder[1]}, branch 001-ralph-automation)`);
    } finally {
      writeFileSync(release, '');
    }
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
  });

  // One run after a killed one checks three things: the stale lock it left, the task it left in_progress and,
  // the branch named feat/001-…, that a feat/ prefix is tolerated.
  it('reclaims a stale lock left by a killed run, with a warning; puts a task it left in_progress back to open, with a warning; tolerates a feat/ prefix on the branch', async () => {
    sandbox = makeSandbox({ branch: 'feat/001-ralph-automation' });
    const issues = standardEpic(1);
    issues[2]!.status = 'in_progress';
    seedBeads(sandbox, issues);
    writeFileSync(lockPath(sandbox), '999999\n2026-11-21T23:00:00.000Z\n001-ralph-automation\n');
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/warning: reclaiming a stale lock .*PID 999999/);
    expect(existsSync(lockPath(sandbox))).toBe(false);
    expect(result.stderr).toMatch(/warning: ws-9w6\.2 "Task 1: build part 1" was left in_progress by an interrupted run; put back to open/);
    expect(bdCalls(sandbox)).toContainEqual(['update', 'ws-9w6.2', '--status', 'open', '--json']);
  });
});

describe('signals', () => {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
    it(`${signal} mid-iteration kills the agent tree, releases the lock and exits ${code}`, async () => {
      sandbox = makeSandbox();
      seedBeads(sandbox, standardEpic(2));
      scenario(sandbox, [{ replay: 'claude-ok.jsonl', hang: true, ignoreTerm: true, grandchild: true, marker: 'AGENT-STARTED' }]);
      const run = startRalph(sandbox, ['--json', ...FAST]);
      await waitFor(() => agentPids(sandbox).length >= 2, 20_000, 'agent and grandchild');
      await waitFor(() => existsSync(lockPath(sandbox)), 5000, 'lock');
      signalRalph(sandbox, signal);
      const result = await run.done;
      expect(result.code, result.stderr).toBe(code);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'interrupted', exitCode: code, tasksRemaining: 2 });
      expect(existsSync(lockPath(sandbox))).toBe(false);
      for (const pid of agentPids(sandbox)) expect(pidAlive(pid), `pid ${pid}`).toBe(false);
      expect(result.stderr).toMatch(/interrupted: interrupted by/);
    });
  }

  it('a second Ctrl+C forces the exit at once', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [{ replay: 'claude-ok.jsonl', hang: true, ignoreTerm: true }]);
    const run = startRalph(sandbox, ['--kill-grace', '30s']);
    await waitFor(() => agentPids(sandbox).length >= 1, 20_000, 'agent');
    signalRalph(sandbox, 'SIGINT');
    // The second signal only after ralph took the first (two sent at once can arrive as one).
    await waitFor(() => run.output().stderr.includes('ralph: SIGINT received: stopping (again to force)'), 20_000, 'ralph to take the first SIGINT');
    const started = Date.now();
    signalRalph(sandbox, 'SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(existsSync(lockPath(sandbox))).toBe(false);
    // SIGKILL was sent before ralph exited; give the kernel a moment to finish the kill under load.
    await waitFor(() => agentPids(sandbox).every((pid) => !pidAlive(pid)), 3000, 'agent to die');
  });
});

describe.each(FAKE_BD_VERSIONS)('retries in beads mode, bd %s', (bdVersion) => {
  beforeEach(() => {
    version = bdVersion;
  });

  it('reopens the task a failed attempt left in_progress so the retry can pick it up', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [
      { run: [['bd', 'update', 'ws-9w6.2', '--claim', '--json']], replay: 'claude-529.jsonl', exit: 1 },
      closeStep('ws-9w6.2'),
    ]);
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/ws-9w6\.2 "Task 1: build part 1" was left in_progress by the failed attempt; put back to open/);
    expect(statusOf(sandbox, 'ws-9w6.2')).toBe('closed');
  });
});
