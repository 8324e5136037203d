// A run that died (kill -9, Ctrl+C) and the next start: recovery settles what it left (lib/recovery/).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, prdHistory, prdProject, prdStories, report } from './projects.ts';
import { agentCalls, FAST, makeSandbox, pidAlive, ralphPid, scenario, waitFor, type Sandbox } from './helpers.ts';
import { crashProject, crashSandbox, expectSettled, gitText, prdState, startNode, taskCommits } from './crash-helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

describe('kill -9 of ralph while its agent works, the orphaned agent finishing its story', () => {
  it("the restart adopts the story: gates, its own commit with the work and the state, its history record; a file the user wrote after the orphan ended stays theirs, uncommitted", async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prdStories(2));
    const release = path.join(sandbox.root, 'release');
    scenario(sandbox, [
      // US-001: the agent goes on after ralph is gone: its work, `passes: true`, then its report to a dead pipe.
      { marker: 'AGENT-WORKING', waitFile: release, edit: [{ file: 'prd.json', from: '"passes": false', to: '"passes": true' }], write: { 'work-US_001.txt': 'one\n' }, lines: [report('completed')] },
      { write: { 'work-US_002.txt': 'two\n' }, lines: [report('completed')] },
    ]);
    const first = startNode(sandbox, FAST);
    await waitFor(() => agentCalls(sandbox).length >= 1, 30_000, 'the agent to start');
    const pid = ralphPid(sandbox);
    process.kill(pid, 'SIGKILL');
    await first.done;
    writeFileSync(release, '');
    // The orphan's state, should it not finish (failed once in a clean-clone run, not reproduced since).
    const orphan = (): string => `agents ${JSON.stringify(agentCalls(sandbox).map((call) => [call.pid, pidAlive(call.pid)]))}, work file ${existsSync(path.join(sandbox.repo, 'work-US_001.txt'))}, prd.json ${JSON.stringify(prdState(sandbox))}`;
    await waitFor(() => existsSync(path.join(sandbox.repo, 'work-US_001.txt')) && prdState(sandbox)[0]!.passes === true, 30_000, 'the orphan to finish').catch((error: Error) => {
      throw new Error(`${error.message}: ${orphan()}`);
    });
    // The orphan's end recorded (with no ralph left to see it), the user writes a file of their own, later.
    const agents = path.join(sandbox.repo, '.ralph', 'agents');
    const endRecord = (): string | undefined => readdirSync(agents).find((name) => name.startsWith('end-'));
    await waitFor(() => endRecord() !== undefined, 30_000, "the orphan's end to be recorded");
    const ended = statSync(path.join(agents, endRecord()!)).ctimeMs;
    await waitFor(() => Date.now() > ended + 20, 1_000, 'a later clock tick');
    writeFileSync(path.join(sandbox.repo, 'notes.txt'), 'mine, after the crash\n');
    const dry = await startNode(sandbox, ['--dry-run', ...FAST]).done;
    expect(dry.stdout).toMatch(/would recover: notes\.txt: changed after the agent of the run that died had ended: yours, left out of ralph's commits/);
    // The user's changes as the run will count them: the dead run's work is not among them.
    expect(dry.stdout).toMatch(/^note: uncommitted changes from before the run \(1 path: notes\.txt\) stay yours/m);
    expect(dry.stdout).toMatch(/These paths held the user's own uncommitted changes before this run: notes\.txt\./);

    const rerun = await startNode(sandbox, ['--json', ...FAST]).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/changed after the agent of the run that died had ended \(1 path: notes\.txt\): yours, left out of ralph's commits/);
    expect(rerun.stderr).toMatch(/uncommitted work the run that died left \(1 path: work-US_001\.txt\) is its agents' work, not yours/);
    expect(rerun.stderr).toMatch(/iteration 1 \(US-001\): the run died before judging it; US-001 showed done, so its work \(1 path: work-US_001\.txt\) was judged now: the gates passed; adopted and committed as [0-9a-f]{12}/);
    // Each story once, in the commit that marks it done, with its work; a clean tree; a record per story.
    const commits = taskCommits(sandbox);
    expect(commits.map((commit) => [commit.task, commit.files.filter((file) => file.startsWith('work-'))])).toEqual([
      ['US-001', ['work-US_001.txt']],
      ['US-002', ['work-US_002.txt']],
    ]);
    for (const commit of commits) expect(commit.files).toContain('prd.json');
    expect(gitText(sandbox, ['log', '--format=%H', '--', 'notes.txt'])).toBe('');
    expect(gitText(sandbox, ['status', '--porcelain'])).toBe('?? notes.txt\n');
    expect(readFileSync(path.join(sandbox.repo, 'notes.txt'), 'utf8')).toBe('mine, after the crash\n');
    expect(prdState(sandbox).map((story) => [story.passes, story.status])).toEqual([
      [true, 'completed'],
      [true, 'completed'],
    ]);
    expect(prdHistory(sandbox).map((record) => [record.iterationNumber, record.taskId, record.completionStatus])).toEqual([
      [1, 'US-001', 'completed'],
      [2, 'US-002', 'completed'],
    ]);
    expect(existsSync(path.join(sandbox.repo, '.ralph', 'journal.json'))).toBe(false);
    expect(pidAlive(pid)).toBe(false);
  });

  it('killed in its gates, after its agent ended: a file the user writes before the restart stays theirs, the story lands with its own work', async () => {
    sandbox = crashSandbox();
    const { ids, args } = crashProject(sandbox, 'prd', 2);
    const crashed = await startNode(sandbox, args, { RALPH_TEST_CRASH_AT: 'gates_run:1' }).done;
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    // The agent's end is still on record (ralph died in the gates, after it): the user's file comes later.
    const agents = path.join(sandbox.repo, '.ralph', 'agents');
    const endRecord = readdirSync(agents).find((name) => name.startsWith('end-'));
    expect(endRecord, 'the end of the agent of the run that died').toBeDefined();
    const ended = statSync(path.join(agents, endRecord!)).ctimeMs;
    await waitFor(() => Date.now() > ended + 20, 1_000, 'a later clock tick');
    writeFileSync(path.join(sandbox.repo, 'notes.txt'), 'mine, after the crash\n');
    const rerun = await startNode(sandbox, args).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/changed after the agent of the run that died had ended \(1 path: notes\.txt\): yours, left out of ralph's commits/);
    expect(taskCommits(sandbox).map((commit) => [commit.task, commit.files.filter((file) => file.startsWith('work/'))])).toEqual(ids.map((id) => [id, [`work/${id}.txt`]]));
    expect(gitText(sandbox, ['log', '--format=%H', '--', 'notes.txt'])).toBe('');
    expect(gitText(sandbox, ['status', '--porcelain'])).toBe('?? notes.txt\n');
  });

  it("the user's own change from before the run stays theirs; the gates failing on the orphan's work reopen the story and it is redone", async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, prdStories(1), 'node -e "process.exit(require(\'fs\').existsSync(\'broken.txt\') ? 1 : 0)"');
    writeFileSync(path.join(sandbox.repo, 'mine.txt'), 'my own\n');
    const release = path.join(sandbox.root, 'release');
    scenario(sandbox, [
      { marker: 'AGENT-WORKING', waitFile: release, edit: [{ file: 'prd.json', from: '"passes": false', to: '"passes": true' }], write: { 'broken.txt': 'x\n', 'work-US_001.txt': 'half\n' }, lines: [report('completed')] },
      { run: [['rm', 'broken.txt']], write: { 'work-US_001.txt': 'whole\n' }, lines: [report('completed')] },
    ]);
    const first = startNode(sandbox, FAST);
    await waitFor(() => agentCalls(sandbox).length >= 1, 30_000, 'the agent to start');
    expect(first.output().stderr).toMatch(/uncommitted changes from before the run \(1 path: mine\.txt\) stay yours/);
    process.kill(ralphPid(sandbox), 'SIGKILL');
    await first.done;
    writeFileSync(release, '');
    await waitFor(() => existsSync(path.join(sandbox.repo, 'work-US_001.txt')), 30_000, 'the orphan to finish');

    const rerun = await startNode(sandbox, ['--json', ...FAST]).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/uncommitted changes from before the run \(1 path: mine\.txt\) stay yours/);
    expect(rerun.stderr).toMatch(/US-001 showed done but its work failed the gates \(.*\): reopened, and the work stays in the tree/);
    expect(prdHistory(sandbox).map((record) => [record.iterationNumber, record.taskId, record.completionStatus])).toEqual([
      [1, 'US-001', 'failed'],
      [2, 'US-001', 'completed'],
    ]);
    const commits = taskCommits(sandbox);
    expect(commits.map((commit) => [commit.task, commit.files.filter((file) => file.startsWith('work-') || file === 'mine.txt' || file === 'broken.txt')])).toEqual([['US-001', ['work-US_001.txt']]]);
    expect(readFileSync(path.join(sandbox.repo, 'work-US_001.txt'), 'utf8')).toBe('whole\n');
    // Only the user's own file is left uncommitted, untouched.
    expect(gitText(sandbox, ['status', '--porcelain'])).toBe('?? mine.txt\n');
    expect(readFileSync(path.join(sandbox.repo, 'mine.txt'), 'utf8')).toBe('my own\n');
  });
});

