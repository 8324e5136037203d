import { fallbackWait, isUsageLimitText, parseResetTime } from './limits.ts';
import type { ProcessResult } from '../process/runner.ts';
import { failureText } from './transcript.ts';
import type { Agent, Classification, Transcript } from './types.ts';

interface FatalRule {
  pattern: RegExp;
  hint: string;
  /** No credit left: a wait does not help, another agent (--fallback) may. */
  spent?: true;
}

/** Setup problems that no retry can fix (reference/agent-clis.md, "Things that break a naive loop"). */
const FATAL_RULES: readonly FatalRule[] = [
  {
    pattern: /cannot be used with root\/sudo privileges/i,
    hint: 'ralph runs the agent with --dangerously-skip-permissions; as root set IS_SANDBOX=1 (only inside a sandbox) or run as a normal user',
  },
  { pattern: /not logged in|please run \/login|invalid api key|authentication_error/i, hint: 'log the agent CLI in once interactively (e.g. run `claude` and /login), then start ralph again' },
  { pattern: /credit balance is too low/i, hint: 'add API credits, switch to a subscription login, or name another agent with --fallback; waiting will not help', spent: true },
  { pattern: /requires --verbose/i, hint: 'the agent rejected its flags; this is a ralph bug, please report it with the log' },
  { pattern: /--agent '[^']*' not found|unknown agent|agent .* not found/i, hint: 'check --agent-profile: the profile must exist in the project' },
  // clap (codex): unexpected argument; commander (claude, copilot): unknown option; yargs (gemini): Unknown argument(s).
  { pattern: /unexpected argument|unknown option|unrecognized option|unknown arguments?:/i, hint: 'the agent CLI rejected a flag; check extra arguments after -- and the CLI version' },
  { pattern: /not running in a trusted directory/i, hint: 'trust the folder for the agent (gemini: --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true)' },
  { pattern: /No API key found\. Starting login flow/i, hint: 'set the agent API key (e.g. AMP_API_KEY) before starting ralph' },
  // bubblewrap's own words (--sandbox bwrap): the sandbox did not start the agent, and will not next time either.
  { pattern: /^bwrap: .+/m, hint: "--sandbox bwrap could not start the agent (bubblewrap's own error): a binary or folder the agent needs may be hidden inside the sandbox; run once without --sandbox to compare" },
];

/** Decides how the loop treats a finished agent run; the output decides, not the exit code. */
export function classifyRun(agent: Agent, transcript: Transcript, process: ProcessResult, now: number, waitsSoFar = 0): Classification {
  if (process.reason === 'timeout' || process.reason === 'idle') {
    // A CLI that printed a setup error and then sat waiting (Amp's login prompt) is misconfigured, not slow.
    // Only its own output counts here (non-JSON lines, stderr), never the model's words.
    const setup = [...transcript.otherText, process.stderrTail].join('\n');
    const rule = FATAL_RULES.find((candidate) => candidate.pattern.test(setup));
    if (rule) return { kind: 'fatal', reason: firstLine(setup, rule.pattern), hint: rule.hint };
  }
  if (process.reason === 'timeout') return { kind: 'timeout', reason: `agent exceeded the time limit after ${Math.round(process.durationMs / 1000)}s` };
  if (process.reason === 'idle') return { kind: 'timeout', reason: 'agent printed nothing for the idle timeout' };
  if (process.reason === 'spawn_error') {
    return { kind: 'fatal', reason: `cannot start ${agent.bin}: ${process.spawnError ?? 'unknown error'}`, hint: `install ${agent.bin} or put it on PATH` };
  }
  const specific = agent.classify?.(transcript, process, now);
  if (specific) return specific;

  const text = failureText(transcript, process.stderrTail);
  const succeeded = process.exitCode === 0 && !transcript.result?.isError && transcript.errors.length === 0;
  for (const rule of FATAL_RULES) {
    if (!succeeded && rule.pattern.test(text)) return { kind: 'fatal', reason: firstLine(text, rule.pattern), hint: rule.hint, ...(rule.spent ? { spent: true as const } : {}) };
  }

  const limit = transcript.rateLimit;
  if (limit?.status === 'rejected') {
    return { kind: 'usage_limit', reason: `usage limit (${limit.limitType ?? 'unknown window'})`, resetAt: limit.resetsAt ?? parseResetTime(text, now) };
  }
  if (!succeeded && (transcript.result?.apiError === 'usage_limit_reached' || isUsageLimitText(text))) {
    const resetAt = parseResetTime(text, now);
    return {
      kind: 'usage_limit',
      reason: firstLine(text, /limit|quota|credits/i),
      resetAt: resetAt ?? now + fallbackWait(waitsSoFar),
    };
  }
  if (succeeded && (transcript.result || process.exitCode === 0)) return { kind: 'ok' };
  if (process.signal) return { kind: 'transient', reason: `agent killed by ${process.signal}` };
  if (transcript.result?.isError) return { kind: 'transient', reason: firstLine(transcript.result.text || transcript.result.subtype || 'agent reported an error', /./) };
  if (transcript.errors.length > 0) return { kind: 'transient', reason: transcript.errors.at(-1)!.message.split('\n')[0]! };
  if (process.exitCode !== 0) return { kind: 'transient', reason: `agent exited with code ${process.exitCode}${stderrHint(process.stderrTail)}` };
  return { kind: 'transient', reason: 'agent ended without a result' };
}

function stderrHint(stderr: string): string {
  const last = stderr.trim().split('\n').at(-1);
  return last ? `: ${last.slice(0, 200)}` : '';
}

function firstLine(text: string, pattern: RegExp): string {
  const line = text.split('\n').find((candidate) => pattern.test(candidate)) ?? text.split('\n')[0] ?? '';
  return line.trim().slice(0, 300);
}
