// The gh double follows real gh where ralph relies on it: what it refuses, what it prints, what it keeps.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAKES } from '../e2e/helpers.ts';

let dir: string;
let repo: string;
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_NOSYSTEM: '1', HOME: os.tmpdir() };
const git = (cwd: string, args: string[]): string => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();

function gh(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(path.join(FAKES, 'gh'), args, { cwd: repo, encoding: 'utf8', env: { ...GIT_ENV, FAKE_GH_STATE: path.join(dir, 'state.json'), FAKE_GH_LOG: path.join(dir, 'gh.log'), ...env } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'fake-gh-'));
  repo = path.join(dir, 'repo');
  git(dir, ['init', '-q', '--bare', '-b', 'main', 'remote.git']);
  git(dir, ['init', '-q', '-b', 'main', 'repo']);
  git(repo, ['commit', '-q', '--allow-empty', '-m', 'one']);
  git(repo, ['remote', 'add', 'origin', path.join(dir, 'remote.git')]);
  git(repo, ['push', '-q', 'origin', 'main']);
  git(repo, ['switch', '-q', '-c', 'feat']);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the gh double', () => {
  it('refuses a flag gh does not have and a JSON field it does not know', () => {
    const flag = gh(['pr', 'create', '--draft', '--target', 'main']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toMatch(/^unknown flag: '--target' in --target\n\nUsage:  gh pr create \[flags\]/);
    const field = gh(['pr', 'list', '--json', 'number,draft']);
    expect(field.code).toBe(1);
    expect(field.stderr).toMatch(/^Unknown JSON field: "draft"\nAvailable fields:\n/);
  });

  it('opens a pull request only for a head branch the remote has, with commits of its own, once', () => {
    writeFileSync(path.join(dir, 'body.md'), 'the body\n');
    const create = ['pr', 'create', '--draft', '--base', 'main', '--head', 'feat', '--title', 'T', '--body-file', path.join(dir, 'body.md')];
    expect(gh(create).stderr).toBe("pull request create failed: GraphQL: Head sha can't be blank, No commits between main and feat, Head ref must be a branch (createPullRequest)\n");
    git(repo, ['push', '-q', 'origin', 'feat']);
    expect(gh(create).stderr).toBe('pull request create failed: GraphQL: No commits between main and feat (createPullRequest)\n');
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'two']);
    git(repo, ['push', '-q', 'origin', 'feat']);
    expect(gh(create)).toEqual({ code: 0, stdout: 'https://github.com/octo/demo/pull/1\n', stderr: '' });
    expect(gh(create).stderr).toBe('a pull request for branch "feat" into branch "main" already exists:\nhttps://github.com/octo/demo/pull/1\n');
    expect(JSON.parse(gh(['pr', 'list', '--head', 'feat', '--json', 'number,isDraft,body']).stdout)).toEqual([{ number: 1, isDraft: true, body: 'the body\n' }]);
    expect(gh(['pr', 'ready', '1']).stderr).toBe('✓ Pull request octo/demo#1 (T) is marked as "ready for review"\n');
    expect(gh(['pr', 'list', '--head', 'other', '--json', 'number']).stdout).toBe('[]\n');
    const log = readFileSync(path.join(dir, 'gh.log'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(log.filter((call) => call.argv[1] === 'create').map((call) => call.body)).toEqual(['the body\n', 'the body\n', 'the body\n', 'the body\n']);
  });

  it('without a login: auth status says so (exit 1), the rest asks for gh auth login (exit 4)', () => {
    expect(gh(['auth', 'status'], { FAKE_GH_AUTH: 'logged-out' })).toMatchObject({ code: 1, stderr: 'You are not logged into any GitHub hosts. To log in, run: gh auth login\n' });
    expect(gh(['pr', 'list'], { FAKE_GH_AUTH: 'logged-out' }).code).toBe(4);
    expect(gh(['auth', 'status']).code).toBe(0);
  });
});
