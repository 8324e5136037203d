// One exit-code table for the whole tool; only ralph.ts turns these into a process exit.
export const ExitCode = {
  complete: 0,
  failure: 1,
  limit: 2,
  hungUp: 129,
  interrupted: 130,
  /** ralph's own output closed (EPIPE: the reader of a pipe went away): 128 + SIGPIPE, as a shell reports a process SIGPIPE ended. */
  outputClosed: 141,
  terminated: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface RalphErrorOptions {
  exitCode?: number;
  hint?: string;
  cause?: unknown;
}

/** An error meant for the user: one line saying what was wrong, and optionally what to do next. */
export class RalphError extends Error {
  readonly exitCode: number;
  readonly hint?: string;

  constructor(message: string, options: RalphErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RalphError';
    this.exitCode = options.exitCode ?? ExitCode.failure;
    this.hint = options.hint;
  }
}

/** A bad flag, environment variable or config value. */
export class UsageError extends RalphError {
  constructor(message: string, hint?: string) {
    super(message, { hint: hint ?? "run 'ralph --help' for the options" });
    this.name = 'UsageError';
  }
}

/** Every prerequisite that failed, reported together. */
export class PrerequisiteError extends RalphError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.name = 'PrerequisiteError';
    this.problems = problems;
  }
}

const SIGNAL_EXITS: Partial<Record<NodeJS.Signals, number>> = { SIGTERM: ExitCode.terminated, SIGHUP: ExitCode.hungUp, SIGPIPE: ExitCode.outputClosed };

/** The run was stopped by a signal; carries 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP: the terminal went away) or 141 (SIGPIPE: the output did). */
export class InterruptedError extends RalphError {
  readonly signal: NodeJS.Signals;
  constructor(signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`, { exitCode: SIGNAL_EXITS[signal] ?? ExitCode.interrupted });
    this.name = 'InterruptedError';
    this.signal = signal;
  }
}

/** `ralph stop` was obeyed: the run ends like an interruption (130), with its own message. */
export class StopRequestedError extends InterruptedError {
  constructor(message: string) {
    super('SIGINT');
    this.message = message;
    this.name = 'StopRequestedError';
  }
}

/**
 * ralph's own stdout or stderr failed (lib/process/output-guard.ts): nobody reads the run any more, so it
 * ends like a hang-up (agent stopped, state written, lock released), with 141.
 */
export class OutputClosedError extends InterruptedError {
  constructor(stream: 'stdout' | 'stderr', code: string) {
    super('SIGPIPE');
    this.message = `ralph's ${stream} closed (${code}${code === 'EPIPE' ? ': the reader of the pipe went away' : ''})`;
    this.name = 'OutputClosedError';
  }
}

/** Turns an abort reason into the error it stands for. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  if (reason === 'SIGINT' || reason === 'SIGTERM' || reason === 'SIGHUP') return new InterruptedError(reason);
  return new InterruptedError('SIGINT');
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Another run holds the repository's lock: the refusal is all a refused run says (lib/lock.ts). */
export class LockHeldError extends RalphError {}

/** A beads task was taken by someone else between `bd ready` and a worker's claim: the loop picks another. */
export class ClaimLostError extends RalphError {}

/** --remote: another run claimed the task first (the server said so); what else the look showed still stands. */
export class ClaimTakenError extends ClaimLostError {}

/** --remote: the remote did not answer for longer than --remote-wait (lib/landing/remote.ts). */
export class RemoteUnreachableError extends RalphError {}
