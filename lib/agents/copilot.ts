import type { Command, ProcessResult } from '../process/runner.ts';
import {
  asNumber,
  asRecord,
  asString,
  deniedTool,
  endedWithoutResult,
  NESTED_SESSION_ENV,
  oneLine,
  parseJsonObject,
  PERMISSION_DENIED,
  promptFitsArgv,
  summarizeInput,
} from './common.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';

const ALLOW_FLAG = '--allow-all-tools';

/**
 * Reads one line of `copilot -p … --output-format json`. The answer is the `assistant.message` content
 * (deltas are skipped: the full message follows them); the closing `result` line carries only the exit
 * code, so its text is filled in from the last words by the transcript.
 */
export function parseCopilotLine(line: string): AgentEvent[] {
  const event = parseJsonObject(line);
  if (!event) return line.trim() ? [{ kind: 'other', text: line }] : [];
  const data = asRecord(event.data) ?? {};
  switch (event.type) {
    case 'assistant.message': {
      const events: AgentEvent[] = [];
      const content = asString(data.content);
      if (content) events.push({ kind: 'text', text: content });
      for (const request of Array.isArray(data.toolRequests) ? data.toolRequests : []) {
        const tool = asRecord(request) ?? {};
        const summary = summarizeInput(tool.arguments) || oneLine(asString(tool.intentionSummary) ?? '');
        events.push({ kind: 'tool_call', name: asString(tool.name) ?? 'tool', summary });
      }
      return events;
    }
    case 'tool.execution_complete': {
      const error = asRecord(data.error);
      const result = asRecord(data.result);
      const text = asString(error?.message) ?? asString(result?.content) ?? asString(data.result) ?? '';
      const events: AgentEvent[] = [{ kind: 'tool_result', text, isError: data.success === false }];
      if (error?.code === 'denied') events.push({ kind: 'error', message: `tool denied: ${text}`, errorType: PERMISSION_DENIED });
      return events;
    }
    case 'assistant.turn_retry':
      return [{ kind: 'retry', message: asString(data.reason) }];
    case 'session.error':
      return [{ kind: 'error', message: asString(data.message) ?? 'copilot session error', status: asNumber(data.statusCode), errorType: asString(data.errorType) }];
    case 'session.warning':
      return [{ kind: 'other', text: `warning: ${asString(data.message) ?? ''}` }];
    case 'result': {
      const exitCode = asNumber(event.exitCode);
      return [{ kind: 'result', text: '', isError: exitCode !== undefined && exitCode !== 0, subtype: exitCode === undefined ? undefined : `exit ${exitCode}` }];
    }
    default:
      return [];
  }
}

export const copilot: Agent = {
  name: 'copilot',
  bin: 'copilot',
  command(request: AgentRequest): Command {
    // `copilot -p PROMPT`; a prompt too big for one argv string is piped instead (copilot reads a piped
    // prompt when -p is absent, and ignores the pipe when -p is given).
    const inArgv = promptFitsArgv(request.prompt);
    const args = inArgv ? ['-p', request.prompt] : [];
    args.push(ALLOW_FLAG, '--output-format', 'json');
    if (request.model) args.push('--model', request.model);
    if (request.profile) args.push('--agent', request.profile);
    args.push(...(request.isolationArgs ?? []), ...request.extraArgs);
    return { bin: 'copilot', args, stdin: inArgv ? undefined : request.prompt, env: { ...NESTED_SESSION_ENV } };
  },
  parseLine: parseCopilotLine,
  isolation: {
    args: ['--disable-builtin-mcps'],
    disableUserServers: { dir: '.copilot', dirEnv: 'COPILOT_HOME', file: 'mcp-config.json', flag: '--disable-mcp-server' },
    covers: "the built-in GitHub MCP server and each MCP server of the user's mcp-config.json (one --disable-mcp-server each: there is no switch for all)",
    leaves: 'user-level hooks, installed plugins and custom instructions in ~/.copilot (only a separate COPILOT_HOME drops them, and it drops the login too)',
  },
  state: { paths: ['.copilot'], env: ['COPILOT_HOME'] },
  classify(transcript: Transcript, process: ProcessResult): Classification | undefined {
    // Copilot exits 0 when it refused a tool; ralph always passes --allow-all-tools, so a denial is retried.
    if (process.exitCode === 0) return deniedTool('copilot', ALLOW_FLAG, transcript) ?? endedWithoutResult(transcript, process);
    return undefined;
  },
};
