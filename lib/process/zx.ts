// zx for the commands ralph runs for itself (bd, quality gates, the on-exit hook), set up once.
// zx reads ZX_SHELL, ZX_PREFIX, ZX_POSTFIX, ZX_VERBOSE, ZX_QUIET, ZX_TIMEOUT, ZX_CWD, ZX_PREFER_LOCAL,
// ZX_DETACHED, ZX_KILL_SIGNAL and ZX_TIMEOUT_SIGNAL from the environment when it is imported. A user's
// environment must not change how ralph runs its commands (with ZX_SHELL=/bin/sh an interpolated value
// can run code, ZX_PREFIX runs before every command, ZX_VERBOSE echoes them, ZX_TIMEOUT ends them through
// zx's `ps`-based kill), so every one of those options is pinned here, right after the import.
// Only options of the global `$` are ever set: per-call `$({...})` and `within()` switch on promise hooks
// for the whole process on Node 20 (every await 2.85× slower; see docs/architecture.md).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type * as Zx from 'zx/core';

// zx/core is CommonJS inside: loaded through require it starts about twice as fast under tsx as through
// `import` (no ESM translation of its files, no loader-hook round trips); measured in docs/architecture.md.
const zx = createRequire(import.meta.url)('zx/core') as typeof Zx;
const { $, quote, which } = zx;
export const { chalk } = zx;

/** bash, looked up once on the PATH ralph started with: zx's `$` always runs a shell, and quotes for bash. */
export const BASH = which.sync('bash', { nothrow: true }) ?? 'bash';

/** ralph's own commands run under zx's strict mode; a gate or hook runs as the user wrote it. */
export const STRICT_PREFIX = 'set -euo pipefail;';
export const PLAIN_PREFIX = '';

/** Sets every global option of zx's `$` that ralph relies on, whatever the environment said at import. */
export function pinZx(): void {
  Object.assign($, {
    shell: BASH,
    prefix: STRICT_PREFIX,
    postfix: '',
    quote,
    verbose: false,
    quiet: true,
    // A child's exit code is data for ralph, never an exception.
    nothrow: true,
    // Its own process group, so a timeout or Ctrl+C ends everything it started (see helper.ts).
    detached: true,
    preferLocal: false,
    // ralph times its commands itself: zx's timeout sends SIGTERM only, through `ps`.
    timeout: undefined,
    timeoutSignal: 'SIGTERM',
    killSignal: 'SIGTERM',
    stdio: ['ignore', 'pipe', 'pipe'],
    spawn,
    cwd: undefined,
    env: process.env,
    store: undefined,
    input: undefined,
    halt: false,
  });
}

pinZx();

// Variables that make bash itself do something before or around the command: BASH_ENV (and ENV in POSIX
// mode) are sourced at start, SHELLOPTS / BASHOPTS switch on options such as xtrace (command echo).
const SHELL_STARTUP = ['BASH_ENV', 'ENV', 'SHELLOPTS', 'BASHOPTS'];

/**
 * The environment for a helper command: `env` without what would make bash run or print anything of its
 * own. For ralph's own commands (`ownCommand`) exported bash functions go too: `BASH_FUNC_bd%%` would
 * run instead of bd; a gate or hook, the user's own text, may still call theirs.
 */
export function helperEnv(env: NodeJS.ProcessEnv, ownCommand: boolean): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env };
  for (const name of SHELL_STARTUP) delete result[name];
  if (ownCommand) {
    for (const name of Object.keys(result)) if (name.startsWith('BASH_FUNC_')) delete result[name];
  }
  return result;
}

/** Finds an executable on `env.PATH` like `command -v` (zx's `which`); undefined when missing. */
export function findOnPath(bin: string, env: NodeJS.ProcessEnv): string | undefined {
  // An empty PATH finds nothing (zx's which would fall back to ralph's own PATH or the current folder).
  if (!bin.includes('/') && !env.PATH) return undefined;
  return which.sync(bin, { path: env.PATH ?? '', nothrow: true }) ?? undefined;
}

export { $ };
