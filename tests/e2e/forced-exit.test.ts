// A forced exit (a second Ctrl+C while the first waits for an agent that ignores SIGTERM): the agents are
// killed and the lock dropped at once, and the journal's end is written then too (synchronously), with the
// work in the tree at that moment. The next plain start puts the task back as after a clean end, said as
// news rather than as a crash, takes the killed iteration's work with the task, and leaves what the user
// changed after the forced exit out of ralph's commits.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, agentPids, FAST, makeSandbox, pidAlive, readBeads, runRalph, scenario, seedBeads, signalRalph, standardEpic, startRalph, waitFor, type Sandbox } from './helpers.ts';
import { prdHistory, prdProject, prdStories, report } from './projects.ts';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.cleanup());

const git = (box: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: box.repo, encoding: 'utf8' });

describe('a forced exit (Ctrl+C twice)', () => {
  it('the next start puts its task back quietly, adopts its work with the task, and leaves what the user changed since alone', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prdStories(2));
    const started = path.join(sandbox.root, 'started');
    const file = path.join(sandbox.root, 'scenario.json');
    // US-001's first attempt writes half its work, then hangs deaf to SIGTERM; every later attempt finishes.
    const story = (n: number, first: unknown[]) => ({ match: `Task: **US-00${n}**`, steps: [...first, { write: { [`work/US-00${n}.txt`]: `US-00${n} done\n` }, lines: [report('completed')] }] });
    writeFileSync(file, JSON.stringify({ byPrompt: [story(1, [{ write: { 'work/US-001.txt': 'half\n', 'work/US-001-notes.txt': 'notes\n' }, touch: started, hang: true, ignoreTerm: true }]), story(2, [])], steps: [{ lines: [report('failed')] }] }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    const run = startRalph(sandbox, [...FAST, '--kill-grace', '30s']);
    await waitFor(() => existsSync(started), 20_000, 'the agent to start');
    signalRalph(sandbox, 'SIGINT');
    await waitFor(() => run.output().stderr.includes('SIGINT received: stopping (again to force)'), 20_000, 'ralph to take the first SIGINT');
    signalRalph(sandbox, 'SIGINT');
    const forced = await run.done;
    expect(forced.code, forced.stderr).toBe(130);
    expect(forced.stderr).toMatch(/SIGINT again: forcing exit/);
    expect(existsSync(path.join(sandbox.repo, '.ralph.lock'))).toBe(false);
    await waitFor(() => agentPids(sandbox!).every((pid) => !pidAlive(pid)), 5000, 'the agent to be gone');
    // The user changes a file of theirs after the forced exit, and adds one: theirs, not the killed run's work.
    writeFileSync(path.join(sandbox.repo, 'mine.md'), 'my own note\n');
    writeFileSync(path.join(sandbox.repo, 'work', 'US-001-notes.txt'), 'notes, edited by me\n');
    // The dry run says what the run will say: a forced exit, not a death.
    const dry = await runRalph(sandbox, ['--dry-run', ...FAST]);
    expect(dry.stdout).toMatch(/^would recover: session \S+ \(PID \d+\) was forced to exit \(a second Ctrl\+C\) after its last event at \S+: record its end \(interrupted, exit 130\) and write its report$/m);
    expect(dry.stdout).toMatch(/^would recover: work\/US-001\.txt: the work of the run forced to exit \(a second Ctrl\+C\), not yours/m);
    expect(dry.stdout).not.toMatch(/died|run that died/);
    const again = await runRalph(sandbox, FAST);
    expect(again.code, again.stderr).toBe(0);
    // Put back as news (no `warning:`), not as a crash to look into.
    expect(again.stderr).toMatch(/^\S+ \S+ task US-001 was left in_iteration by iteration 1 .*put it back to pending$/m);
    expect(again.stderr).toMatch(/^\S+ \S+ uncommitted work the run forced to exit \(a second Ctrl\+C\) left \(1 path: work\/US-001\.txt\) is its agents' work/m);
    expect(again.stderr).toMatch(/^\S+ \S+ the run before, session \S+ \(PID \d+\), was forced to exit \(a second Ctrl\+C\) after its last event at \S+ \(0 iterations ended\): recorded as interrupted \(exit 130\)/m);
    expect(again.stderr).not.toMatch(/warning: .*(in_iteration|the run that died|forced to exit|died without ending)/);
    expect(again.stderr).toMatch(/warning: uncommitted changes from before the run \(2 paths: mine\.md, work\/US-001-notes\.txt\) stay yours/);
    // Each story done once, in its own commit holding its work; the user's files in no commit, as they left them.
    const prd = JSON.parse(readFileSync(path.join(sandbox.repo, 'prd.json'), 'utf8')) as { userStories: Array<{ passes: boolean }> };
    expect(prd.userStories.map((item) => item.passes)).toEqual([true, true]);
    for (const id of ['US-001', 'US-002']) {
      const sha = git(sandbox, ['log', '--format=%H', `--grep=^Ralph-Task: ${id}$`, 'HEAD']).trim().split('\n');
      expect(sha, `${id}'s commits`).toHaveLength(1);
      expect(git(sandbox, ['diff-tree', '--no-commit-id', '--name-only', '-r', sha[0]!]).split('\n')).toContain(`work/${id}.txt`);
    }
    expect(git(sandbox, ['log', '--format=%H', 'HEAD', '--', 'mine.md', 'work/US-001-notes.txt']).trim(), "the user's files in no commit").toBe('');
    expect(readFileSync(path.join(sandbox.repo, 'work', 'US-001-notes.txt'), 'utf8')).toBe('notes, edited by me\n');
    expect(git(sandbox, ['status', '--porcelain']).trim().split('\n').sort()).toEqual(['?? mine.md', '?? work/US-001-notes.txt']);
    expect(prdHistory(sandbox).map((record) => `${record.taskId} ${record.completionStatus}`)).toEqual(['US-001 interrupted', 'US-001 completed', 'US-002 completed']);
    expect(existsSync(path.join(sandbox.repo, '.ralph', 'journal.json')), 'no journal left').toBe(false);
  });

  it('beads, --parallel 2: the beads its workers held in bd are given back at once, as the normal end gives them back', async () => {
    sandbox = makeSandbox();
    const issues = standardEpic(2);
    for (const issue of issues) if (issue.parent) issue.dependencies = [];
    seedBeads(sandbox, issues);
    sandbox.env.FAKE_BD_VERSION = '1.2';
    // Both agents hang deaf to SIGTERM: the first Ctrl+C waits for them, the second forces.
    scenario(sandbox, [{ hang: true, ignoreTerm: true }]);
    const held = () => readBeads(sandbox!).filter((issue) => issue.status === 'in_progress').map((issue) => `${issue.id} ${issue.assignee}`);
    const run = startRalph(sandbox, ['--parallel', '2', ...FAST, '--kill-grace', '30s']);
    await waitFor(() => agentCalls(sandbox!).length === 2 && held().length === 2, 20_000, 'both workers to claim their bead and start');
    expect(held().sort()).toEqual(['ws-9w6.2 ralph-w1', 'ws-9w6.3 ralph-w2']);
    signalRalph(sandbox, 'SIGINT');
    await waitFor(() => run.output().stderr.includes('SIGINT received: stopping (again to force)'), 20_000, 'ralph to take the first SIGINT');
    signalRalph(sandbox, 'SIGINT');
    const forced = await run.done;
    expect(forced.code, forced.stderr).toBe(130);
    expect(held(), 'no bead left claimed in bd').toEqual([]);
    expect(readBeads(sandbox).filter((issue) => issue.parent).map((issue) => `${issue.id} ${issue.status ?? 'open'} ${issue.assignee ?? ''}`)).toEqual(['ws-9w6.1 closed ', 'ws-9w6.2 open ', 'ws-9w6.3 open ']);
  });
});
