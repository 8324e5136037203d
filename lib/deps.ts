import { abortError } from './errors.ts';

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Everything that touches the world arrives through this object, so tests can replace it. */
export interface Deps {
  cwd: string;
  env: NodeJS.ProcessEnv;
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
  stdout: Output;
  stderr: Output;
  /** Runs a short helper command (bd) through zx's `$`, arguments as interpolations; a non-zero exit is data. */
  exec(bin: string, args: readonly string[], options: ExecOptions): Promise<ExecResult>;
}

/** Sleeps for `ms`, rejecting at once when the signal aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs one of ralph's helper commands through zx's `$` (lib/process/helper.ts), loaded on first use so
 * --help and --version never load zx. A non-zero exit is data; a command that cannot start exits 127.
 */
export async function execCommand(bin: string, args: readonly string[], options: ExecOptions): Promise<ExecResult> {
  const { runCommand } = await import('./process/helper.ts'); // up: the real default, loaded on first use; every other module receives it through Deps
  const timeoutMs = options.timeoutMs ?? 120_000;
  const result = await runCommand(bin, args, { cwd: options.cwd, env: options.env, signal: options.signal, timeoutMs });
  let stderr = result.stderr;
  if (result.end === 'timeout') stderr = `${stderr}${stderr && !stderr.endsWith('\n') ? '\n' : ''}${bin}: timed out after ${timeoutMs} ms and was stopped\n`;
  else if (result.spawnError && !stderr) stderr = result.spawnError;
  return { exitCode: result.exitCode, stdout: result.stdout, stderr };
}

export function realDeps(): Deps {
  return {
    cwd: process.cwd(),
    env: process.env,
    now: () => Date.now(),
    sleep: abortableSleep,
    random: Math.random,
    stdout: process.stdout,
    stderr: process.stderr,
    exec: execCommand,
  };
}
