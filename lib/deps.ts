import { execFile } from 'node:child_process';
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
  /** Runs a short helper command (bd, git) without a shell; a non-zero exit is data, not an error. */
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

/** execFile without a shell; spawn failures (ENOENT) come back as exit code 127 with the message. */
export function execCommand(bin: string, args: readonly string[], options: ExecOptions): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile(
      bin,
      [...args],
      {
        cwd: options.cwd,
        env: options.env,
        signal: options.signal,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (!error) return resolve({ exitCode: 0, stdout, stderr });
        const code = (error as NodeJS.ErrnoException & { code?: unknown }).code;
        if (typeof code === 'number') return resolve({ exitCode: code, stdout, stderr });
        resolve({ exitCode: code === 'ENOENT' ? 127 : 1, stdout, stderr: stderr || error.message });
      },
    );
  });
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
