import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitAll, prdHistory, prdProject, report, SNARK } from './projects.ts';
import { agentCalls, agentPids, FAST, makeSandbox, pidAlive, runRalph, scenario, startRalph, waitFor, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'prd');

const gitLog = (box: Sandbox, format: string) => execFileSync('git', ['log', `--format=${format}`], { cwd: box.repo, env: box.env, encoding: 'utf8' });
describe('PRD mode, end to end', () => {
  it('completes stories, runs the gates, commits with trailers and writes history (snarktank shape)', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [
      { write: { 'app.txt': 'one\n' }, lines: [report('completed', 'keep app.txt sorted')] },
      { write: { 'app.txt': 'one\ntwo\n' }, lines: [report('completed')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', source: 'prd', success: true, completedCount: 2, failedCount: 0, iterations: 2 });
    const prd = JSON.parse(readFileSync(path.join(sandbox.repo, 'prd.json'), 'utf8'));
    expect(prd.userStories.map((story: { passes: boolean }) => story.passes)).toEqual([true, true]);
    const commits = gitLog(sandbox, '%s%x1f%(trailers:only,unfold)%x1e').split('\x1e').map((entry) => entry.trim()).filter(Boolean);
    expect(commits.slice(0, 2)).toEqual(['ralph: US-002 Second story\x1fRalph-Iteration: 2\nRalph-Task: US-002', 'ralph: US-001 First story\x1fRalph-Iteration: 1\nRalph-Task: US-001']);
    const records = prdHistory(sandbox);
    expect(records.map((record) => record.iterationNumber)).toEqual([1, 2]);
    expect(records[0]).toMatchObject({ completionStatus: 'completed', tasksCompleted: ['US-001'], failedCount: 0, agent: 'claude' });
    // The record is part of its iteration's commit, so it cannot name it: the commit's trailer points back.
    expect(records[0]!.commit).toBeNull();
    const first = gitLog(sandbox, '%H%x1f%(trailers:key=Ralph-Iteration,valueonly)%x1e').split('\x1e').map((entry) => entry.trim().split('\x1f')).find(([, iteration]) => iteration === '1')![0]!;
    expect(execFileSync('git', ['show', '--name-only', '--format=', first], { cwd: sandbox.repo, encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual(['.rulebook-ralph/history/iteration-1.json', 'app.txt', 'prd.json', 'progress.txt']);
    // Nothing of ralph's is left uncommitted after a run that ends 0.
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: sandbox.repo, encoding: 'utf8' })).toBe('');
    expect(records[0]!.learnings).toContain('keep app.txt sorted');
    expect(readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8')).toContain('US-001');
    // The prompt carried the PRD path, the task and the last commits.
    expect(agentCalls(sandbox)[0]!.stdin).toMatch(/prd\.json[\s\S]*US-001[\s\S]*prd/);
  });

  it('blocks a story whose gates fail, notes the failure and does not commit', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, SNARK, 'node -e "console.error(\'3 tests failed\'); process.exit(1)"');
    scenario(sandbox, [{ write: { 'app.txt': 'broken\n' }, lines: [report('completed')] }]);
    const before = gitLog(sandbox, '%H');
    const result = await runRalph(sandbox, ['--max-iterations', '1', '--json', ...FAST]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ failedCount: 1, completedCount: 0 });
    // The failed work is not committed; the task state (blocked, the history, the progress entry) is, in
    // one commit of its own at the end of the run, so nothing of ralph's is left uncommitted.
    const added = gitLog(sandbox, '%H').split('\n').filter(Boolean).filter((sha) => !before.includes(sha));
    expect(added).toHaveLength(1);
    expect(gitLog(sandbox, '%s').split('\n')[0]).toMatch(/^ralph: task state at the end of session \d{8}-/);
    expect(execFileSync('git', ['show', '--name-only', '--format=', added[0]!], { cwd: sandbox.repo, encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual(['.rulebook-ralph/history/iteration-1.json', 'prd.json', 'progress.txt']);
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: sandbox.repo, encoding: 'utf8' })).toBe('?? app.txt\n');
    expect(prdHistory(sandbox)[0]).toMatchObject({ completionStatus: 'failed', failedCount: 1 });
    const progress = readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8');
    expect(progress).toMatch(/3 tests failed/);
    expect(result.stderr).toMatch(/gates: .*FAILED/);
  });

  it('works on the rulebook shape and on a rulebook tree after ralph init', async () => {
    sandbox = makeSandbox();
    cpSync(path.join(FIXTURES, 'rulebook-project'), sandbox.repo, { recursive: true });
    commitAll(sandbox, 'rulebook tasks');
    const init = await runRalph(sandbox, ['init', '--json']);
    expect(init.code, init.stderr).toBe(0);
    const created = JSON.parse(init.stdout);
    expect(created).toMatchObject({ success: true, taskCount: 5, prdPath: path.join(sandbox.repo, '.rulebook-ralph', 'prd.json') });
    expect(created.tasks.map((task: { id: string; status: string }) => `${task.id}:${task.status}`)).toEqual(['refactor-db:completed', 'fix-logging:pending', 'add-auth:pending', 'migrate-api:blocked', 'legacy-cleanup:pending']);
    const again = await runRalph(sandbox, ['init']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^wrote .*prd\.json with 5 tasks:\n/);
    expect(again.stdout).toMatch(/^  legacy-cleanup  pending    no \.metadata\.json; tasks\.md has 1 of 1 item open$/m);
    writeFileSync(path.join(sandbox.repo, 'ralph.config.json'), JSON.stringify({ gate: ['none'] }));
    commitAll(sandbox, 'prd');
    scenario(sandbox, [{ lines: [report('completed')] }]);
    const run = await runRalph(sandbox, ['--max-iterations', '1', '--json', ...FAST]);
    expect(run.code, run.stderr).toBe(2);
    const prd = JSON.parse(readFileSync(created.prdPath, 'utf8'));
    expect(prd.tasks.filter((task: { status: string }) => task.status === 'completed').length).toBeGreaterThanOrEqual(1);
  });

  it('exits 1 naming the file and the first problem of a malformed prd.json, leaving it untouched', async () => {
    sandbox = makeSandbox();
    const bad = '{ "userStories": [ { "id": "US-001", "title": "x", "priority": "high", "passes": false } ] }\n';
    writeFileSync(path.join(sandbox.repo, 'prd.json'), bad);
    const result = await runRalph(sandbox, ['--source', 'prd', ...FAST]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/prd\.json.*\$\.userStories\[0\]\.priority.*expected a number/);
    expect(readFileSync(path.join(sandbox.repo, 'prd.json'), 'utf8')).toBe(bad);
    writeFileSync(path.join(sandbox.repo, 'prd.json'), '{ "userStories": [ ');
    const syntax = await runRalph(sandbox, ['--source', 'prd', ...FAST]);
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toMatch(/prd\.json/);
    expect(agentCalls(sandbox)).toHaveLength(0);
  });

  it('resumes after kill -9: stale lock reclaimed, task back in play, numbering continues', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [{ lines: [report('completed')], hang: true, marker: 'AGENT-STARTED' }, { lines: [report('completed')] }, { lines: [report('completed')] }]);
    const first = startRalph(sandbox, FAST);
    await waitFor(() => agentPids(sandbox).length >= 1, 20_000, 'agent');
    await waitFor(() => readFileSync(path.join(sandbox.repo, 'prd.json'), 'utf8').includes('in_iteration'), 10_000, 'claim');
    // kill -9 the real ralph process (the one named in the lock; tsx's wrapper is its parent).
    const ralphPid = Number(readFileSync(path.join(sandbox.repo, '.ralph.lock'), 'utf8').split('\n')[0]);
    process.kill(ralphPid, 'SIGKILL');
    first.child.kill('SIGKILL');
    await first.done;
    for (const pid of agentPids(sandbox)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // the agent's group may be gone already
      }
    }
    await waitFor(() => agentPids(sandbox).every((pid) => !pidAlive(pid)), 5000, 'orphaned agent to die');
    expect(existsSync(path.join(sandbox.repo, '.ralph.lock'))).toBe(true);
    const resumed = await runRalph(sandbox, ['resume', '--json', ...FAST]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/reclaiming a stale lock/);
    expect(resumed.stderr).toMatch(/US-001 was left in_iteration by iteration 1/);
    const numbers = prdHistory(sandbox).map((record) => record.iterationNumber);
    expect(numbers).toEqual([1, 2, 3]);
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(prdHistory(sandbox)[0]).toMatchObject({ completionStatus: 'interrupted' });
    expect(JSON.parse(resumed.stdout).records.map((r: { iteration: number }) => r.iteration)).toEqual([2, 3]);
  });
});

