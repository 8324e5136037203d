import type { Output } from '../deps.ts';
import { oneLine } from '../agents/common.ts';
import { LineSplitter } from '../process/line-splitter.ts';
import { runShellText } from '../process/helper.ts';

/** What the on-exit hook learns about the run. */
export interface ExitHookEnv {
  RALPH_STATUS: string;
  RALPH_EXIT_CODE: string;
  RALPH_REPORT: string;
  RALPH_SESSION: string;
}

export interface HookIO {
  /** The environment the hook inherits (default: process.env). */
  baseEnv?: NodeJS.ProcessEnv;
  /** Where the hook's output and the warning go (default: process.stderr). */
  stderr?: Output;
}

/** How the hook ended: data, never an exception. */
export interface HookResult {
  ok: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  error?: string;
}

/**
 * Runs the user's `--on-exit` command at the end of a run. It is the user's own configuration, so it runs
 * through zx's `$` as shell text (pipes, `&&`, quoting as they wrote it); the run's facts arrive as RALPH_*
 * variables, never spliced into the command. Its stdout and stderr go to ralph's stderr (stdout carries
 * results). It runs in its own process group, ended with everything it started after `timeoutMs`, and a
 * failure is one warning line.
 */
export async function runOnExitHook(command: string, env: ExitHookEnv, cwd: string, timeoutMs = 60_000, io: HookIO = {}): Promise<HookResult> {
  const stderr = io.stderr ?? process.stderr;
  const warn = (why: string): void => {
    stderr.write(`ralph: warning: on-exit hook ${JSON.stringify(oneLine(command, 80))} ${why}\n`);
  };
  const lines = { stdout: new LineSplitter((line) => stderr.write(`${line}\n`)), stderr: new LineSplitter((line) => stderr.write(`${line}\n`)) };
  try {
    // Not the run's signal: after Ctrl+C that one is already aborted, and the hook should still run.
    const result = await runShellText(command, {
      cwd,
      env: { ...(io.baseEnv ?? process.env), ...env },
      timeoutMs,
      graceMs: 2000,
      onOutput: (chunk, stream) => lines[stream].push(chunk),
      reapLeftovers: true,
    });
    lines.stdout.end();
    lines.stderr.end();
    const timedOut = result.end === 'timeout';
    const ok = result.exitCode === 0 && result.end === 'exit';
    const exitCode = result.signal || result.spawnError ? null : result.exitCode;
    if (result.spawnError) warn(`could not start: ${result.spawnError}`);
    else if (timedOut) warn(`timed out after ${Math.round(timeoutMs / 1000)}s and was stopped`);
    else if (!ok) warn(result.signal ? `was killed by ${result.signal}` : `exited with ${result.exitCode}`);
    return { ok, exitCode, signal: result.signal, timedOut, durationMs: result.durationMs, error: result.spawnError };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    warn(`failed: ${message}`);
    return { ok: false, exitCode: null, signal: null, timedOut: false, durationMs: 0, error: message };
  }
}
