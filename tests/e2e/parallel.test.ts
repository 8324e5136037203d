// --parallel N end to end: workers in git worktrees, their commits merged back onto the feature branch.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKE_BD_VERSIONS } from '../fakes/bd-seed.ts';
import { needsTool } from '../support/needs-tool.ts';
import { answer, commitAll, prdHistory, prdProject, prdStories, report, specKitProject, TASKS_PATH } from './projects.ts';
import { agentCalls, bdCalls, FAST, makeSandbox, readBeads, runRalph, seedBeads, type Sandbox } from './helpers.ts';
import { expectSettled, startNode } from './crash-helpers.ts';

let sandbox: Sandbox;
const bwrap = needsTool('bwrap', { apt: 'bubblewrap' });
afterEach(() => sandbox?.cleanup());

const git = (box: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: box.repo, env: box.env, encoding: 'utf8' });

/** Subjects and trailers of the feature branch's commits, newest first. */
function commits(box: Sandbox): Array<{ subject: string; trailers: Record<string, string>; parents: number }> {
  return git(box, ['log', '--format=%s%x1f%P%x1f%(trailers:only,unfold)%x1e'])
    .split('\x1e')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [subject, parents, trailers] = entry.split('\x1f');
      return {
        subject: subject!,
        parents: parents!.split(' ').filter(Boolean).length,
        trailers: Object.fromEntries((trailers ?? '').split('\n').filter(Boolean).map((line) => line.split(': ') as [string, string])),
      };
    });
}

