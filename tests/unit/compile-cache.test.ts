// bin/compile-cache.mjs: ralph's modules compiled once and started from node_modules/.cache/ralph/<key>/.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheKey, sourceFiles } from '../../bin/compile-cache.mjs';
import { PROJECT } from '../e2e/helpers.ts';

describe('the cache key', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('changes with a file’s content, a new file and the compiler’s version, and only then', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-cache-key-'));
    writeFileSync(path.join(dir, 'ralph.ts'), 'export {};\n');
    cpSync(path.join(PROJECT, 'lib', 'duration.ts'), path.join(dir, 'lib', 'duration.ts'), { recursive: true });
    const files = sourceFiles(dir);
    expect(files).toEqual(['ralph.ts', path.join('lib', 'duration.ts')]);
    const key = cacheKey(dir, files, '0.25.0');
    expect(cacheKey(dir, files, '0.25.0')).toBe(key);
    expect(cacheKey(dir, files, '0.25.1')).not.toBe(key);
    writeFileSync(path.join(dir, 'lib', 'duration.ts'), '// changed\n', { flag: 'a' });
    expect(cacheKey(dir, files, '0.25.0')).not.toBe(key);
    writeFileSync(path.join(dir, 'lib', 'new.ts'), 'export {};\n');
    expect(sourceFiles(dir)).toContain(path.join('lib', 'new.ts'));
  });
});

describe('starting from the cache', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const BIN = path.join(PROJECT, 'bin', 'ralph.mjs');
  const start = (env: NodeJS.ProcessEnv, args = ['--help']) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

  it('builds the tree once, starts from it after, and says the same as tsx does; a cache it cannot write falls back to tsx', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-cache-'));
    const cache = path.join(dir, 'cache');
    const first = start({ RALPH_COMPILE_CACHE: cache });
    expect(first.status, first.stderr).toBe(0);
    const trees = readdirSync(cache);
    expect(trees).toHaveLength(1);
    const tree = path.join(cache, trees[0]!);
    expect(existsSync(path.join(tree, 'ralph.js'))).toBe(true);
    // Bundled, split where ralph imports on demand (each command its own chunk), each map in a file beside.
    const chunks = readdirSync(tree).filter((name) => name.endsWith('.js') && name !== 'ralph.js');
    expect(chunks.some((name) => name.startsWith('run-')), `the run command's chunk among ${chunks.join(', ')}`).toBe(true);
    expect(readFileSync(path.join(tree, 'ralph.js'), 'utf8')).not.toMatch(/function runCommand\(|sourceMappingURL=data:/);
    expect(existsSync(path.join(tree, 'ralph.js.map'))).toBe(true);
    const built = statSync(path.join(tree, 'ralph.js')).mtimeMs;
    // A tree used a while ago (its mark a day old): the next start takes it and renews the mark.
    const dayAgo = new Date(Date.now() - 24 * 3600_000);
    utimesSync(path.join(tree, '.complete'), dayAgo, dayAgo);
    const second = start({ RALPH_COMPILE_CACHE: cache });
    expect(second.stdout).toBe(first.stdout);
    expect(statSync(path.join(tree, 'ralph.js')).mtimeMs, 'not built again').toBe(built);
    expect(statSync(path.join(tree, '.complete')).mtimeMs, 'the mark renewed').toBeGreaterThan(dayAgo.getTime() + 3600_000);
    const viaTsx = start({ RALPH_COMPILE_CACHE: 'off' });
    expect(viaTsx.stdout).toBe(first.stdout);
    // What the compiled modules read beside them: the version (package.json), a template.
    expect(start({ RALPH_COMPILE_CACHE: cache }, ['--version']).stdout).toBe(start({ RALPH_COMPILE_CACHE: 'off' }, ['--version']).stdout);
    expect(existsSync(path.join(tree, 'templates', 'prd-prompt.md'))).toBe(true);
    // A cache outside ralph's folder still finds ralph's dependencies (dayjs, zx: loaded by a run, not by --help).
    const outside = mkdtempSync(path.join(os.tmpdir(), 'ralph-cache-cwd-'));
    try {
      const run = spawnSync(process.execPath, [BIN, '--dry-run'], { cwd: outside, encoding: 'utf8', env: { ...process.env, RALPH_COMPILE_CACHE: cache } });
      expect(run.stderr).not.toMatch(/unexpected error|Cannot find package/);
      expect(run.stderr).toMatch(/not a git repository|git/i);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    // Nowhere to write (a file where the folder would go): tsx, as before, and no error.
    const blocked = path.join(dir, 'blocked');
    writeFileSync(blocked, '');
    const fallback = start({ RALPH_COMPILE_CACHE: path.join(blocked, 'cache') });
    expect(fallback.status, fallback.stderr).toBe(0);
    expect(fallback.stdout).toBe(first.stdout);
    expect(fallback.stderr).toBe('');
  });

  it('a build removes the trees no start used for a week, and keeps one a run may still be loading from', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-cache-'));
    const cache = path.join(dir, 'cache');
    const tree = (name: string, daysAgo: number): string => {
      const at = path.join(cache, name);
      mkdirSync(at, { recursive: true });
      writeFileSync(path.join(at, '.complete'), '');
      const when = new Date(Date.now() - daysAgo * 24 * 3600_000);
      utimesSync(path.join(at, '.complete'), when, when);
      return at;
    };
    const old = tree('0123456789abcdef01234567', 8);
    const recent = tree('76543210fedcba9876543210', 6);
    expect(start({ RALPH_COMPILE_CACHE: cache }).status).toBe(0);
    expect(existsSync(old), 'unused for 8 days').toBe(false);
    expect(existsSync(recent), 'used 6 days ago: a long run may still load from it').toBe(true);
    expect(readdirSync(cache)).toHaveLength(2);
  });

  it('a tree cut short (no .complete) is never started from: it is built again', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-cache-'));
    const cache = path.join(dir, 'cache');
    expect(start({ RALPH_COMPILE_CACHE: cache }).status).toBe(0);
    const tree = path.join(cache, readdirSync(cache)[0]!);
    rmSync(path.join(tree, '.complete'));
    writeFileSync(path.join(tree, 'ralph.js'), 'process.stdout.write("half-written\\n");\n');
    const again = start({ RALPH_COMPILE_CACHE: cache });
    expect(again.stdout).not.toMatch(/half-written/);
    expect(again.stdout).toMatch(/^ralph \d/);
    expect(existsSync(path.join(tree, '.complete')), 'built again').toBe(true);
  });
});
