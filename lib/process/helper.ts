// The commands ralph runs for itself, through zx's `$`: `bd … --json` (Deps.exec), quality gates and the
// on-exit hook. Each runs in its own process group; a timeout or abort ends the whole tree with ralph's
// own SIGTERM → SIGKILL escalation (zx's kill() sends SIGTERM only, and needs `ps`). Output goes to a
// store of ralph's own: zx's default one keeps everything and decodes chunk by chunk, which breaks a
// multi-byte character split between two pipe reads.
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import type { Options, ProcessOutput, ProcessPromise } from 'zx/core';
import { onForcedExit } from './cleanup.ts';
import { groupTree, processAlive, signalTree, stopTree } from './process-tree.ts';
import { $, helperEnv, PLAIN_PREFIX, STRICT_PREFIX } from './zx.ts';

export interface HelperOptions {
  cwd: string;
  /** The environment to start from (default: process.env); see helperEnv() for what is left out. */
  env?: NodeJS.ProcessEnv;
  /** 0 or undefined: no limit. */
  timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL (default 5 s). */
  graceMs?: number;
  signal?: AbortSignal;
  /** Receives the output as it arrives; the result's stdout and stderr then stay empty. */
  onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void;
  /** End whatever the command left running in its group once it exits (gates and hooks do). */
  reapLeftovers?: boolean;
  /** Keep exported bash functions in the environment (a gate's or hook's own text may call them). */
  keepFunctions?: boolean;
}

export type HelperEnd = 'exit' | 'timeout' | 'aborted' | 'spawn_error';

/** How a helper command ended: data, never an exception. */
export interface HelperResult {
  /** Its exit code; 128 + n when a signal n ended it; 127 when it could not start. */
  exitCode: number;
  signal: NodeJS.Signals | null;
  end: HelperEnd;
  stdout: string;
  stderr: string;
  durationMs: number;
  spawnError?: string;
}

type Store = NonNullable<Options['store']>;
type Chunks = Store['stdout'];

/** A zx store that keeps nothing itself: each chunk goes to `take`. */
function sink(take: (chunk: Buffer) => void): Chunks {
  return {
    length: 0,
    push(...chunks: Array<string | Buffer>): number {
      for (const chunk of chunks) take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      return 0;
    },
    join: () => '',
    reduce: <U>(_fn: unknown, init: U): U => init,
    *[Symbol.iterator]() {},
  };
}

/**
 * Starts `start($)` with the call's options set on the global `$` (read synchronously by the call).
 * `$` notes where it was called from by formatting a stack trace, which under tsx maps every frame through
 * the source maps: 10 to 15 ms of CPU over a run's bd calls, for a location ralph never shows. The call
 * runs with no stack frames captured.
 */
function launch(options: HelperOptions, plain: boolean, store: Store, start: (shell: typeof $) => ProcessPromise): ProcessPromise {
  $.cwd = options.cwd;
  $.env = helperEnv(options.env ?? process.env, !options.keepFunctions);
  $.prefix = plain ? PLAIN_PREFIX : STRICT_PREFIX;
  $.store = store;
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return start($);
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
    $.store = undefined;
    $.prefix = STRICT_PREFIX;
    $.env = process.env;
    $.cwd = undefined;
  }
}

function exitCodeOf(output: ProcessOutput): number {
  if (output.cause) return 127;
  if (output.exitCode !== null) return output.exitCode;
  if (output.signal) return 128 + (constants.signals[output.signal] ?? 0);
  return 127;
}

