// ralph's compiled modules, kept between starts. tsx compiles each TypeScript module on every start through
// Node's module hooks, which run on a thread of their own: measured on 2 cores, that loading is two thirds
// of what a short run costs ralph (`--help` 0.24 s of CPU, a one-task run 0.65 s; from this cache 0.06 s and
// 0.37 s). So ralph's own files (ralph.ts, lib/**/*.ts) are compiled once, by the esbuild tsx itself uses,
// into node_modules/.cache/ralph/<hash of their content>/ beside ralph's dependencies, and imported as plain
// modules from there. Anything in the way (a read-only install, no esbuild, RALPH_COMPILE_CACHE=off) and
// bin/ralph.mjs falls back to tsx as before. Nothing here reads the caller's folder.
// The tree is bundled: ralph.js and a few dozen chunks split where ralph imports on demand (a command, a
// source, an adapter), so a run still loads only what it uses, from fewer files; each chunk's source map in
// a file beside it, read only when RALPH_DEBUG=1 turns maps on. Measured on 2 cores (2026-11-28), a
// two-task PRD run's CPU: 0.28–0.29 s from one compiled file per module with inline maps, 0.26 s without
// the inline maps, 0.24 s bundled.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** What the compiled tree reads beside its modules (import.meta.url-relative): linked, not copied. */
const BESIDE = ['package.json', 'templates', path.join('lib', 'serve', 'assets')];
/** Marks a finished tree: one without it was cut short and is never imported. */
const DONE = '.complete';
/** How long a tree stays after its last start, before a build of another one removes it. */
const STALE_MS = 7 * 24 * 3600_000;

/** When a start last used the tree at `dir` (its mark's time, renewed by each start), or when it was made. */
function lastUsed(dir) {
  const mark = statSync(path.join(dir, DONE), { throwIfNoEntry: false }) ?? statSync(dir, { throwIfNoEntry: false });
  return mark ? mark.mtimeMs : 0;
}

/** ralph's own TypeScript files, relative to the package, in a stable order. */
export function sourceFiles(root) {
  const lib = readdirSync(path.join(root, 'lib'), { recursive: true })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join('lib', file));
  return ['ralph.ts', ...lib.sort()];
}

/** The cache's key: the files' names and contents, the compiler's version and options, and this file. */
export function cacheKey(root, files, compilerVersion) {
  const hash = createHash('sha256');
  // This file too: a tree is laid out as it says.
  hash.update(`${compilerVersion}\0${JSON.stringify(OPTIONS)}\0`).update(readFileSync(new URL(import.meta.url))).update('\0');
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(path.join(root, file))).update('\0');
  return hash.digest('hex').slice(0, 24);
}

// ralph's dependencies stay imports (packages: 'external'), resolved from the tree's node_modules link.
const OPTIONS = { bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20', packages: 'external', sourcemap: 'linked', entryNames: '[name]', chunkNames: '[name]-[hash]' };

/** Builds the tree for `key` in a folder of its own, then renames it into place (another start may win). */
function build(root, cacheDir, key, esbuild) {
  const target = path.join(cacheDir, key);
  const temporary = path.join(cacheDir, `${key}.${process.pid}.tmp`);
  rmSync(temporary, { recursive: true, force: true });
  esbuild.buildSync({ ...OPTIONS, entryPoints: [path.join(root, 'ralph.ts')], absWorkingDir: root, outdir: temporary, tsconfig: path.join(root, 'tsconfig.json'), logLevel: 'silent' });
  for (const item of BESIDE) {
    if (!existsSync(path.join(root, item))) continue;
    mkdirSync(path.dirname(path.join(temporary, item)), { recursive: true });
    symlinkSync(path.join(root, item), path.join(temporary, item));
  }
  // ralph's dependencies, found from the tree wherever it is (RALPH_COMPILE_CACHE=DIR): the folder npm put
  // them in for this package (its own node_modules, or the one they were hoisted to).
  const deps = path.dirname(path.dirname(createRequire(path.join(root, 'package.json')).resolve('dayjs/package.json')));
  symlinkSync(deps, path.join(temporary, 'node_modules'));
  writeFileSync(path.join(temporary, DONE), '');
  // A tree there without its mark was damaged (trees only ever arrive whole): it goes.
  if (existsSync(target) && !existsSync(path.join(target, DONE))) rmSync(target, { recursive: true, force: true });
  try {
    renameSync(temporary, target);
  } catch {
    // Another start renamed its own tree there first: the same files, so either will do.
    rmSync(temporary, { recursive: true, force: true });
  }
  // Trees no start has used for a week go (sources since changed, a start killed half way): a run started
  // from one still loads modules from it hours later (the workers', the report's), so never sooner.
  for (const name of readdirSync(cacheDir)) {
    const other = path.join(cacheDir, name);
    if (name === key || Date.now() - lastUsed(other) < STALE_MS) continue;
    rmSync(other, { recursive: true, force: true });
  }
}

/**
 * The compiled entry point (a file URL path) for ralph at `root`, building it if need be; undefined when the
 * cache cannot be used (turned off, no esbuild, nowhere to write), and ralph starts through tsx instead.
 */
export function compiledEntry(root, env = process.env) {
  if (env.RALPH_COMPILE_CACHE === 'off') return undefined;
  try {
    // tsx's own esbuild: the compiler tsx would use, resolved from tsx, so ralph adds no dependency.
    const fromTsx = createRequire(createRequire(path.join(root, 'package.json')).resolve('tsx/package.json'));
    // Its version from its package.json: esbuild itself is loaded only to build.
    const { version } = fromTsx('esbuild/package.json');
    const cacheDir = env.RALPH_COMPILE_CACHE || path.join(root, 'node_modules', '.cache', 'ralph');
    const files = sourceFiles(root);
    const key = cacheKey(root, files, version);
    const entry = path.join(cacheDir, key, 'ralph.js');
    const mark = path.join(cacheDir, key, DONE);
    if (existsSync(mark)) {
      // In use: the tree stays at least a week after this start (see build()).
      try {
        const now = new Date();
        utimesSync(mark, now, now);
      } catch {
        // a tree someone else's install made, read-only here: used as it is
      }
      return entry;
    }
    mkdirSync(cacheDir, { recursive: true });
    build(root, cacheDir, key, fromTsx('esbuild'));
    return existsSync(mark) ? entry : undefined;
  } catch {
    return undefined;
  }
}
