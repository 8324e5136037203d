import type { Command, ProcessResult } from '../process/runner.ts';
import {
  asNumber,
  asRecord,
  asString,
  deniedTool,
  NESTED_SESSION_ENV,
  oneLine,
  parseJsonObject,
  PERMISSION_DENIED,
  promptFitsArgv,
  summarizeInput,
} from './common.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';

const ALLOW_FLAG = '--auto';
/** opencode's RejectedError / DeniedError texts. */
const DENIAL = /rejected permission to use this specific tool call|rule which prevents you from using this specific tool call/i;

function toolEvents(part: Record<string, unknown>): AgentEvent[] {
  const state = asRecord(part.state) ?? {};
  const name = asString(part.tool) ?? 'tool';
  const summary = oneLine(asString(state.title) ?? '') || summarizeInput(state.input);
  const failed = state.status === 'error';
  const text = failed ? (asString(state.error) ?? '') : (asString(state.output) ?? '');
  const events: AgentEvent[] = [
    { kind: 'tool_call', name, summary },
    { kind: 'tool_result', text, isError: failed },
  ];
  if (failed && DENIAL.test(text)) events.push({ kind: 'error', message: `tool denied: ${name}: ${text}`, errorType: PERMISSION_DENIED });
  return events;
}

function stepFinish(part: Record<string, unknown>): AgentEvent[] {
  const reason = asString(part.reason);
  if (reason === 'tool-calls') return [];
  const tokens = asRecord(part.tokens) ?? {};
  const cache = asRecord(tokens.cache) ?? {};
  const usage = {
    inputTokens: (asNumber(tokens.input) ?? 0) + (asNumber(cache.read) ?? 0) + (asNumber(cache.write) ?? 0),
    outputTokens: (asNumber(tokens.output) ?? 0) + (asNumber(tokens.reasoning) ?? 0),
    costUsd: asNumber(part.cost),
  };
  if (reason === 'stop') return [{ kind: 'result', text: '', isError: false, subtype: 'stop', ...usage }];
  // length, content-filter, error…: the model stopped before it was done.
  const error = asString(asRecord(part.error)?.message) ?? asString(part.error);
  return [{ kind: 'result', text: error ?? `opencode step finished with reason "${reason ?? 'unknown'}"`, isError: true, subtype: reason, ...usage }];
}

/**
 * Reads one line of `opencode run --format json`. The stream has no result event: the final `step_finish`
 * with reason "stop" becomes one, and the answer is the `text` parts before it.
 */
export function parseOpencodeLine(line: string): AgentEvent[] {
  const event = parseJsonObject(line);
  if (!event) return line.trim() ? [{ kind: 'other', text: line }] : [];
  const part = asRecord(event.part) ?? {};
  switch (event.type) {
    case 'text': {
      const text = asString(part.text);
      return text ? [{ kind: 'text', text }] : [];
    }
    case 'tool_use':
      return toolEvents(part);
    case 'step_finish':
      return stepFinish(part);
    case 'error': {
      const error = asRecord(event.error) ?? {};
      const data = asRecord(error.data) ?? {};
      return [{ kind: 'error', message: asString(data.message) ?? asString(error.message) ?? asString(error.name) ?? 'opencode error', status: asNumber(data.statusCode), errorType: asString(error.name) }];
    }
    default:
      return [];
  }
}

export const opencode: Agent = {
  name: 'opencode',
  bin: 'opencode',
  command(request: AgentRequest): Command {
    // opencode appends a piped stdin to the message: a prompt too big for argv goes there alone.
    const inArgv = promptFitsArgv(request.prompt);
    const args = ['run', '--format', 'json', ALLOW_FLAG];
    if (request.model) args.push('-m', request.model);
    // opencode falls back to its default agent, silently, when the profile does not exist.
    if (request.profile) args.push('--agent', request.profile);
    if (inArgv) args.push(request.prompt);
    args.push(...(request.isolationArgs ?? []), ...request.extraArgs);
    return { bin: 'opencode', args, stdin: inArgv ? undefined : request.prompt, env: { ...NESTED_SESSION_ENV } };
  },
  parseLine: parseOpencodeLine,
  isolation: {
    args: ['--pure'],
    covers: 'external plugins (`opencode run --pure`)',
    leaves: 'MCP servers, agents and instructions in ~/.config/opencode: opencode 1.18 has no switch for its global config',
  },
  state: { paths: ['.config/opencode', '.local/share/opencode', '.local/state/opencode', '.cache/opencode'] },
  classify(transcript: Transcript, process: ProcessResult): Classification | undefined {
    const auth = transcript.errors.find((error) => error.errorType === 'ProviderAuthError');
    if (auth) return { kind: 'fatal', reason: `opencode could not authenticate: ${auth.message}`, hint: 'run `opencode auth login` for the provider, then start ralph again' };
    if (process.exitCode !== 0) return undefined;
    const denied = deniedTool('opencode', ALLOW_FLAG, transcript);
    if (denied) return denied;
    if (!transcript.result && transcript.errors.length === 0) return { kind: 'transient', reason: 'opencode ended without finishing its last step (no step_finish with reason "stop")' };
    return undefined;
  },
};