describe('the dry run after a stop says what the run will do, recovery included', () => {
  /** Whether iteration `n`'s log (any session's) holds `text`: ralph has read it from the agent. */
  const iterationLogHolds = (box: Sandbox, n: number, text: string): boolean => {
    const logs = path.join(box.repo, '.ralph', 'logs');
    if (!existsSync(logs)) return false;
    return readdirSync(logs).some((session) => {
      const file = path.join(logs, session, `iteration-${n}.jsonl`);
      return existsSync(file) && readFileSync(file, 'utf8').includes(text);
    });
  };
  const fourStories = (box: Sandbox): void => {
    prdProject(box, prdStories(4));
    scenario(box, [
      { write: { 'work-US_001.txt': 'one\n' }, lines: [report('completed')] },
      { lines: [answer('working on it')], hang: true },
      { write: { 'work-US_002.txt': 'two\n' }, lines: [report('completed')] },
      { write: { 'work-US_003.txt': 'three\n' }, lines: [report('completed')] },
      { write: { 'work-US_004.txt': 'four\n' }, lines: [report('completed')] },
    ]);
  };

  it('kill -9 while US-002 runs: the dry run lists US-002 first, with what it would recover, and the run then takes it first', async () => {
    sandbox = makeSandbox();
    fourStories(sandbox);
    const first = startNode(sandbox, FAST);
    // Killed once ralph has read the agent's line: an agent still writing when its reader dies ends with EPIPE
    // (as a real one would), and there would be no agent left to stop.
    await waitFor(() => agentCalls(sandbox).length >= 2 && prdState(sandbox)[1]!.status === 'in_iteration' && iterationLogHolds(sandbox, 2, 'working on it'), 30_000, 'the second story to start');
    process.kill(ralphPid(sandbox), 'SIGKILL');
    await first.done;

    const dry = await startNode(sandbox, ['resume', '--dry-run', ...FAST]).done;
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/would recover: stop the agent \(process group \d+\) a killed run left running/);
    expect(dry.stdout).toMatch(/would recover: task US-002 was left in_iteration by iteration 2 \(started [^)]+\): put it back to pending/);
    expect(dry.stdout).toMatch(/ready, in order:\n {2}1\. US-002 Story 2\n {2}2\. US-003 Story 3\n {2}3\. US-004 Story 4\n/);
    // The dry run changed nothing.
    expect(prdState(sandbox)[1]!.status).toBe('in_iteration');

    const run = await startNode(sandbox, ['resume', '--json', ...FAST]).done;
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).records.map((record: { taskId: string }) => record.taskId)).toEqual(['US-002', 'US-003', 'US-004']);
    expect(taskCommits(sandbox).map((commit) => commit.task)).toEqual(['US-001', 'US-002', 'US-003', 'US-004']);
    expect(gitText(sandbox, ['status', '--porcelain'])).toBe('');
  });

  it('Ctrl+C: a file the user writes before starting again stays theirs', async () => {
    sandbox = makeSandbox();
    fourStories(sandbox);
    const first = startNode(sandbox, FAST);
    await waitFor(() => agentCalls(sandbox).length >= 2 && prdState(sandbox)[1]!.status === 'in_iteration', 30_000, 'the second story to start');
    process.kill(ralphPid(sandbox), 'SIGINT');
    expect((await first.done).code).toBe(130);
    writeFileSync(path.join(sandbox.repo, 'notes.txt'), 'mine\n');
    const dry = await startNode(sandbox, ['resume', '--dry-run', ...FAST]).done;
    expect(dry.stdout).toMatch(/ready, in order:\n {2}1\. US-002 Story 2\n/);
    const run = await startNode(sandbox, ['resume', '--json', ...FAST]).done;
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).records.map((record: { taskId: string }) => record.taskId)).toEqual(['US-002', 'US-003', 'US-004']);
    expect(run.stderr).toMatch(/uncommitted changes from before the run \(1 path: notes\.txt\) stay yours/);
    expect(taskCommits(sandbox).flatMap((commit) => commit.files)).not.toContain('notes.txt');
    expect(gitText(sandbox, ['status', '--porcelain'])).toBe('?? notes.txt\n');
  });
});