/** Nothing of the workers is left: no worktree, no worker branch. */
function expectWorkersGone(box: Sandbox): void {
  const dir = path.join(box.repo, '.ralph', 'worktrees');
  expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  expect(git(box, ['worktree', 'list', '--porcelain']).match(/^worktree /gm)).toHaveLength(1);
  expect(git(box, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-worker/'])).toBe('');
}

function prdScenario(box: Sandbox, byPrompt: Array<{ match: string; steps: unknown[] }>): void {
  const file = path.join(box.root, 'scenario.json');
  writeFileSync(file, JSON.stringify({ byPrompt, steps: [{ lines: [report('failed')] }] }));
  box.env.FAKE_AGENT_SCENARIO = file;
}


/**
 * Three PRD stories whose agents finish at once, each writing work/<id>.txt, and a gate of half a second
 * (a batch waits for a worker still at its own gates for at most that long) that logs each run; the log.
 */
function threeAtOnce(box: Sandbox): string {
  writeFileSync(path.join(box.repo, 'check.sh'), 'sleep 0.5\necho "$(basename "$PWD") $(ls work 2>/dev/null | tr "\\n" " ")" >> "$GATE_LOG"\n');
  commitAll(box, 'the check');
  prdProject(box, prdStories(3));
  const gateLog = path.join(box.root, 'gate-runs.log');
  box.env.GATE_LOG = gateLog;
  const marker = (name: string) => path.join(box.root, `marker-${name}`);
  const all = [marker('1'), marker('2'), marker('3')];
  const work = (n: number) => ({ [`work/US-00${n}.txt`]: `story ${n}\n` });
  prdScenario(box, [1, 2, 3].map((n) => ({ match: `**US-00${n}**`, steps: [{ write: work(n), touch: marker(`${n}`), awaitFiles: all, lines: [report('completed')] }, { write: work(n), lines: [report('completed')] }] })));
  return gateLog;
}

describe('--parallel N', () => {
  it('PRD: four stories on two workers, each done once and committed on a linear feature branch', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(4));
    const barrier = (name: string) => path.join(sandbox.root, `started-${name}`);
    prdScenario(
      sandbox,
      [1, 2, 3, 4].map((n) => ({
        match: `**US-00${n}**`,
        // The first two wait for each other: both workers really run at once.
        steps: [{ write: { [`story-${n}.txt`]: `story ${n}\n` }, touch: barrier(`${n}`), awaitFiles: n <= 2 ? [barrier('1'), barrier('2')] : [], lines: [report('completed')] }],
      })),
    );
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', completedCount: 4, iterations: 4 });
    expect(new Set(summary.records.map((record: { worker: number }) => record.worker))).toEqual(new Set([1, 2]));

    const log = commits(sandbox);
    const ralph = log.filter((commit) => commit.subject.startsWith('ralph: '));
    expect(ralph.map((commit) => commit.subject).sort()).toEqual(['ralph: US-001 Story 1', 'ralph: US-002 Story 2', 'ralph: US-003 Story 3', 'ralph: US-004 Story 4']);
    expect(log.every((commit) => commit.parents <= 1)).toBe(true);
    for (const commit of ralph) expect(commit.trailers).toMatchObject({ 'Ralph-Task': commit.subject.split(' ')[1], 'Ralph-Worker': expect.stringMatching(/^w[12]$/) });
    // Every story's work and its recorded state are on the branch, committed.
    for (const n of [1, 2, 3, 4]) expect(git(sandbox, ['show', `HEAD:story-${n}.txt`])).toBe(`story ${n}\n`);
    const prd = JSON.parse(git(sandbox, ['show', 'HEAD:prd.json']));
    expect(prd.userStories.map((story: { passes: boolean }) => story.passes)).toEqual([true, true, true, true]);
    // Nothing of ralph's is left to commit (a history record no longer names its own commit).
    expect(git(sandbox, ['status', '--porcelain', '--untracked-files=all'])).toBe('');
    expect(prdHistory(sandbox).map((record) => record.completionStatus)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8').match(/US-00\d/g)?.length).toBeGreaterThanOrEqual(4);
    // One agent per story, each in a worktree, never in the repository itself.
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(4);
    expect(calls.every((call) => call.cwd.includes(`${path.sep}.ralph${path.sep}worktrees${path.sep}w`))).toBe(true);
    expectWorkersGone(sandbox);
  });

  it('Spec Kit: [P] tasks run side by side, the phase after waits, every box is ticked by ralph in the main tasks.md', async () => {
    sandbox = makeSandbox({ branch: '001-demo' });
    specKitProject(
      sandbox,
      [
        '# Tasks: demo',
        '',
        '## Phase 1: Setup',
        '- [ ] T001 [P] Create a.txt',
        '- [ ] T002 [P] Create b.txt',
        '- [ ] T003 [P] Create c.txt',
        '',
        '## Phase 2: Polish',
        '- [ ] T004 Create d.txt',
        '',
      ].join('\n'),
    );
    const barrier = (name: string) => path.join(sandbox.root, `started-${name}`);
    const step = (id: string, file: string, wait: string[] = []) => ({
      match: `${id} `,
      steps: [{ write: { [file]: `${id}\n` }, edit: [{ file: TASKS_PATH, from: `- [ ] ${id}`, to: `- [X] ${id}` }], touch: barrier(id), awaitFiles: wait, lines: [JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'done', total_cost_usd: 0.001 })] }],
    });
    const file = path.join(sandbox.root, 'scenario.json');
    writeFileSync(file, JSON.stringify({ byPrompt: [step('T001', 'a.txt', [barrier('T001'), barrier('T002'), barrier('T003')]), step('T002', 'b.txt', [barrier('T001'), barrier('T002'), barrier('T003')]), step('T003', 'c.txt', [barrier('T001'), barrier('T002'), barrier('T003')]), step('T004', 'd.txt')] }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    const result = await runRalph(sandbox, ['--parallel', '3', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', completedCount: 4 });
    // T004 started only after the three [P] tasks were recorded.
    const order = summary.records.map((record: { taskId: string }) => record.taskId);
    expect(order.at(-1)).toBe('T004');
    const tasks = git(sandbox, ['show', `HEAD:${TASKS_PATH}`]);
    expect(tasks).toContain('- [X] T001');
    expect(tasks).toContain('- [X] T004');
    expect(tasks).not.toContain('- [ ]');
    for (const name of ['a', 'b', 'c', 'd']) expect(existsSync(path.join(sandbox.repo, `${name}.txt`))).toBe(true);
    expect(commits(sandbox).filter((commit) => commit.subject.startsWith('ralph: T00'))).toHaveLength(4);
    expect(git(sandbox, ['status', '--porcelain'])).toBe('');
    expectWorkersGone(sandbox);
  });

  it('two tasks editing the same line, the agent leaving the markers: the second runs again on a fresh base, both commits kept, no conflict markers', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    writeFileSync(path.join(sandbox.repo, 'shared.txt'), 'value: base\n');
    commitAll(sandbox, 'shared file');
    prdProject(sandbox, prdStories(2));
    const barrier = (name: string) => path.join(sandbox.root, `started-${name}`);
    prdScenario(sandbox, [
      { match: '**US-001**', steps: [{ write: { 'shared.txt': 'value: one\n' }, touch: barrier('1'), awaitFiles: [barrier('1'), barrier('2')], lines: [report('completed')] }] },
      // US-002 finishes only once US-001 is merged into the repository: its merge is the one that conflicts.
      { match: '**US-002**', steps: [{ write: { 'shared.txt': 'value: two\n' }, touch: barrier('2'), awaitFiles: [barrier('1'), barrier('2')], awaitContent: [{ file: path.join(sandbox.repo, 'shared.txt'), includes: 'value: one' }], lines: [report('completed')] }, { write: { 'shared.txt': 'value: one and two\n' }, lines: [report('completed')] }] },
    ]);
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe('completed');
    expect(result.stderr).toMatch(/US-002 conflicted when merged back \(shared\.txt\)/);
    const conflicted = summary.records.find((record: { reason: string }) => /merge conflict in shared\.txt/.test(record.reason));
    expect(conflicted).toMatchObject({ taskId: 'US-002', outcome: 'fail' });
    expect(conflicted.reason).toMatch(/^merge conflict in shared\.txt \(the agent left conflict markers in shared\.txt\): the work is kept on branch ralph-kept\//);
    expect(conflicted.kept).toMatch(/^ralph-kept\//);
    // The first attempt's work is still there, on its kept branch.
    expect(git(sandbox, ['show', `${conflicted.kept}:shared.txt`])).toBe('value: two\n');
    expect(readFileSync(path.join(sandbox.repo, 'shared.txt'), 'utf8')).toBe('value: one and two\n');
    const subjects = commits(sandbox).map((commit) => commit.subject);
    expect(subjects.filter((subject) => subject === 'ralph: US-001 Story 1')).toHaveLength(1);
    expect(subjects.filter((subject) => subject === 'ralph: US-002 Story 2')).toHaveLength(1);
    expect(() => git(sandbox, ['grep', '-q', '-e', '<<<<<<<', '-e', '>>>>>>>', 'HEAD'])).toThrow();
    expectWorkersGone(sandbox);
  });

  it('two tasks editing the same line: the agent resolves the conflict on the new head in one short run, and the task is not redone', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    writeFileSync(path.join(sandbox.repo, 'shared.txt'), 'value: base\nother: base\n');
    commitAll(sandbox, 'shared file');
    prdProject(sandbox, prdStories(2));
    const barrier = (name: string) => path.join(sandbox.root, `started-${name}`);
    prdScenario(sandbox, [
      { match: '**US-001**', steps: [{ write: { 'shared.txt': 'value: one\nother: base\n' }, touch: barrier('1'), awaitFiles: [barrier('1'), barrier('2')], lines: [report('completed')] }] },
      // US-002 changes the same line and another one; it finishes once US-001 has landed.
      { match: '**US-002**', steps: [{ write: { 'shared.txt': 'value: two\nother: two\n' }, touch: barrier('2'), awaitFiles: [barrier('1'), barrier('2')], awaitContent: [{ file: path.join(sandbox.repo, 'shared.txt'), includes: 'value: one' }], lines: [report('completed')] }] },
      { match: 'Resolve a merge conflict for task US-002', steps: [{ write: { 'shared.txt': 'value: one and two\nother: two\n' }, lines: [answer('Resolved: both values kept.')] }] },
    ]);
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { taskId: string; outcome: string }) => `${record.taskId} ${record.outcome}`).sort(), result.stderr).toEqual(["US-001 pass", "US-002 pass"]);
    const us2 = summary.records.find((record: { taskId: string }) => record.taskId === 'US-002');
    expect(us2.reason).toMatch(/; its merge conflict in shared\.txt with the work landed since was resolved by the agent \(\d+\.\ds\)$/);
    expect(result.stderr).not.toMatch(/conflicted when merged back/);
    // One short run on the new head: the task, its diff and the conflicting hunks in the prompt.
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(3);
    const resolvePrompt = `${calls[2]!.stdin}\n${calls[2]!.argv.join(' ')}`;
    expect(resolvePrompt).toMatch(/Resolve a merge conflict for task US-002 \(Story 2\)/);
    expect(resolvePrompt).toMatch(/Files with conflicts: shared\.txt/);
    expect(resolvePrompt).toMatch(/^\+value: two$/m);
    expect(resolvePrompt).toMatch(/^\+\+<<<<<<< /m);
    expect(calls[2]!.cwd).toMatch(/\.ralph\/worktrees\/w\d$/);
    expect(readFileSync(path.join(sandbox.repo, 'shared.txt'), 'utf8')).toBe('value: one and two\nother: two\n');
    const subjects = commits(sandbox).map((commit) => commit.subject);
    expect(subjects.filter((subject) => subject.startsWith('ralph: US-')).sort()).toEqual(['ralph: US-001 Story 1', 'ralph: US-002 Story 2']);
    expect(() => git(sandbox, ['grep', '-q', '-e', '<<<<<<<', '-e', '>>>>>>>', 'HEAD'])).toThrow();
    expect(git(sandbox, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-kept/'])).toBe('');
    expectWorkersGone(sandbox);
  });

  it.each(FAKE_BD_VERSIONS)('beads (bd %s): each worker claims its own bead under its own name, uses the main database, and closes only that bead', async (bdVersion) => {
    sandbox = makeSandbox();
    sandbox.env.FAKE_BD_VERSION = bdVersion;
    seedBeads(sandbox, [
      { id: 'ws-9w6', title: 'Feature: ralph-automation', issue_type: 'epic', priority: 1 },
      { id: 'ws-9w6.1', title: '[sp:02-clarify] Clarify the spec', parent: 'ws-9w6', status: 'closed', priority: 1 },
      { id: 'ws-9w6.2', title: 'Task A', parent: 'ws-9w6', priority: 2 },
      { id: 'ws-9w6.3', title: 'Task B', parent: 'ws-9w6', priority: 2 },
      { id: 'ws-9w6.4', title: 'Task C', parent: 'ws-9w6', priority: 2, dependencies: ['ws-9w6.2'] },
    ]);
    const barrier = (name: string) => path.join(sandbox.root, `started-${name}`);
    const step = (id: string, wait: string[] = []) => ({
      match: `Work on bead ${id} `,
      steps: [{ run: [['bd', 'close', id, '--reason', 'implemented by the fake agent', '--json']], write: { [`${id}.txt`]: `${id}\n` }, touch: barrier(id), awaitFiles: wait, replay: 'claude-ok.jsonl' }],
    });
    const file = path.join(sandbox.root, 'scenario.json');
    writeFileSync(file, JSON.stringify({ byPrompt: [step('ws-9w6.2', [barrier('ws-9w6.2'), barrier('ws-9w6.3')]), step('ws-9w6.3', [barrier('ws-9w6.2'), barrier('ws-9w6.3')]), step('ws-9w6.4')] }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', tasksCompleted: 3 });
    expect(readBeads(sandbox).filter((issue) => issue.id !== 'ws-9w6' && issue.status !== 'closed')).toEqual([]);
    const claims = bdCalls(sandbox).filter((argv) => argv.includes('--claim'));
    expect(claims.map((argv) => argv[1]).sort()).toEqual(['ws-9w6.2', 'ws-9w6.3', 'ws-9w6.4']);
    for (const argv of claims) expect(argv).toEqual(['update', argv[1], '--claim', '--actor', expect.stringMatching(/^ralph-w[12]$/), '--json']);
    const calls = agentCalls(sandbox);
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(call.stdin).toMatch(/^\/sp:next ws-9w6\.\d\n\nWork on bead ws-9w6\.\d "Task [ABC]" only/);
      expect(call.env.BEADS_DIR).toBe(path.join(sandbox.repo, '.beads'));
    }
    for (const id of ['ws-9w6.2', 'ws-9w6.3', 'ws-9w6.4']) expect(git(sandbox, ['show', `HEAD:${id}.txt`])).toBe(`${id}\n`);
    expectWorkersGone(sandbox);
  });

  it('--dry-run --parallel 3 shows which task starts on which worker, and changes nothing', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(2));
    const head = git(sandbox, ['rev-parse', 'HEAD']);
    const result = await runRalph(sandbox, ['--dry-run', '--parallel', '3']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/first on 3 workers .*\n  w1: US-001 Story 1\n  w2: US-002 Story 2\n  w3: waits until a task may start beside these/);
    const json = JSON.parse((await runRalph(sandbox, ['--dry-run', '--parallel', '3', '--json'])).stdout);
    expect(json.workers).toEqual([{ worker: 1, task: { id: 'US-001', title: 'Story 1' } }, { worker: 2, task: { id: 'US-002', title: 'Story 2' } }]);
    expect(git(sandbox, ['rev-parse', 'HEAD'])).toBe(head);
    expect(git(sandbox, ['worktree', 'list', '--porcelain']).match(/^worktree /gm)).toHaveLength(1);
  });

  it('refuses what workers cannot do: --no-commit, an uncommitted Spec Kit feature', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(2));
    const noCommit = await runRalph(sandbox, ['--parallel', '2', '--no-commit']);
    expect(noCommit.code).toBe(1);
    expect(noCommit.stderr).toMatch(/--parallel 2 merges the workers' work back as commits: drop --no-commit/);
    sandbox.cleanup();
    sandbox = makeSandbox({ branch: '001-demo' });
    specKitProject(sandbox, '## Phase 1: Setup\n- [ ] T001 [P] a\n');
    git(sandbox, ['rm', '-q', '--cached', TASKS_PATH]);
    git(sandbox, ['commit', '-qm', 'untrack tasks.md']);
    const untracked = await runRalph(sandbox, ['--parallel', '2']);
    expect(untracked.code).toBe(1);
    expect(untracked.stderr).toMatch(/--parallel 2: specs\/001-demo\/tasks\.md is not committed/);
    expect(agentCalls(sandbox)).toHaveLength(0);
  });

  it('a usage limit hit by two workers is one wait for all: no agent starts before the reset, no iteration or retry spent', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    prdProject(sandbox, prdStories(3));
    // Far enough away that both workers hit the limit before it, however slow the machine.
    const resetAt = Math.ceil(Date.now() / 1000) + 12;
    const recorded = readFileSync(path.join(__dirname, '..', 'fixtures', 'recordings', 'claude-oauth-unified5h.jsonl'), 'utf8').trim().split('\n');
    const rejected = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: resetAt, rateLimitType: 'five_hour' } });
    const barrier = (name: string) => path.join(sandbox.root, `started-${name}`);
    const limited = (n: number) => ({ touch: barrier(`${n}`), awaitFiles: [barrier('1'), barrier('2')], lines: [recorded[0], rejected, recorded[2], recorded[3]], exit: 1 });
    const done = (n: number) => ({ write: { [`story-${n}.txt`]: `story ${n}\n` }, lines: [report('completed')] });
    prdScenario(sandbox, [
      { match: '**US-001**', steps: [limited(1), done(1)] },
      { match: '**US-002**', steps: [limited(2), done(2)] },
      { match: '**US-003**', steps: [done(3)] },
    ]);
    const result = await runRalph(sandbox, ['--parallel', '2', '--retries', '1', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.match(/usage limit: waiting until/g), result.stderr).toHaveLength(1);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', iterations: 3, completedCount: 3 });
    expect(summary.records.map((record: { attempts: number }) => record.attempts)).toEqual([1, 1, 1]);
    // Every agent call after the two that hit the limit came after the reset.
    const later = agentCalls(sandbox).slice(2);
    expect(later).toHaveLength(3);
    for (const call of later) expect(Date.parse((call as unknown as { time: string }).time)).toBeGreaterThanOrEqual(resetAt * 1000);
    expectWorkersGone(sandbox);
  });

  it('a task that conflicts twice runs once more alone, and then merges', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    writeFileSync(path.join(sandbox.repo, 'shared.txt'), 'value: base\n');
    commitAll(sandbox, 'shared file');
    prdProject(sandbox, prdStories(3));
    const marker = (name: string) => path.join(sandbox.root, `marker-${name}`);
    const main = path.join(sandbox.repo, 'shared.txt');
    prdScenario(sandbox, [
      // US-001 merges first; US-002 conflicts with it.
      { match: '**US-001**', steps: [{ write: { 'shared.txt': 'value: one\n' }, touch: marker('1'), awaitFiles: [marker('1'), marker('2')], lines: [report('completed')] }] },
      {
        match: '**US-002**',
        steps: [
          { write: { 'shared.txt': 'value: two\n' }, touch: marker('2'), awaitFiles: [marker('1'), marker('2')], awaitContent: [{ file: main, includes: 'value: one' }], lines: [report('completed')] },
          // The rerun starts from "one", but US-003 merges "three" meanwhile: a second conflict.
          { write: { 'shared.txt': 'value: two again\n' }, touch: marker('2b'), awaitContent: [{ file: main, includes: 'value: three' }], lines: [report('completed')] },
          { write: { 'shared.txt': 'value: two, alone\n' }, lines: [report('completed')] },
        ],
      },
      // US-003 starts after US-001 merged (its base has "one") and finishes once US-002's rerun has begun.
      { match: '**US-003**', steps: [{ write: { 'shared.txt': 'value: three\n' }, awaitFiles: [marker('2b')], lines: [report('completed')] }] },
    ]);
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/US-002 conflicted when merged back \(shared\.txt\): it runs again on a fresh base/);
    expect(result.stderr).toMatch(/US-002 conflicted again \(shared\.txt\): it runs once more alone/);
    const summary = JSON.parse(result.stdout);
    const us2 = summary.records.filter((record: { taskId: string }) => record.taskId === 'US-002');
    expect(us2.map((record: { outcome: string }) => record.outcome)).toEqual(['fail', 'fail', 'pass']);
    // The run alone had the feature branch to itself: no other iteration overlapped it.
    const last = us2[2];
    const from = Date.parse(last.startedAt);
    const to = from + last.durationMs;
    for (const other of summary.records.filter((record: { iteration: number }) => record.iteration !== last.iteration)) {
      const otherFrom = Date.parse(other.startedAt);
      expect(otherFrom + other.durationMs <= from || otherFrom >= to, `iteration ${other.iteration} overlaps the lone run`).toBe(true);
    }
    expect(readFileSync(main, 'utf8')).toBe('value: two, alone\n');
    const subjects = commits(sandbox).map((commit) => commit.subject).filter((subject) => subject.startsWith('ralph: US-'));
    expect(subjects.sort()).toEqual(['ralph: US-001 Story 1', 'ralph: US-002 Story 2', 'ralph: US-003 Story 3']);
    expect(git(sandbox, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-kept/']).split('\n').filter(Boolean), result.stderr).toHaveLength(2);
    expectWorkersGone(sandbox);
  });

  it('green alone, red together: a merged result that fails the gates never lands; its task runs again on the new head with the gate\'s output', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    mkdirSync(path.join(sandbox.repo, 'parts'));
    writeFileSync(path.join(sandbox.repo, 'parts', 'base.txt'), 'base\n');
    // The "build": each name may be declared once across parts/ (as two `const current` would break a build).
    writeFileSync(path.join(sandbox.repo, 'check.sh'), 'dupes=$(cat parts/*.txt | sort | uniq -d)\nif [ -n "$dupes" ]; then echo "SyntaxError: Identifier \'$dupes\' has already been declared" >&2; exit 1; fi\necho "$(date +%s%N)" >> "$GATE_LOG"\n');
    commitAll(sandbox, 'parts and the check');
    prdProject(sandbox, prdStories(2));
    const gateLog = path.join(sandbox.root, 'gate-runs.log');
    sandbox.env.GATE_LOG = gateLog;
    const marker = (name: string) => path.join(sandbox.root, `marker-${name}`);
    prdScenario(
      sandbox,
      [1, 2].map((n) => ({
        match: `**US-00${n}**`,
        steps: [
          // Both declare "current", each in a file of its own: no textual conflict, and each passes alone.
          { write: { [`parts/story-${n}.txt`]: 'current\n' }, touch: marker(`${n}`), awaitFiles: [marker('1'), marker('2')], lines: [report('completed')] },
          // The one that lands second runs again on the new head, and declares another name.
          { write: { [`parts/story-${n}.txt`]: `current${n}\n` }, lines: [report('completed')] },
        ],
      })),
    );
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', '--gate', 'sh check.sh', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const records = JSON.parse(result.stdout).records as Array<{ taskId: string; outcome: string; reason: string }>;
    const failed = records.filter((record) => record.outcome === 'fail');
    expect(failed, result.stderr).toHaveLength(1);
    expect(failed[0]!.reason).toMatch(/^the work passed its gates alone but not merged on [0-9a-f]{12}, with the work landed since: sh check\.sh failed with exit 1: SyntaxError: Identifier 'current' has already been declared; it was not landed, the work is kept on branch ralph-kept\//);
    const second = failed[0]!.taskId;
    expect(records.filter((record) => record.taskId === second).map((record) => record.outcome)).toEqual(['fail', 'pass']);
    // The agent's second attempt was told why: the gate's line is in its prompt.
    const prompts = agentCalls(sandbox).map((call) => `${call.stdin}\n${call.argv.join(' ')}`);
    expect(prompts.filter((prompt) => prompt.includes(`**${second}**`)).at(-1)).toMatch(/Identifier 'current' has already been declared/);
    // Every commit the branch ever held passes the check.
    for (const sha of git(sandbox, ['rev-list', 'HEAD']).split('\n').filter(Boolean)) {
      const parts = git(sandbox, ['ls-tree', '--name-only', `${sha}`, 'parts/']).split('\n').filter(Boolean);
      const names = parts.flatMap((file) => git(sandbox, ['show', `${sha}:${file}`]).split('\n').filter(Boolean));
      expect(new Set(names).size, `commit ${sha.slice(0, 12)} holds a duplicate declaration: ${names.join(', ')}`).toBe(names.length);
    }
    expect(readFileSync(path.join(sandbox.repo, `parts/story-${second.slice(-1)}.txt`), 'utf8')).toBe(`current${second.slice(-1)}\n`);
    expectWorkersGone(sandbox);
  });

  it('three tasks ready at once, two of them red together: the batch is gated on its top and bisected; the bad one goes back, every commit on the branch is green and holds its task\'s work and state', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    mkdirSync(path.join(sandbox.repo, 'parts'));
    writeFileSync(path.join(sandbox.repo, 'parts', 'base.txt'), 'base\n');
    // The "build" fails on a name declared twice across parts/; every run is logged with what it saw.
    writeFileSync(path.join(sandbox.repo, 'check.sh'), 'seen="$(basename $PWD) $(git log -1 --format=%h): $(ls parts | tr "\\n" " ")"\ndupes=$(cat parts/*.txt | sort | uniq -d)\nif [ -n "$dupes" ]; then echo "fail $seen" >> "$GATE_LOG"; echo "SyntaxError: Identifier \'$dupes\' has already been declared" >&2; exit 1; fi\necho "pass $seen" >> "$GATE_LOG"\n');
    commitAll(sandbox, 'parts and the check');
    prdProject(sandbox, prdStories(3));
    const gateLog = path.join(sandbox.root, 'gate-runs.log');
    sandbox.env.GATE_LOG = gateLog;
    const marker = (name: string) => path.join(sandbox.root, `marker-${name}`);
    const all = [marker('1'), marker('2'), marker('3')];
    prdScenario(
      sandbox,
      [1, 2, 3].map((n) => ({
        match: `**US-00${n}**`,
        steps: [
          // US-002 and US-003 both declare "current": each passes alone, not together. All three finish at once.
          { write: { [`parts/story-${n}.txt`]: n === 1 ? 'one\n' : 'current\n' }, touch: marker(`${n}`), awaitFiles: all, lines: [report('completed')] },
          { write: { [`parts/story-${n}.txt`]: `current${n}\n` }, lines: [report('completed')] },
        ],
      })),
    );
    const result = await runRalph(sandbox, ['--parallel', '3', '--json', '--gate', 'sh check.sh', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const records = JSON.parse(result.stdout).records as Array<{ taskId: string; outcome: string; reason: string }>;
    const failed = records.filter((record) => record.outcome === 'fail');
    expect(failed, result.stderr).toHaveLength(1);
    const bad = failed[0]!.taskId;
    expect(['US-002', 'US-003']).toContain(bad);
    expect(failed[0]!.reason).toMatch(/^the work passed its gates alone but not merged on [0-9a-f]{12}, with the work landed since: sh check\.sh failed with exit 1: SyntaxError: Identifier 'current' has already been declared; it was not landed/);
    expect(records.filter((record) => record.taskId === bad).map((record) => record.outcome)).toEqual(['fail', 'pass']);
    expect(agentCalls(sandbox).map((call) => `${call.stdin}\n${call.argv.join(' ')}`).filter((prompt) => prompt.includes(`**${bad}**`)).at(-1)).toMatch(/Identifier 'current' has already been declared/);
    // The pair was caught by a gate on a stack holding both (never landed), and the stacks cost few runs: the
    // three own gates, the bad one's second, and at most three on landing (the batch, its bisection, the rest).
    const runs = readFileSync(gateLog, 'utf8').split('\n').filter(Boolean);
    const failing = runs.filter((run) => run.startsWith('fail'));
    expect(failing.length, runs.join('\n')).toBeGreaterThanOrEqual(1);
    for (const run of failing) expect(run, runs.join('\n')).toMatch(/story-2\.txt story-3\.txt/);
    expect(runs.length, runs.join('\n')).toBeLessThanOrEqual(7);
    // The branch never held a commit that fails the check; each story is marked passing by exactly one
    // commit, its own (trailers), which holds its work.
    const shas = git(sandbox, ['rev-list', '--reverse', 'HEAD']).split('\n').filter(Boolean);
    const done = new Map<string, string[]>();
    let before = new Set<string>();
    for (const sha of shas) {
      const parts = git(sandbox, ['ls-tree', '--name-only', sha, 'parts/']).split('\n').filter(Boolean);
      const names = parts.flatMap((file) => git(sandbox, ['show', `${sha}:${file}`]).split('\n').filter(Boolean));
      expect(new Set(names).size, `commit ${sha.slice(0, 12)} holds a duplicate declaration: ${names.join(', ')}`).toBe(names.length);
      if (!git(sandbox, ['ls-tree', '--name-only', sha, 'prd.json']).trim()) continue;
      const stories = JSON.parse(git(sandbox, ['show', `${sha}:prd.json`])).userStories as Array<{ id: string; passes: boolean }>;
      const now = new Set(stories.filter((story) => story.passes).map((story) => story.id));
      for (const id of now) if (!before.has(id)) done.set(id, [...(done.get(id) ?? []), sha]);
      before = now;
    }
    for (const id of ['US-001', 'US-002', 'US-003']) {
      expect(done.get(id), `${id} is marked passing by exactly one commit`).toHaveLength(1);
      const sha = done.get(id)![0]!;
      expect(git(sandbox, ['diff-tree', '--no-commit-id', '--name-only', '-r', sha]).split('\n'), `${id}'s commit holds its work`).toContain(`parts/story-${id.slice(-1)}.txt`);
      expect(git(sandbox, ['log', '-1', '--format=%B', sha])).toMatch(new RegExp(`^Ralph-Task: ${id}$[\\s\\S]*^Ralph-Worker: w\\d$`, 'm'));
    }
    expectWorkersGone(sandbox);
  });

  it('three good tasks ready at once: the two that find the branch moved land together after one gate run, each in its own commit with its state', async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    const gateLog = threeAtOnce(sandbox);
    const result = await runRalph(sandbox, ['--parallel', '3', '--json', '--gate', 'sh check.sh', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', completedCount: 3 });
    // Three own gate runs, none for the first landing (a fast-forward of what was gated), one for the other two.
    const runs = readFileSync(gateLog, 'utf8').split('\n').filter(Boolean);
    expect(runs, runs.join('\n')).toHaveLength(4);
    expect(runs.at(-1), runs.join('\n')).toMatch(/US-001\.txt US-002\.txt US-003\.txt $/);
    // One commit per story, each holding its work and marking only its own story done.
    const list = commits(sandbox).filter((commit) => commit.trailers['Ralph-Task']);
    expect(list.map((commit) => commit.trailers['Ralph-Task']).sort()).toEqual(['US-001', 'US-002', 'US-003']);
    for (const sha of git(sandbox, ['rev-list', '--max-count=3', 'HEAD']).split('\n').filter(Boolean)) {
      const id = git(sandbox, ['log', '-1', '--format=%(trailers:key=Ralph-Task,valueonly)', sha]).trim();
      const files = git(sandbox, ['diff-tree', '--no-commit-id', '--name-only', '-r', sha]).split('\n').filter(Boolean);
      expect(files, `${id}'s commit holds its work and its state`).toEqual(expect.arrayContaining([`work/${id}.txt`, 'prd.json']));
      expect(files.filter((file) => file.startsWith('work/')), `${id}'s commit holds no other story's work`).toEqual([`work/${id}.txt`]);
    }
    expectWorkersGone(sandbox);
  });

  // Killed inside a batch of two (the first lander alone, then the other two together): the batch's first
  // task committed with its state, the second's work on the branch without its state yet.
  it.each([['merged', 3]])('a batch killed at %s #%i: the same command again settles every task in the commit that holds its work', async (point, nth) => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    const gateLog = threeAtOnce(sandbox);
    const command = ['--parallel', '3', '--gate', 'sh check.sh', ...FAST];
    const crashed = await startNode(sandbox, command, { RALPH_TEST_CRASH_AT: `${point}:${nth}` }).done;
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    // It was a batch: one gate run on a stack of all three before the kill.
    expect(readFileSync(gateLog, 'utf8'), 'the batch was gated').toMatch(/US-001\.txt US-002\.txt US-003\.txt \n/);
    const rerun = await startNode(sandbox, command).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expectSettled(sandbox, 'prd', ['US-001', 'US-002', 'US-003']);
  });

  it.skipIf(bwrap.skip)(bwrap.title('workers under --sandbox bwrap: each agent writes its own worktree (not the repository beside it), and the work merges back'), async () => {
    sandbox = makeSandbox({ branch: 'ralph/demo' });
    // The fake agent's own bookkeeping must be in a folder the sandbox lets it write.
    const fake = path.join(sandbox.root, 'fake');
    mkdirSync(fake);
    Object.assign(sandbox.env, { FAKE_AGENT_LOG: path.join(fake, 'agent.log'), FAKE_AGENT_STATE: path.join(fake, 'agent.state'), FAKE_AGENT_PIDS: path.join(fake, 'agent.pids') });
    sandbox.agentLog = sandbox.env.FAKE_AGENT_LOG!;
    prdProject(sandbox, prdStories(2));
    writeFileSync(path.join(sandbox.repo, 'ralph.config.json'), JSON.stringify({ gate: ['true'], sandboxWritable: [fake] }));
    commitAll(sandbox, 'sandbox config');
    const barrier = (name: string) => path.join(fake, `started-${name}`);
    const scenarioFile = path.join(fake, 'scenario.json');
    writeFileSync(
      scenarioFile,
      JSON.stringify({
        byPrompt: [1, 2].map((n) => ({
          match: `**US-00${n}**`,
          steps: [{ write: { [`story-${n}.txt`]: `story ${n}\n` }, probe: { write: [path.join(sandbox.repo, `beside-${n}.txt`)], report: `probe-${n}.json` }, touch: barrier(`${n}`), awaitFiles: [barrier('1'), barrier('2')], lines: [report('completed')] }],
        })),
      }),
    );
    sandbox.env.FAKE_AGENT_SCENARIO = scenarioFile;
    const result = await runRalph(sandbox, ['--parallel', '2', '--sandbox', 'bwrap', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', completedCount: 2 });
    for (const n of [1, 2]) {
      expect(git(sandbox, ['show', `HEAD:story-${n}.txt`])).toBe(`story ${n}\n`);
      // The agent's writes outside its worktree did not reach the main worktree.
      expect(existsSync(path.join(sandbox.repo, `beside-${n}.txt`))).toBe(false);
    }
    expectWorkersGone(sandbox);
  });
});
