// An agent that ticks its tasks but commits nothing (many forget): ralph commits the iteration's own paths
// itself, so every mode ends with a clean tree, and says so; the user's earlier changes stay theirs, out of
// every commit and every files-changed list. And a run carrying the session's numbering on counts its own
// iterations against its own limit.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, commitAll, FEATURE, prdProject, report, SNARK, specKitProject, TASKS_PATH, tick } from './projects.ts';
import { closeStep, FAST, makeSandbox, runRalph, scenario, seedBeads, standardEpic, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const git = (box: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: box.repo, encoding: 'utf8', env: box.env });
const status = (box: Sandbox): string[] => git(box, ['status', '--porcelain', '--untracked-files=all']).split('\n').filter(Boolean).sort();
const subjects = (box: Sandbox, base: string): string[] => git(box, ['log', '--format=%s', `${base}..HEAD`]).split('\n').filter(Boolean);
const filesOf = (box: Sandbox, commit: string): string[] => git(box, ['show', '--name-only', '--format=', commit]).split('\n').filter(Boolean).sort();
/** The lines of the plain view, without their time stamps. */
const viewLines = (stderr: string): string[] => stderr.split('\n').map((line) => line.replace(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /, ''));
const TASKS = ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', '', '## Phase 2: Story', '', '- [ ] T002 Create src/b.ts', ''].join('\n');

