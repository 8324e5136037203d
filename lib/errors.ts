// One exit-code table for the whole tool; only ralph.ts turns these into a process exit.
export const ExitCode = {
  complete: 0,
  failure: 1,
  limit: 2,
  hungUp: 129,
  interrupted: 130,
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

/** The run was stopped by a signal; carries 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP: the terminal went away). */
export class InterruptedError extends RalphError {
  readonly signal: NodeJS.Signals;
  constructor(signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`, {
      exitCode: signal === 'SIGTERM' ? ExitCode.terminated : signal === 'SIGHUP' ? ExitCode.hungUp : ExitCode.interrupted,
    });
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

/** --remote: the remote did not answer for longer than --remote-wait (lib/landing/remote.ts). */
export class RemoteUnreachableError extends RalphError {}