describe('what a git killed half way leaves', () => {
  it("a worktree record `git worktree add` left locked, and git's lock files no process holds (index, packed-refs, a ref's): the next --parallel run gets past them all", async () => {
    sandbox = crashSandbox();
    const { ids, args } = crashProject(sandbox, 'prd');
    const git = (...rest: string[]) => execFileSync('git', rest, { cwd: sandbox.repo, env: sandbox.env, stdio: 'ignore' });
    git('worktree', 'add', '-q', '-b', 'ralph-worker/w2', '.ralph/worktrees/w2');
    git('worktree', 'lock', '--reason', 'initializing', '.ralph/worktrees/w2');
    rmSync(path.join(sandbox.repo, '.ralph', 'worktrees', 'w2'), { recursive: true, force: true });
    writeFileSync(path.join(sandbox.repo, '.git', 'index.lock'), '');
    // packed-refs.lock stops every branch deletion (the worker branches at the end); a ref's lock, that ref.
    writeFileSync(path.join(sandbox.repo, '.git', 'packed-refs.lock'), '');
    mkdirSync(path.join(sandbox.repo, '.git', 'refs', 'remotes', 'origin'), { recursive: true });
    writeFileSync(path.join(sandbox.repo, '.git', 'refs', 'remotes', 'origin', 'main.lock'), '');
    const run = await startNode(sandbox, [...args, '--parallel', '2']).done;
    expect(run.code, run.stderr).toBe(0);
    const removed = /removed the lock files a git killed mid-command left \(([^)]*)\): no process holds them/.exec(run.stderr)?.[1];
    expect(removed?.split(', ').sort(), run.stderr).toEqual(['.git/index.lock', '.git/packed-refs.lock', '.git/refs/remotes/origin/main.lock']);
    expect(run.stderr).not.toMatch(/could not delete the worker branch/);
    expectSettled(sandbox, 'prd', ids);
  });

  it("a worktree whose `git worktree add` was killed before its checkout (HEAD still git's placeholder of zeros, which every later fetch trips on): removed, and the run goes on", async () => {
    sandbox = crashSandbox();
    const { ids, args } = crashProject(sandbox, 'prd');
    const git = (...rest: string[]) => execFileSync('git', rest, { cwd: sandbox.repo, env: sandbox.env, stdio: 'ignore' });
    git('worktree', 'add', '-q', '-b', 'ralph-worker/w1', '.ralph/worktrees/w1');
    git('worktree', 'lock', '--reason', 'initializing', '.ralph/worktrees/w1');
    // As git leaves it when killed between writing that placeholder and pointing HEAD at the branch.
    writeFileSync(path.join(sandbox.repo, '.git', 'worktrees', 'w1', 'HEAD'), `${'0'.repeat(40)}\n`);
    const run = await startNode(sandbox, [...args, '--parallel', '2']).done;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/removed the worktree \.ralph\/worktrees\/w1 a killed run left behind/);
    expect(run.stderr).not.toMatch(/could not keep the work left in/);
    expectSettled(sandbox, 'prd', ids);
  });
});
