import type { Deps } from '../deps.ts';
import { runSession } from '../session/index.ts';
import type { ParsedArgv } from './argv.ts';

/** `ralph run` / `ralph resume`: one session; returns the exit code. Never exits itself. */
export function runCommand(parsed: ParsedArgv, deps: Deps, signal: AbortSignal): Promise<number> {
  return runSession(parsed, deps, signal);
}