describe("ralph's own files and git", () => {
  /** Every path any commit touched, and what `git status` shows, of ralph's own files. */
  const ownPaths = (box: Sandbox): { committed: string[]; status: string[] } => {
    const own = (lines: string) => lines.split('\n').filter((line) => /(^|\s|\/)\.ralph(\/|\.lock|$)/.test(line));
    return {
      committed: own(execFileSync('git', ['log', '--all', '--format=', '--name-only'], { cwd: box.repo, encoding: 'utf8' })),
      status: own(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: box.repo, encoding: 'utf8' })),
    };
  };

  it("keeps them out of every commit, the agent's own `git add -A` included, with nothing about them in the project's .gitignore", async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    expect(readFileSync(path.join(sandbox.repo, '.gitignore'), 'utf8')).not.toMatch(/ralph/);
    // An agent that commits its own work, as agents do, while the run's lock and logs are there.
    const agentCommit = [['node', '-e', "require('fs').writeFileSync('agent.txt', 'work\\n')"], ['git', 'add', '-A'], ['git', 'commit', '-qm', 'agent: its own commit']];
    scenario(sandbox, [
      { run: agentCommit, lines: [report('completed')] },
      { write: { 'app.txt': 'two\n' }, lines: [report('completed')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/fake-agent: .* failed/);
    expect(gitLog(sandbox, '%s')).toMatch(/^ralph: US-002 Second story\nralph: US-001 First story\nagent: its own commit\n/);
    // There was something to leave out: the run's logs are there.
    expect(existsSync(path.join(sandbox.repo, '.ralph', 'logs'))).toBe(true);
    expect(ownPaths(sandbox)).toEqual({ committed: [], status: [] });
  });

  it('keeps .ralph/ out of git status when .git/info/exclude cannot be written', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    // The exclude file is a link to a folder that does not exist: git reads nothing from it, ralph cannot add to it.
    const exclude = path.join(sandbox.repo, '.git', 'info', 'exclude');
    rmSync(exclude, { force: true });
    symlinkSync(path.join(sandbox.root, 'missing', 'exclude'), exclude);
    scenario(sandbox, [{ write: { 'app.txt': 'one\n' }, lines: [report('completed')] }]);
    const result = await runRalph(sandbox, ['--json', '--max-iterations', '1', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/could not add ralph's files to \.git\/info\/exclude/);
    expect(gitLog(sandbox, '%s')).toMatch(/^ralph: US-001 First story\n/);
    expect(existsSync(path.join(sandbox.repo, '.ralph', 'logs'))).toBe(true);
    expect(ownPaths(sandbox)).toEqual({ committed: [], status: [] });
  });
});

describe('PRD mode, a vanished task list', () => {
  it('fails instead of reporting completion when the agent empties userStories', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [{ write: { 'prd.json': JSON.stringify({ ...SNARK, userStories: [] }) }, lines: [report('completed')] }]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', success: false });
    expect(result.stderr).toMatch(/lists no tasks any more/);
  });
});
