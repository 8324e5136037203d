// Faults of the git repository: a detached HEAD, and no git identity when ralph has to commit.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentCalls,
  expectLockGone,
  expectNoSurvivors,
  makeSandbox,
  prdHistory,
  prdProject,
  QUICK,
  readPrdJson,
  report,
  runRalph,
  scenario,
  type Sandbox,
} from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const git = (box: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: box.repo, env: box.env, encoding: 'utf8' }).trim();

describe('detached HEAD', () => {
  it('warns and still runs; PRD commits land on the detached HEAD, the branch is untouched', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const branchHead = git(sandbox, ['rev-parse', 'HEAD']);
    git(sandbox, ['checkout', '-q', '--detach']);
    scenario(sandbox, [
      { write: { 'app.txt': 'one\n' }, lines: [report('completed')] },
      { write: { 'app.txt': 'one\ntwo\n' }, lines: [report('completed')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/warning: HEAD is detached: commits will not be on a branch/);
    expect(readPrdJson(sandbox).userStories.map((story) => story.passes)).toEqual([true, true]);
    expect(git(sandbox, ['log', '--format=%s', '-2']).split('\n')).toEqual(['ralph: US-002 Second story', 'ralph: US-001 First story']);
    expect(git(sandbox, ['rev-parse', '001-ralph-automation'])).toBe(branchHead);
    expect(() => git(sandbox, ['symbolic-ref', '-q', 'HEAD'])).toThrow();
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('missing git identity', () => {
  it('PRD mode cannot commit: exit 1 before any agent runs, naming the git identity and --no-commit; lock gone', async () => {
    sandbox = makeSandbox({ noIdentity: true });
    prdProject(sandbox);
    // No identity anywhere: none in the environment (noIdentity), none in HOME's config, and no guessing
    // from the host name (which some machines would allow).
    writeFileSync(path.join(sandbox.home, '.gitconfig'), '[user]\n\tuseConfigOnly = true\n');
    for (const key of ['EMAIL', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']) delete sandbox.env[key];
    scenario(sandbox, [{ write: { 'app.txt': 'one\n' }, lines: [report('completed')] }]);
    const head = git(sandbox, ['rev-parse', 'HEAD']);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code).toBe(1);
    const error = result.stderr.split('\n').filter((line) => line.startsWith('ralph: '));
    expect(error).toHaveLength(1);
    expect(error[0]).toMatch(/git identity/);
    expect(result.stderr).toMatch(/--no-commit/);
    expect(result.stderr).toMatch(/git config( --global)? user\.(name|email)/);
    expect(agentCalls(sandbox)).toHaveLength(0);
    expect(git(sandbox, ['rev-parse', 'HEAD'])).toBe(head);
    expect(readPrdJson(sandbox).userStories.map((story) => story.passes)).toEqual([false, false]);
    expect(prdHistory(sandbox)).toEqual([]);
    expectLockGone(sandbox);

    // --no-commit needs no identity: the run goes through.
    scenario(sandbox, [{ write: { 'app.txt': 'one\n' }, lines: [report('completed')] }]);
    const uncommitted = await runRalph(sandbox, ['--no-commit', '--max-iterations', '1', '--json', ...QUICK]);
    expect(uncommitted.code, uncommitted.stderr).toBe(2);
    expect(readPrdJson(sandbox).userStories[0]).toMatchObject({ passes: true });
    expect(git(sandbox, ['rev-parse', 'HEAD'])).toBe(head);
    expect(existsSync(path.join(sandbox.repo, 'app.txt'))).toBe(true);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});
