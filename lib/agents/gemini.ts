import { isUsageLimitText } from './limits.ts';
import type { Command, ProcessResult } from '../process/runner.ts';
import { asNumber, asRecord, asString, endedWithoutResult, NESTED_SESSION_ENV, parseJsonObject, promptFitsArgv, summarizeInput } from './common.ts';
import { failureText } from './transcript.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';

/** Reads one line of `gemini -p … -o stream-json`. The answer is the concatenation of assistant deltas. */
export function parseGeminiLine(line: string): AgentEvent[] {
  const event = parseJsonObject(line);
  if (!event) return line.trim() ? [{ kind: 'other', text: line }] : [];
  switch (event.type) {
    case 'init':
      return [{ kind: 'init', model: asString(event.model), sessionId: asString(event.session_id) }];
    case 'message': {
      const content = asString(event.content);
      if (event.role !== 'assistant' || !content) return [];
      return [{ kind: 'text', text: content, delta: event.delta === true }];
    }
    case 'tool_use':
      return [{ kind: 'tool_call', name: asString(event.tool_name) ?? 'tool', summary: summarizeInput(event.parameters) }];
    case 'tool_result': {
      const error = asRecord(event.error);
      return [{ kind: 'tool_result', text: asString(event.output) ?? asString(error?.message) ?? '', isError: event.status === 'error' }];
    }
    case 'error':
      // Documented as non-fatal warnings; failures arrive as `result` with status "error".
      return [{ kind: 'other', text: `${asString(event.severity) ?? 'error'}: ${asString(event.message) ?? ''}` }];
    case 'result': {
      const stats = asRecord(event.stats) ?? {};
      const input = asNumber(stats.input_tokens);
      const total = asNumber(stats.total_tokens);
      const output = asNumber(stats.output_tokens);
      // Thinking tokens are in total_tokens only; they are billed as output.
      const billedOutput = total !== undefined && input !== undefined ? Math.max(output ?? 0, total - input) : output;
      const failed = event.status !== 'success';
      return [
        {
          kind: 'result',
          text: failed ? (asString(asRecord(event.error)?.message) ?? '') : '',
          isError: failed,
          subtype: asString(event.status),
          inputTokens: input,
          outputTokens: billedOutput,
        },
      ];
    }
    default:
      return [];
  }
}

const FATAL_EXITS: Record<number, { reason: string; hint: string }> = {
  41: { reason: 'gemini could not authenticate (exit 41)', hint: 'set GEMINI_API_KEY (or log in by running `gemini` once interactively), then start ralph again' },
  42: { reason: 'gemini rejected its input or arguments (exit 42)', hint: 'check the extra arguments after -- and the gemini CLI version' },
  44: { reason: 'gemini could not start its sandbox (exit 44)', hint: 'check the gemini sandbox settings (GEMINI_SANDBOX, settings.json)' },
  52: { reason: 'gemini found an invalid configuration (exit 52)', hint: 'fix .gemini/settings.json or ~/.gemini/settings.json' },
  55: { reason: 'gemini refused to run in an untrusted folder (exit 55)', hint: 'trust the folder for gemini (--skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true)' },
};

/** With JSON output gemini exits with the HTTP status modulo 256. */
const HTTP_EXITS: Record<number, number> = { 173: 429, 244: 500, 246: 502, 247: 503, 248: 504 };

export const gemini: Agent = {
  name: 'gemini',
  bin: 'gemini',
  command(request: AgentRequest): Command {
    // gemini reads a piped stdin and puts it before the -p text; with no -p, stdin is the whole prompt.
    const inArgv = promptFitsArgv(request.prompt);
    const args = inArgv ? ['-p', request.prompt] : [];
    args.push('--yolo', '--skip-trust', '-o', 'stream-json');
    if (request.model) args.push('-m', request.model);
    args.push(...(request.isolationArgs ?? []), ...request.extraArgs);
    return { bin: 'gemini', args, stdin: inArgv ? undefined : request.prompt, env: { ...NESTED_SESSION_ENV } };
  },
  parseLine: parseGeminiLine,
  isolation: {
    args: ['--extensions', 'none'],
    covers: 'every installed extension, with the MCP servers, commands and context files it brings',
    leaves: 'MCP servers and hooks written directly in ~/.gemini/settings.json, and ~/.gemini/GEMINI.md (gemini has no switch for user settings)',
  },
  state: { paths: ['.gemini'] },
  classify(transcript: Transcript, process: ProcessResult): Classification | undefined {
    const code = process.exitCode;
    if (code === null) return undefined;
    const fatal = FATAL_EXITS[code];
    if (fatal) return { kind: 'fatal', ...fatal };
    if (code === 53) return { kind: 'transient', reason: 'gemini reached its session turn limit (exit 53)' };
    const status = HTTP_EXITS[code];
    // A quota message wins: the generic rules turn it into a wait for the reset.
    if (status !== undefined && !isUsageLimitText(failureText(transcript, process.stderrTail))) {
      const detail = (transcript.result?.text || transcript.errors.at(-1)?.message || '').split('\n')[0]!.trim();
      return { kind: 'transient', reason: `gemini API error: HTTP ${status} (exit ${code})${detail ? `: ${detail.slice(0, 200)}` : ''}` };
    }
    return endedWithoutResult(transcript, process);
  },
};
