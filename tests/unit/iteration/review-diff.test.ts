import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reviewDiff } from '../../../lib/iteration/review-diff.ts';
import { tempDir } from '../../support/temp.ts';

const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test' };

function repo(): { dir: string; base: string } {
  const dir = tempDir('ralph-diff-');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  writeFileSync(path.join(dir, 'a.txt'), 'one\n');
  execFileSync('git', ['add', '-A'], { cwd: dir });
  execFileSync('git', ['commit', '-qm', 'init'], { cwd: dir, env });
  return { dir, base: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim() };
}

describe('reviewDiff', () => {
  it('shows committed and uncommitted changes since the base, and new files, but not ralph\'s own', async () => {
    const { dir, base } = repo();
    writeFileSync(path.join(dir, 'a.txt'), 'one\ntwo\n');
    execFileSync('git', ['commit', '-qam', 'agent commit'], { cwd: dir, env });
    writeFileSync(path.join(dir, 'a.txt'), 'one\ntwo\nthree\n');
    writeFileSync(path.join(dir, 'new.ts'), 'export const x = 1;\n');
    mkdirSync(path.join(dir, '.ralph'));
    writeFileSync(path.join(dir, '.ralph', 'status.json'), '{}');
    const diff = await reviewDiff(dir, base);
    expect(diff.truncated).toBe(false);
    expect(diff.stat).toContain('a.txt');
    expect(diff.stat).toContain('new.ts (new, untracked)');
    expect(diff.diff).toContain('+two');
    expect(diff.diff).toContain('+three');
    expect(diff.diff).toContain('+export const x = 1;');
    expect(diff.diff).not.toContain('.ralph');
    expect(diff.stat).not.toContain('.ralph');
  });

  it('stays within its budget and says so, still naming every file', async () => {
    const { dir, base } = repo();
    writeFileSync(path.join(dir, 'a.txt'), `${'x'.repeat(200)}\n`.repeat(500));
    writeFileSync(path.join(dir, 'late.txt'), 'late\n');
    const diff = await reviewDiff(dir, base, 4096);
    expect(diff.truncated).toBe(true);
    expect(Buffer.byteLength(diff.diff)).toBeLessThanOrEqual(4096);
    expect(diff.stat).toContain('late.txt (new, untracked)');
  });

  it('shows a binary new file by name only', async () => {
    const { dir, base } = repo();
    writeFileSync(path.join(dir, 'blob.bin'), Buffer.from([0, 1, 2, 0, 3]));
    const diff = await reviewDiff(dir, base);
    expect(diff.diff).toContain('new file blob.bin (binary)');
  });

  it('says when nothing changed', async () => {
    const { dir, base } = repo();
    expect(await reviewDiff(dir, base)).toEqual({ stat: '(no changes)', diff: '', truncated: false });
  });
});
