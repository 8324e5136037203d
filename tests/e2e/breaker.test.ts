// The no-progress breaker end to end: a loop that gets nowhere stops early with exit 1 and says which
// task never finished; a loop that changes files on its way to finishing a task is left alone.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, closeStep, FAST, makeSandbox, readBeads, runRalph, scenario, seedBeads, standardEpic, type Sandbox } from './helpers.ts';
import { answer, commitAll, prdProject, report } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

/** An agent step that says it worked, changes nothing and closes nothing. */
const idle = { lines: [answer('I looked into it and will continue next time.')] };
/** An agent step that changes a file without closing anything. */
const work = (n: number, extra: Record<string, unknown> = {}) => ({ write: { [`part-${n}.txt`]: `part ${n}\n` }, lines: [answer(`Wrote part ${n}.`)], ...extra });

describe('the no-progress breaker, beads mode', () => {
  it('stops an agent that never closes anything within its limit, exit 1, naming the bead', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(3));
    scenario(sandbox, [idle]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'failed', iterations: 5, tasksCompleted: 0, tasksRemaining: 3 });
    expect(summary.message).toContain('no progress in 5 iterations in a row');
    expect(summary.message).toContain('bead ws-9w6.2 "Task 1: build part 1" was tried 5 times and never closed');
    expect(summary.records.every((record: { changed: boolean }) => record.changed === false)).toBe(true);
    expect(agentCalls(sandbox)).toHaveLength(5);
    expect(result.stderr).toMatch(/failed: no progress in 5 iterations .* exit 1$/m);
  });

  it('does not count bd\'s own writes as progress when .beads/ is tracked by git', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    // Beads keeps its issues in git in most projects; a note on a bead then changes a tracked file.
    rmSync(path.join(sandbox.repo, '.gitignore'));
    commitAll(sandbox, 'track beads');
    scenario(sandbox, [{ run: [['bd', 'update', 'ws-9w6.2', '--notes', 'looked at it', '--json']], ...idle }]);
    const result = await runRalph(sandbox, ['--json', '--max-no-progress', '3', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout), result.stderr).toMatchObject({ iterations: 3 });
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: sandbox.repo, encoding: 'utf8' })).toContain('.beads/');
  });

  it('lets an agent that changes files each time and closes the task on its third iteration finish, exit 0', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    // Two iterations without a closed bead would stop the run if file changes did not count as progress.
    scenario(sandbox, [work(1), work(2), closeStep('ws-9w6.2', work(3)), closeStep('ws-9w6.3', work(4))]);
    const result = await runRalph(sandbox, ['--json', '--max-no-progress', '2', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', iterations: 4, tasksCompleted: 2 });
    expect(summary.records.map((record: { outcome: string; changed: boolean }) => [record.outcome, record.changed])).toEqual([
      ['no_change', true],
      ['no_change', true],
      ['pass', true],
      ['pass', true],
    ]);
    expect(readBeads(sandbox).filter((issue) => issue.status === 'closed').map((issue) => issue.id)).toEqual(['ws-9w6.1', 'ws-9w6.2', 'ws-9w6.3']);
  });

  it('counts an edit to a file that was already changed, not the same dirty tree again', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    writeFileSync(path.join(sandbox.repo, 'notes.txt'), 'left over from before\n');
    // The first iteration edits the uncommitted file again; the next ones leave it as it is.
    scenario(sandbox, [{ write: { 'notes.txt': 'left over from before, and more\n' }, lines: [answer('Edited the notes.')] }, idle]);
    const result = await runRalph(sandbox, ['--json', '--max-no-progress', '2', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { changed: boolean }) => record.changed)).toEqual([true, false, false]);
    expect(readFileSync(path.join(sandbox.repo, 'notes.txt'), 'utf8')).toBe('left over from before, and more\n');
  });

  it('stops after --max-task-iterations on one bead even while files change', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    scenario(sandbox, [work(1), work(2), work(3), work(4), work(5)]);
    const result = await runRalph(sandbox, ['--json', '--max-task-iterations', '3', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary.iterations).toBe(3);
    expect(summary.message).toContain('bead ws-9w6.2 "Task 1: build part 1" was worked on 3 iterations in a row and never closed, although files changed');
  });

  it('can be turned off: 0 runs the whole budget (exit 2)', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [idle]);
    const result = await runRalph(sandbox, ['--json', '--max-iterations', '7', ...FAST], { RALPH_MAX_NO_PROGRESS: '0' });
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'limit_reached', iterations: 7 });
  });

  it('--dry-run shows both limits and the reviewer, from the config file', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    writeFileSync(path.join(sandbox.repo, 'ralph.config.json'), JSON.stringify({ maxNoProgress: 4, maxTaskIterations: 12, review: 'claude' }));
    const result = await runRalph(sandbox, ['--dry-run']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('no-progress breaker: stop (exit 1) after 4 iterations in a row that finish no task and change nothing; or after 12 in a row on one task without finishing it');
    expect(result.stdout).toMatch(/^review: claude after each passing iteration/m);
    // The flag wins over the file: --review none turns the reviewer off.
    const json = await runRalph(sandbox, ['--dry-run', '--json', '--review', 'none']);
    expect(JSON.parse(json.stdout)).toMatchObject({ breaker: { noProgress: 4, taskIterations: 12 }, review: null });
  });
});

describe('the no-progress breaker, PRD mode (ralph commits)', () => {
  it('after ralph committed a story, iterations that change nothing are no progress', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [{ write: { 'app.txt': 'one\n' }, lines: [report('completed')] }, { lines: [report('partial')] }]);
    const result = await runRalph(sandbox, ['--json', '--max-no-progress', '2', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { outcome: string; changed: boolean }) => [record.outcome, record.changed])).toEqual([
      ['pass', true],
      ['no_change', false],
      ['no_change', false],
    ]);
    expect(summary.message).toContain('task US-002 "Second story" was tried 2 times and never completed');
  });

  it('uncommitted work a failed iteration left is not progress again in the next one', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox, undefined, 'node -e "process.exit(1)"');
    scenario(sandbox, [{ write: { 'app.txt': 'one\n' }, lines: [report('completed')] }, { lines: [report('partial')] }]);
    const result = await runRalph(sandbox, ['--json', '--max-no-progress', '2', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout).records.map((record: { changed: boolean }) => record.changed)).toEqual([true, false, false]);
  });
});
