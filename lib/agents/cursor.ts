import type { Command, ProcessResult } from '../process/runner.ts';
import { parseClaudeLine } from './claude.ts';
import { asRecord, asString, endedWithoutResult, NESTED_SESSION_ENV, oneLine, parseJsonObject, promptFitsArgv, summarizeInput } from './common.ts';
import { failureText } from './transcript.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';

/**
 * Cursor's own `tool_call` events: `{"type":"tool_call","subtype":"started"|"completed",
 * "tool_call":{"shellToolCall":{"args":{…},"result":{"success"|"error"|…:{…}}}}}` (docs, not recorded).
 */
function toolCallEvents(event: Record<string, unknown>): AgentEvent[] {
  const wrapper = asRecord(event.tool_call) ?? {};
  const [key, value] = Object.entries(wrapper)[0] ?? ['tool', {}];
  const call = asRecord(value) ?? {};
  const name = key.replace(/ToolCall$/, '') || 'tool';
  if (event.subtype === 'started') return [{ kind: 'tool_call', name, summary: summarizeInput(call.args) }];
  if (event.subtype !== 'completed') return [];
  const result = asRecord(call.result) ?? {};
  const outcome = Object.keys(result)[0] ?? '';
  const detail = asRecord(result[outcome]) ?? {};
  const text = asString(detail.stdout) ?? asString(detail.content) ?? asString(detail.message) ?? asString(detail.error) ?? '';
  return [{ kind: 'tool_result', text: oneLine(text, 2000), isError: outcome !== '' && outcome !== 'success' }];
}

/** Reads one line of `agent -p --output-format stream-json`: Claude's format plus `tool_call` events. */
export function parseCursorLine(line: string): AgentEvent[] {
  const event = parseJsonObject(line);
  if (event?.type === 'tool_call') return toolCallEvents(event);
  return parseClaudeLine(line);
}

export const cursor: Agent = {
  name: 'cursor',
  bin: 'agent',
  command(request: AgentRequest): Command {
    // The prompt is a positional argument; too big for argv, it is piped with no positional instead
    // (reported to work by users; the docs only show the argument form).
    const inArgv = promptFitsArgv(request.prompt);
    const args = ['-p', '--force', '--trust', '--output-format', 'stream-json'];
    if (request.model) args.push('--model', request.model);
    if (inArgv) args.push(request.prompt);
    args.push(...(request.isolationArgs ?? []), ...request.extraArgs);
    return { bin: 'agent', args, stdin: inArgv ? undefined : request.prompt, env: { ...NESTED_SESSION_ENV } };
  },
  parseLine: parseCursorLine,
  // No isolation: the cursor agent CLI has no flag to leave out ~/.cursor/mcp.json or user rules.
  state: { paths: ['.cursor', '.config/cursor'] },
  classify(transcript: Transcript, process: ProcessResult): Classification | undefined {
    if (process.exitCode !== 0 && /agent login|CURSOR_API_KEY|authentication required/i.test(failureText(transcript, process.stderrTail))) {
      return { kind: 'fatal', reason: 'cursor agent is not logged in', hint: 'run `agent login` or set CURSOR_API_KEY, then start ralph again' };
    }
    return endedWithoutResult(transcript, process);
  },
};