describe('an agent that leaves its work uncommitted', () => {
  it('Spec Kit: ralph commits each passing iteration\'s own paths and says so; the tree ends clean but for the user\'s own changes, which no list names', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    // The user's own uncommitted work from before the run.
    writeFileSync(path.join(sandbox.repo, 'README.md'), '# sample project\n\nhalf-written\n');
    writeFileSync(path.join(sandbox.repo, '.env'), 'STRIPE_KEY=sk_test_user_own_value_123\n');
    scenario(sandbox, [
      // Commits nothing at all.
      { write: { 'src/a.ts': 'a\n' }, edit: [tick('T001')], lines: [answer('Did T001.')] },
      // Commits its tick, forgets its code.
      { write: { 'src/b.ts': 'b\n' }, edit: [tick('T002')], after: [['git', 'add', TASKS_PATH], ['git', 'commit', '-qm', 'feat(demo): T002']], lines: [answer('Did T002.\n\n<promise>COMPLETE</promise>')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    // Clean but for what the user had changed before the run.
    expect(status(sandbox)).toEqual([' M README.md', '?? .env']);
    expect(subjects(sandbox, base)).toEqual(['ralph: T002 Create src/b.ts', 'feat(demo): T002', 'ralph: T001 Create src/a.ts']);
    const [second, agents, first] = git(sandbox, ['rev-list', `${base}..HEAD`]).split('\n').filter(Boolean);
    expect(filesOf(sandbox, first!)).toEqual([`${FEATURE}/progress.txt`, `${FEATURE}/ralph-tasks.json`, TASKS_PATH, 'src/a.ts']);
    // ralph's record went into the agent's commit; what it forgot, into ralph's own.
    expect(filesOf(sandbox, agents!)).toEqual([`${FEATURE}/progress.txt`, `${FEATURE}/ralph-tasks.json`, TASKS_PATH]);
    expect(filesOf(sandbox, second!)).toEqual(['src/b.ts']);
    const lines = viewLines(result.stderr);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^iteration 1 T001: pass in \\S+, done: T001; committed by ralph as ${first!.slice(0, 7)}: the agent left src/a\\.ts uncommitted$`)));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^iteration 2 T002: pass in \\S+, done: T002; committed by ralph as ${second!.slice(0, 7)}: the agent left src/b\\.ts uncommitted$`)));
    expect(result.stderr).not.toContain('left uncommitted');
    // Files changed: only what the iteration changed, never the user's README.md or .env, never the task state.
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { filesChanged: string[] }) => record.filesChanged)).toEqual([['src/a.ts'], ['src/b.ts']]);
    expect(summary.records.map((record: { committedForAgent?: string[] }) => record.committedForAgent)).toEqual([['src/a.ts'], ['src/b.ts']]);
    expect(summary.uncommitted).toBeUndefined();
    const progress = git(sandbox, ['show', `HEAD:${FEATURE}/progress.txt`]);
    expect(progress).toContain('- Tasks completed: T001\n- Files changed:\n  - src/a.ts\n');
    expect(progress).toContain('- Tasks completed: T002\n- Files changed:\n  - src/b.ts\n');
    expect(progress).not.toMatch(/README|\.env/);
    const reports = path.join(sandbox.repo, '.ralph', 'reports');
    const markdown = readFileSync(path.join(reports, readdirSync(reports).find((file) => file.endsWith('.md'))!), 'utf8');
    expect(markdown).toMatch(/\| 1 \| T001 Create src\/a\.ts \| pass \|[^\n]*\| 1: src\/a\.ts \|/);
    expect(markdown).not.toMatch(/README|\.env/);

    // A later run finds nothing of ralph's uncommitted: no false alarm about the task state.
    const again = await runRalph(sandbox, ['--dry-run']);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).not.toContain('the task state');
    expect(again.stdout).toContain('commits: the agent commits its own work (ralph adds its task state to those commits, and commits what the agent leaves of a passing iteration;');
    expect(again.stdout).toContain('note: uncommitted changes from before the run (2 paths: .env, README.md)');
  });

  it('Spec Kit: a last task that finished nothing leaves its task state to the last commit, and the tree clean', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    scenario(sandbox, [{ lines: [answer('Looked around, did nothing.')] }]);
    const result = await runRalph(sandbox, ['--max-iterations', '1', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    expect(status(sandbox)).toEqual([]);
    expect(subjects(sandbox, base)).toEqual([expect.stringMatching(/^ralph: task state at the end of session /)]);
    expect(filesOf(sandbox, 'HEAD')).toEqual([`${FEATURE}/progress.txt`, `${FEATURE}/ralph-tasks.json`]);
    expect(result.stderr).not.toContain('left uncommitted');
  });

  it("Spec Kit: what the project's after_implement hook leaves is committed too", async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    writeFileSync(path.join(sandbox.repo, '.specify', 'extensions.yml'), ['installed:', '- review', 'hooks:', '  after_implement:', '  - extension: review', '    command: speckit.review.run', '    enabled: true', '    optional: false', '    description: Review the implementation', ''].join('\n'));
    commitAll(sandbox, 'extension hooks');
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    scenario(sandbox, [
      { write: { 'src/a.ts': 'a\n', 'src/b.ts': 'b\n' }, edit: [tick('T001'), tick('T002')], lines: [answer('Did T001 and T002.')] },
      { write: { 'REVIEW.md': 'looks good\n' }, lines: [answer('Reviewed.')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(status(sandbox)).toEqual([]);
    expect(subjects(sandbox, base)).toEqual(["ralph: after_implement:speckit.review.run review extension's hook: Review the implementation", 'ralph: T001 Create src/a.ts']);
    expect(filesOf(sandbox, 'HEAD')).toEqual(['REVIEW.md', `${FEATURE}/progress.txt`, `${FEATURE}/ralph-tasks.json`]);
    expect(viewLines(result.stderr)).toContainEqual(expect.stringMatching(/^iteration 2 after_implement:speckit\.review\.run: pass in \S+; committed by ralph as [0-9a-f]{7}: the agent left REVIEW\.md uncommitted$/));
  });

  it('beads: the agent closes its bead and commits nothing; ralph commits its work', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    scenario(sandbox, [closeStep('ws-9w6.2', { write: { 'one.txt': '1\n' } })]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(status(sandbox)).toEqual([]);
    expect(subjects(sandbox, base)).toEqual(['ralph: ws-9w6.2 Task 1: build part 1']);
    expect(filesOf(sandbox, 'HEAD')).toEqual(['one.txt']);
    expect(viewLines(result.stderr)).toContainEqual(expect.stringMatching(/^iteration 1 ws-9w6\.2: pass in \S+, done: ws-9w6\.2; committed by ralph as [0-9a-f]{7}: the agent left one\.txt uncommitted$/));
  });

  it("PRD: files changed name the story's own work, never the user's .env and README.md nor prd.json and progress.txt", async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, { ...SNARK, userStories: SNARK.userStories.slice(0, 1) });
    writeFileSync(path.join(sandbox.repo, '.env'), 'STRIPE_KEY=sk_test_user_own_value_123\n');
    writeFileSync(path.join(sandbox.repo, 'README.md'), '# sample project\n\nhalf-written\n');
    scenario(sandbox, [{ write: { 'src/mod.ts': 'export const mod = (a: number, b: number) => a % b;\n' }, lines: [report('completed')] }]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.records[0].filesChanged).toEqual(['src/mod.ts']);
    const markdown = readFileSync(path.join(sandbox.repo, '.ralph', 'reports', `${summary.sessionId}.md`), 'utf8');
    expect(markdown).toMatch(/\| 1 \| US-001 First story \| pass \|[^\n]*\| 1: src\/mod\.ts \|/);
    expect(status(sandbox)).toEqual([' M README.md', '?? .env']);
  });

  it('PRD: a story whose gate fails is not committed, and the end of the run says what stays uncommitted', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, { ...SNARK, userStories: SNARK.userStories.slice(0, 1) }, 'node -e "process.exit(1)"');
    scenario(sandbox, [{ write: { 'app.txt': 'one\n' }, lines: [report('completed')] }]);
    const result = await runRalph(sandbox, ['--max-iterations', '1', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    // The task state went into the last commit; the failed story's work is said, not committed.
    expect(status(sandbox)).toEqual(['?? app.txt']);
    expect(git(sandbox, ['log', '-1', '--format=%s'])).toMatch(/^ralph: task state at the end of session /);
    expect(result.stderr).toContain("warning: left uncommitted: the work of tasks that did not pass stays uncommitted (1 path: app.txt); ralph commits a task's work once it passes");
    expect(JSON.parse(result.stdout).uncommitted).toEqual(['app.txt']);
  });

  it('--no-commit: ralph commits nothing, and the end of the run says what stays uncommitted', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    writeFileSync(path.join(sandbox.repo, 'README.md'), '# sample project\n\nhalf-written\n');
    scenario(sandbox, [
      { write: { 'src/a.ts': 'a\n' }, edit: [tick('T001')], lines: [answer('Did T001.')] },
      { write: { 'src/b.ts': 'b\n' }, edit: [tick('T002')], lines: [answer('Did T002.\n\n<promise>COMPLETE</promise>')] },
    ]);
    const head = git(sandbox, ['rev-parse', 'HEAD']);
    const result = await runRalph(sandbox, ['--no-commit', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(git(sandbox, ['rev-parse', 'HEAD'])).toBe(head);
    expect(result.stderr).toContain(`warning: left uncommitted: --no-commit: what this run changed stays uncommitted (5 paths: ${FEATURE}/progress.txt, ${FEATURE}/ralph-tasks.json, ${TASKS_PATH}, src/a.ts, src/b.ts); commit it yourself`);
    expect(JSON.parse(result.stdout).uncommitted).toEqual([`${FEATURE}/progress.txt`, `${FEATURE}/ralph-tasks.json`, TASKS_PATH, 'src/a.ts', 'src/b.ts']);

    // A later run (nothing left to do) keeps its word: the task state goes into its last commit; the code,
    // uncommitted before it started, is the user's now and stays as it is.
    const later = await runRalph(sandbox, FAST);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stderr).toContain(`warning: the task state ${FEATURE}/progress.txt, ${FEATURE}/ralph-tasks.json, ${TASKS_PATH} had uncommitted changes: ralph commits them with the task state`);
    expect(git(sandbox, ['log', '-1', '--format=%s'])).toMatch(/^ralph: task state at the end of session /);
    expect(filesOf(sandbox, 'HEAD')).toEqual([`${FEATURE}/progress.txt`, `${FEATURE}/ralph-tasks.json`, TASKS_PATH]);
    expect(status(sandbox)).toEqual([' M README.md', '?? src/a.ts', '?? src/b.ts']);
  });
});

