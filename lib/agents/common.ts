import type { ProcessResult } from '../process/runner.ts';
import type { Classification, Transcript } from './types.ts';

/** Variables that make an agent CLI behave differently when ralph itself runs inside an agent session. */
export const NESTED_SESSION_ENV: Record<string, undefined> = {
  CLAUDECODE: undefined,
  CLAUDE_CODE_ENTRYPOINT: undefined,
  CLAUDE_CODE_SSE_PORT: undefined,
  CLAUDE_CODE: undefined,
  BD_AGENT_MODE: undefined,
};

/** Parses one JSON line; undefined for anything that is not a JSON object. */
export function parseJsonObject(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A one-line description of a tool call's input for the live view. */
export function summarizeInput(input: unknown): string {
  const record = asRecord(input);
  if (!record) return '';
  const preferred = ['command', 'file_path', 'path', 'pattern', 'url', 'description', 'prompt'];
  for (const key of preferred) {
    const value = asString(record[key]);
    if (value) return oneLine(value);
  }
  return oneLine(JSON.stringify(record));
}

/** White space as JavaScript's `\s` and trim() know it. */
function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code > 0x7f && (code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff));
}

/**
 * The text on one line, white space runs as one space, cut to `max` characters with `…`: what
 * `text.slice(0, max * 4).replace(/\s+/g, ' ').trim()` gives, cut, without a regular expression's
 * cost per match (the view calls it for every line an agent prints). A 10 MB line is never rewritten whole.
 */
export function oneLine(text: string, max = 160): string {
  const end = Math.min(text.length, max * 4);
  // Runs of words already one space apart are taken as one slice (an agent's line is mostly one run), so
  // the cost is a slice or two per line, not a string per word.
  let flat = '';
  let at = 0;
  while (flat.length <= max) {
    while (at < end && isSpace(text.charCodeAt(at))) at += 1;
    if (at >= end) break;
    const start = at;
    let stop = at;
    while (at < end) {
      const code = text.charCodeAt(at);
      if (!isSpace(code)) stop = at + 1;
      else if (code !== 0x20 || at + 1 >= end || isSpace(text.charCodeAt(at + 1))) break;
      at += 1;
    }
    flat += flat ? ` ${text.slice(start, stop)}` : text.slice(start, stop);
  }
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Linux caps one argv string at 128 KiB (MAX_ARG_STRLEN); prompts above this many UTF-8 bytes go on stdin
 * for the CLIs that otherwise take the prompt as an argument.
 */
export const MAX_PROMPT_ARG_BYTES = 100 * 1024;

/**
 * Whether a prompt can travel as one argv element: small enough, and not starting with `-`, which the
 * CLIs' option parsers would read as a flag. Everything else goes on stdin.
 */
export function promptFitsArgv(prompt: string): boolean {
  return !prompt.startsWith('-') && Buffer.byteLength(prompt, 'utf8') <= MAX_PROMPT_ARG_BYTES;
}

/** errorType of the `error` event adapters emit when the CLI refused a tool call for lack of permission. */
export const PERMISSION_DENIED = 'permission_denied';

/** For CLIs whose stream always ends with a result: exit 0 without one means the output was cut off. */
export function endedWithoutResult(transcript: Transcript, process: ProcessResult): Classification | undefined {
  if (process.exitCode === 0 && !transcript.result && transcript.errors.length === 0) {
    return { kind: 'transient', reason: 'agent ended without a result (crash or cut-off output)' };
  }
  return undefined;
}

/**
 * A tool call refused for lack of permission although ralph passed the allow-all flag (a deny rule, or a
 * path or URL the flag does not cover). The agent's "done" cannot be trusted then: retry, saying why.
 */
export function deniedTool(agentName: string, flag: string, transcript: Transcript): Classification | undefined {
  const denials = transcript.errors.filter((error) => error.errorType === PERMISSION_DENIED);
  if (denials.length === 0 || denials.length !== transcript.errors.length) return undefined;
  return {
    kind: 'transient',
    reason: `${agentName} denied a tool call although ralph passed ${flag} (a deny rule, or a path or URL the flag does not cover): ${oneLine(denials[0]!.message, 200)}`,
  };
}
