// The git commands that talk to the remote: run through ralph's helper runner (no prompt for credentials,
// a timeout), with what went wrong read from their output: the remote not answering (ralph waits and tries
// again) is told apart from a refusal (an answer). A push is read per ref from its porcelain result
// (push-outcome.ts); noAnswer() alone decides only for the commands that have none (fetch, ls-remote).
import type { Deps, ExecResult } from '../deps.ts';
import { RalphError } from '../errors.ts';
import { quietEnv } from '../repo/git.ts';

/** Longest one fetch or push may take before it counts as the remote not answering. */
const REMOTE_TIMEOUT_MS = 120_000;

export type RemoteGit = (args: readonly string[], timeoutMs?: number) => Promise<ExecResult>;

/** `signal`: a reader that may be stopped (ralph status --watch) stops its git command with it. */
export function remoteGit(deps: Deps, cwd: string, signal?: AbortSignal): RemoteGit {
  return (args, timeoutMs = REMOTE_TIMEOUT_MS) => deps.exec('git', args, { cwd, env: quietEnv(deps.env), timeoutMs, ...(signal ? { signal } : {}) });
}

const NO_ANSWER = /could not read from remote|unable to connect|connection refused|connection timed out|connection reset|could not resolve host|unable to access|timed out|early eof|remote end hung up|no route to host|network is unreachable|broken pipe/i;

/** Why the remote did not answer, in a line; undefined when it answered (even with a refusal). */
export function noAnswer(result: ExecResult): string | undefined {
  if (result.exitCode === 0) return undefined;
  const text = `${result.stderr}\n${result.stdout}`;
  if (!NO_ANSWER.test(text)) return undefined;
  const all = lines(text);
  const at = all.findIndex((line) => NO_ANSWER.test(line));
  // git ends "unable to connect to HOST:" with a colon and gives the reason on the next line.
  const found = all[at] ?? 'the remote did not answer';
  return found.endsWith(':') && all[at + 1] ? `${found} ${all[at + 1]}` : found;
}

/** One ref's line of `git push --porcelain`: its flag (`!` rejected, `=` up to date, …) and git's summary. */
export interface PushLine {
  flag: string;
  to: string;
  summary: string;
}

export function pushLines(stdout: string): PushLine[] {
  const out: PushLine[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^([ +\-*!=])\t([^\t]*)\t(.*)$/.exec(line);
    if (!match) continue;
    const [, flag, refs, summary] = match;
    out.push({ flag: flag!, to: refs!.slice(refs!.lastIndexOf(':') + 1), summary: summary! });
  }
  return out;
}

/** A git command that had to work: its stdout, or a RalphError naming it with git's own reason. */
export function mustWork(result: ExecResult, what: string): string {
  if (result.exitCode === 0) return result.stdout;
  throw new RalphError(`${what} failed: ${lines(`${result.stderr}\n${result.stdout}`).find((line) => /^(fatal|error|remote):/.test(line)) ?? lines(result.stderr)[0] ?? `git exited with ${result.exitCode}`}`);
}

function lines(text: string): string[] {
  return text.split('\n').map((line) => line.trim()).filter(Boolean);
}