describe('counting iterations across runs', () => {
  it('a run that carries the session\'s numbering on counts its own iterations against its own limit; the records keep the session\'s numbers', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, ['# Tasks: demo', '', '## Phase 1: Setup', '', ...[1, 2, 3, 4].map((n) => `- [ ] T00${n} Create src/${n}.ts`), ''].join('\n'));
    const step = (n: number) => ({ write: { [`src/${n}.ts`]: `${n}\n` }, edit: [tick(`T00${n}`)], lines: [answer(`Did T00${n}.`)] });
    scenario(sandbox, [step(1), step(2), step(3), step(4)]);
    const first = await runRalph(sandbox, ['--max-iterations', '2', ...FAST]);
    expect(first.code, first.stderr).toBe(2);
    expect(viewLines(first.stderr)).toContainEqual('iteration 1/2: T001 Create src/1.ts');
    expect(viewLines(first.stderr)).toContainEqual('iteration 2/2: T002 Create src/2.ts');
    const second = await runRalph(sandbox, ['--max-iterations', '2', ...FAST]);
    expect(second.code, second.stderr).toBe(0);
    const lines = viewLines(second.stderr);
    expect(lines).toContainEqual('iteration 3 (1/2 in this run): T003 Create src/3.ts');
    expect(lines).toContainEqual('iteration 4 (2/2 in this run): T004 Create src/4.ts');
    expect(lines.join('\n')).not.toMatch(/iteration \d+\/4/);
    expect(lines).toContainEqual(expect.stringMatching(/^iteration 4 T004: pass in /));
    // ralph status: the last iteration, this run's count against this run's limit.
    const shown = await runRalph(sandbox, ['status']);
    expect(shown.stdout).toContain('  iteration:  4 (2/2 in this run)');
    const json = JSON.parse((await runRalph(sandbox, ['status', '--json'])).stdout);
    expect(json).toMatchObject({ iteration: 4, ofRun: 2, maxIterations: 2 });
    // The records go on numbering the session.
    expect(readFileSync(path.join(sandbox.repo, FEATURE, 'progress.txt'), 'utf8')).toContain('## Iteration 4 - ');
  });
});
