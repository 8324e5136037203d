// Replaying a worker's commits onto the branch's head, against a real repository: the state files are
// ralph's to write, so a conflict only in them is no conflict (the head's version stays); any other aborts
// and names its paths, leaving the worktree as it was.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git } from '../../../lib/repo/git.ts';
import { pickOnto, replayOnto } from '../../../lib/landing/replay.ts';
import { tempDir } from '../../support/temp.ts';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };

/** base → target (landed since: prd.json, and `shared` when given) and base → work (the worker's commit). */
function repo(targetShared?: string) {
  const dir = tempDir('ralph-replay-');
  const run = (...args: string[]): string => execFileSync('git', args, { cwd: dir, env: ENV, encoding: 'utf8' }).trim();
  const write = (file: string, text: string): void => writeFileSync(path.join(dir, file), text);
  run('init', '-q', '-b', 'main');
  run('config', 'user.name', 'T');
  run('config', 'user.email', 't@example.test');
  write('prd.json', '{"state":"base"}\n');
  write('shared.txt', 'base\n');
  run('add', '-A');
  run('commit', '-qm', 'base');
  const base = run('rev-parse', 'HEAD');
  write('prd.json', '{"state":"target"}\n');
  if (targetShared) write('shared.txt', targetShared);
  run('commit', '-qam', 'landed since');
  const target = run('rev-parse', 'HEAD');
  run('checkout', '-q', base);
  write('prd.json', '{"state":"work"}\n');
  write('shared.txt', 'work\n');
  run('commit', '-qam', 'the task');
  const work = run('rev-parse', 'HEAD');
  return { dir, git: new Git(dir), run, base, target, work, read: (file: string) => readFileSync(path.join(dir, file), 'utf8') };
}

describe('replayOnto', () => {
  it('replays over a conflict only in the state files: the head keeps its state, the work lands', async () => {
    const r = repo();
    const replay = await replayOnto(r.git, r.base, r.target, ['prd.json']);
    expect(replay).toMatchObject({ commits: 1 });
    const head = (replay as { head: string }).head;
    expect(r.run('rev-parse', `${head}^`)).toBe(r.target);
    expect(r.run('show', `${head}:shared.txt`)).toBe('work');
    expect(r.run('show', `${head}:prd.json`)).toBe('{"state":"target"}');
    expect(r.run('log', '-1', '--format=%s', head)).toBe('the task');
  });

  it('aborts on a conflict in the work itself, naming its paths, and leaves the worktree at the work', async () => {
    const r = repo('target\n');
    expect(await replayOnto(r.git, r.base, r.target, ['prd.json'])).toEqual({ conflict: ['shared.txt'] });
    expect(r.run('rev-parse', 'HEAD')).toBe(r.work);
    expect(r.run('status', '--porcelain')).toBe('');
  });
});

// The agent's resolution of a conflict is one commit on the head it resolved on. When the remote moved again
// before it landed (another host first), that commit is what goes onto the new head, once.
describe('pickOnto: a resolved conflict meeting a head that moved again', () => {
  /** The agent's resolution on `target`, then `moved`: the head after another landing, touching `file`. */
  function resolvedThenMoved(file: string, text: string) {
    const r = repo('target\n');
    r.run('checkout', '-q', r.target);
    writeFileSync(path.join(r.dir, 'shared.txt'), 'target\nwork\n');
    r.run('commit', '-qam', 'ralph: US-002 resolved');
    const resolved = r.run('rev-parse', 'HEAD');
    r.run('checkout', '-q', r.target);
    writeFileSync(path.join(r.dir, file), text);
    r.run('add', '-A');
    r.run('commit', '-qm', 'landed by another host');
    const moved = r.run('rev-parse', 'HEAD');
    r.run('checkout', '-q', resolved);
    return { ...r, resolved, moved };
  }

  it('goes onto the new head as it is, when the other landing touched other files', async () => {
    const r = resolvedThenMoved('other.txt', 'other\n');
    const picked = await pickOnto(r.git, r.resolved, r.moved);
    expect(picked).toMatchObject({ commits: 1 });
    const head = (picked as { head: string }).head;
    expect(r.run('rev-parse', `${head}^`)).toBe(r.moved);
    expect(r.run('show', `${head}:shared.txt`)).toBe('target\nwork');
    expect(r.run('show', `${head}:other.txt`)).toBe('other');
    expect(r.run('log', '-1', '--format=%s', head)).toBe('ralph: US-002 resolved');
  });

  it('conflicts again when the other landing changed the same lines: names the paths, back at the resolution, clean', async () => {
    const r = resolvedThenMoved('shared.txt', 'target\nthird host\n');
    expect(await pickOnto(r.git, r.resolved, r.moved)).toEqual({ conflict: ['shared.txt'] });
    expect(r.run('rev-parse', 'HEAD')).toBe(r.resolved);
    expect(r.run('status', '--porcelain')).toBe('');
  });
});
