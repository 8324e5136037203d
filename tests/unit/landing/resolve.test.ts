// A conflict left for the agent to resolve, against a real repository: the markers, the state files as the
// branch has them, what counts as resolved, and the way back when it is not.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git } from '../../../lib/repo/git.ts';
import { bounded, markersLeft, mergeWithMarkers, resolveOnto, type Resolution } from '../../../lib/landing/resolve.ts';
import { resolvePrompt } from '../../../lib/session/resolver.ts';
import { tempDir } from '../../support/temp.ts';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };

/** base → target (landed since: "one") and base → work (the task: "two", and its state file). */
function repo() {
  const dir = tempDir('ralph-resolve-');
  const run = (...args: string[]): string => execFileSync('git', args, { cwd: dir, env: ENV, encoding: 'utf8' }).trim();
  run('init', '-q', '-b', 'main');
  // git merges only as someone (ralph's preflight makes sure a run has an identity).
  run('config', 'user.name', 'T');
  run('config', 'user.email', 't@example.test');
  const write = (file: string, text: string): void => writeFileSync(path.join(dir, file), text);
  write('shared.txt', 'value: base\nother: base\n');
  write('prd.json', '{"state":"base"}\n');
  run('add', '-A');
  run('commit', '-q', '-m', 'base');
  const base = run('rev-parse', 'HEAD');
  write('shared.txt', 'value: one\nother: base\n');
  write('prd.json', '{"state":"target"}\n');
  run('commit', '-qam', 'landed since');
  const target = run('rev-parse', 'HEAD');
  run('checkout', '-q', base);
  write('shared.txt', 'value: two\nother: two\n');
  write('prd.json', '{"state":"work"}\n');
  run('commit', '-qam', 'the task');
  const work = run('rev-parse', 'HEAD');
  return { dir, git: new Git(dir), run, base, target, work, read: (file: string) => readFileSync(path.join(dir, file), 'utf8'), write };
}

const ok = (overrides: Partial<Resolution> = {}): Resolution => ({ ok: true, costUsd: 0.01, inputTokens: 1, outputTokens: 2, durationMs: 5, ...overrides });

describe('a conflict for the agent', () => {
  it('merges the work onto the target with markers where git could not merge, the state files as the target has them', async () => {
    const r = repo();
    const markers = await mergeWithMarkers(r.git, r.base, r.work, r.target, ['prd.json']);
    expect(markers?.files).toEqual(['shared.txt']);
    expect(r.run('rev-parse', 'HEAD')).toBe(r.target);
    expect(r.read('shared.txt')).toMatch(/^<<<<<<< HEAD\nvalue: one\nother: base\n=======\nvalue: two\nother: two\n>>>>>>> /m);
    expect(r.read('prd.json')).toBe('{"state":"target"}\n');
    expect(markers!.diff).toMatch(/^\+value: two$/m);
    expect(markers!.diff).not.toMatch(/prd\.json/);
    expect(markers!.hunks).toMatch(/^\+\+<<<<<<< HEAD$/m);
  });

  it('commits what the agent resolved as one commit on the target, leaving out the state files', async () => {
    const r = repo();
    const resolved = await resolveOnto(r.git, r.dir, r.base, r.work, r.target, ['prd.json'], async () => {
      r.write('shared.txt', 'value: one and two\nother: two\n');
      r.write('prd.json', '{"state":"the agent wrote this"}\n');
      return ok();
    }, 'ralph: US-002 Story 2\n');
    expect(resolved).toMatchObject({ files: ['shared.txt'], resolution: { ok: true, costUsd: 0.01 } });
    const head = (resolved as { head: string }).head;
    expect(r.run('rev-parse', `${head}^`)).toBe(r.target);
    expect(r.run('show', `${head}:shared.txt`)).toBe('value: one and two\nother: two');
    expect(r.run('show', `${head}:prd.json`)).toBe('{"state":"target"}');
    expect(r.run('log', '-1', '--format=%s', head)).toBe('ralph: US-002 Story 2');
    expect(r.run('status', '--porcelain')).toBe('');
  });

  it.each([
    ['the agent failed', async () => ok({ ok: false, reason: 'rate limited' }), /^the agent could not resolve it \(rate limited\)$/],
    ['a marker is left', async () => ok(), /^the agent left conflict markers in shared\.txt$/],
  ] as const)('goes back to the work when %s, and says why', async (_what, make, why) => {
    const r = repo();
    const resolved = await resolveOnto(r.git, r.dir, r.base, r.work, r.target, ['prd.json'], make, 'ralph: x\n');
    expect('why' in resolved && resolved.why).toMatch(why);
    expect(r.run('rev-parse', 'HEAD')).toBe(r.work);
    expect(r.run('status', '--porcelain')).toBe('');
  });

  it('goes back when the resolution drops every change of the task (nothing left to commit)', async () => {
    const r = repo();
    const resolved = await resolveOnto(r.git, r.dir, r.base, r.work, r.target, ['prd.json'], async () => {
      r.run('checkout', 'HEAD', '--', 'shared.txt');
      return ok();
    }, 'ralph: x\n');
    expect(resolved).toMatchObject({ why: "the agent's resolution leaves nothing of the task's work" });
    expect(r.run('rev-parse', 'HEAD')).toBe(r.work);
  });

  it('reads markers line by line: a line that only mentions one is not a marker', () => {
    const r = repo();
    r.write('a.txt', 'text with <<<<<<< in the middle\n');
    r.write('b.txt', 'x\n>>>>>>> theirs\n');
    r.write('c.txt', '<<<<<<< HEAD\nx\n=======\ny\n');
    expect(markersLeft(r.dir, ['a.txt', 'b.txt', 'c.txt', 'gone.txt'])).toEqual(['b.txt', 'c.txt']);
  });

  it('bounds what goes into the prompt, saying how much was left out', () => {
    expect(bounded('abcdef', 4)).toBe('abcd\n… (2 more characters not shown)\n');
    expect(bounded('abcd', 4)).toBe('abcd');
  });

  it('fills the prompt template with the task, the files, its diff and the hunks', () => {
    const text = resolvePrompt('{TASK_ID} {TASK_TITLE} | {CONFLICT_FILES} | {TASK_DIFF} | {CONFLICT_HUNKS} | {UNKNOWN}', { id: 'US-2', title: 'Two', status: 'open' }, { files: ['a', 'b'], diff: '+d\n', hunks: '++h\n' });
    expect(text).toBe('US-2 Two | a, b | +d | ++h | {UNKNOWN}');
  });
});