async function runHelper(options: HelperOptions, plain: boolean, start: (shell: typeof $) => ProcessPromise): Promise<HelperResult> {
  const started = Date.now();
  const graceMs = options.graceMs ?? 5_000;
  const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  const take = (stream: 'stdout' | 'stderr') => (chunk: Buffer): void => {
    if (options.onOutput) options.onOutput(chunk, stream);
    else kept[stream].push(chunk);
  };
  const p = launch(options, plain, { stdout: sink(take('stdout')), stderr: sink(take('stderr')), stdall: sink(() => {}) }, start);
  const pgid = p.pid;
  const known: number[] = [];
  const timers: NodeJS.Timeout[] = [];
  let end: HelperEnd = 'exit';

  const terminate = (why: 'timeout' | 'aborted'): void => {
    if (end !== 'exit' || pgid === undefined) return;
    end = why;
    known.push(...groupTree(pgid));
    signalTree(pgid, known, 'SIGTERM');
    timers.push(setTimeout(() => signalTree(pgid, [...known, ...groupTree(pgid)], 'SIGKILL'), graceMs));
  };
  const onAbort = (): void => terminate('aborted');
  // A second Ctrl+C exits at once: the group goes with it.
  const forget = pgid === undefined ? () => false : onForcedExit(() => signalTree(pgid, [...known, ...groupTree(pgid)], 'SIGKILL'));
  if (pgid !== undefined) {
    if (options.timeoutMs && options.timeoutMs > 0) timers.push(setTimeout(() => terminate('timeout'), options.timeoutMs));
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    p.child?.once('exit', () => {
      // Under a sandbox the leader (bwrap) may go first while its init keeps what escaped: note them. An
      // empty group, the usual end, has nothing to find: no walk through every process of the machine.
      if (options.reapLeftovers && processAlive(-pgid)) known.push(...groupTree(pgid));
      // A leftover holding the pipes open must not keep ralph waiting for them to close.
      timers.push(
        setTimeout(() => {
          p.child?.stdout?.destroy();
          p.child?.stderr?.destroy();
        }, 1000),
      );
    });
  }

  let output: ProcessOutput;
  try {
    output = await p;
  } catch (error) {
    output = error as ProcessOutput;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    for (const timer of timers) clearTimeout(timer);
  }
  if (pgid !== undefined && (options.reapLeftovers || end !== 'exit')) await stopTree(pgid, known, graceMs);
  forget();
  const spawnError = output.cause ? startError(output.cause, options.cwd) : output.exitCode === null && !output.signal ? 'could not start' : undefined;
  return {
    exitCode: exitCodeOf(output),
    signal: output.signal,
    end: spawnError ? 'spawn_error' : end,
    stdout: Buffer.concat(kept.stdout).toString('utf8'),
    stderr: Buffer.concat(kept.stderr).toString('utf8'),
    durationMs: Date.now() - started,
    ...(spawnError ? { spawnError } : {}),
  };
}

/** Spawn names the shell when the folder is missing: say which folder. */
function startError(cause: Error, cwd: string): string {
  return (cause as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(cwd) ? `folder ${cwd} does not exist` : cause.message;
}

function notStarted(why: string): HelperResult {
  return { exitCode: 127, signal: null, end: 'spawn_error', stdout: '', stderr: why, durationMs: 0, spawnError: why };
}

/**
 * Runs one of ralph's own commands (`bd … --json`): `bin` and each argument enter `$` as interpolations,
 * one word each, never as shell text.
 */
export function runCommand(bin: string, args: readonly string[], options: HelperOptions): Promise<HelperResult> {
  // zx would cut a value at a NUL byte without a word; spawn refuses it, and so does ralph.
  if ([bin, ...args].some((value) => value.includes('\0'))) return Promise.resolve(notStarted(`${bin}: an argument contains a NUL byte`));
  return runHelper(options, false, (shell) => shell`${bin} ${[...args]}`);
}

/** Runs a gate or hook: the user's own shell text, by bash as they wrote it (none of ralph's strict mode). */
export function runShellText(text: string, options: HelperOptions): Promise<HelperResult> {
  if (text.includes('\0')) return Promise.resolve(notStarted('the command contains a NUL byte'));
  return runHelper({ keepFunctions: true, ...options }, true, (shell) => shell`eval ${text}`);
}
