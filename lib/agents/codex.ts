import type { Command, ProcessResult } from '../process/runner.ts';
import { asNumber, asRecord, asString, endedWithoutResult, NESTED_SESSION_ENV, oneLine, parseJsonObject } from './common.ts';
import { failureText } from './transcript.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';

/** One codex item that stands for a tool call: its name and a one-line summary. */
function toolCall(item: Record<string, unknown>): AgentEvent | undefined {
  switch (item.type) {
    case 'command_execution':
      return { kind: 'tool_call', name: 'shell', summary: oneLine(asString(item.command) ?? '') };
    case 'mcp_tool_call':
      return { kind: 'tool_call', name: [asString(item.server), asString(item.tool)].filter(Boolean).join('.') || 'mcp', summary: '' };
    case 'web_search':
      return { kind: 'tool_call', name: 'web_search', summary: oneLine(asString(item.query) ?? '') };
    case 'file_change': {
      const changes = Array.isArray(item.changes) ? item.changes.map((change) => asRecord(change) ?? {}) : [];
      return { kind: 'tool_call', name: 'edit', summary: oneLine(changes.map((change) => `${asString(change.kind) ?? 'update'} ${asString(change.path) ?? ''}`).join(', ')) };
    }
    default:
      return undefined;
  }
}

function itemEvents(type: unknown, item: Record<string, unknown>): AgentEvent[] {
  if (type === 'item.started') {
    // Commands and MCP calls are announced when they start; edits and searches only when done.
    const call = item.type === 'command_execution' || item.type === 'mcp_tool_call' ? toolCall(item) : undefined;
    return call ? [call] : [];
  }
  if (type !== 'item.completed') return [];
  switch (item.type) {
    case 'agent_message': {
      const text = asString(item.text);
      return text ? [{ kind: 'text', text }] : [];
    }
    case 'error':
      // e.g. "Model metadata for `x` not found": a warning, the turn goes on.
      return [{ kind: 'other', text: `warning: ${asString(item.message) ?? ''}` }];
    case 'command_execution': {
      const exitCode = asNumber(item.exit_code);
      return [{ kind: 'tool_result', text: asString(item.aggregated_output) ?? '', isError: item.status === 'failed' || (exitCode !== undefined && exitCode !== 0) }];
    }
    case 'mcp_tool_call':
      return [{ kind: 'tool_result', text: asString(asRecord(item.error)?.message) ?? '', isError: item.status === 'failed' }];
    case 'file_change':
    case 'web_search': {
      const call = toolCall(item);
      return call ? [call, { kind: 'tool_result', text: '', isError: item.status === 'failed' }] : [];
    }
    default:
      return [];
  }
}

/**
 * Reads one line of `codex exec --json`. The answer is the last `agent_message` item; `turn.completed` /
 * `turn.failed` end the run and become the result.
 */
export function parseCodexLine(line: string): AgentEvent[] {
  const event = parseJsonObject(line);
  if (!event) return line.trim() ? [{ kind: 'other', text: line }] : [];
  switch (event.type) {
    case 'thread.started':
      return [{ kind: 'init', sessionId: asString(event.thread_id) }];
    case 'item.started':
    case 'item.completed':
      return itemEvents(event.type, asRecord(event.item) ?? {});
    case 'error': {
      const message = asString(event.message) ?? 'codex error';
      const reconnect = /^Reconnecting\.\.\.\s*(\d+)\s*\/\s*\d+/.exec(message);
      if (reconnect) return [{ kind: 'retry', attempt: Number(reconnect[1]), message }];
      return [{ kind: 'error', message }];
    }
    case 'turn.completed': {
      const usage = asRecord(event.usage) ?? {};
      // OpenAI usage: input_tokens already includes cached_input_tokens.
      return [{ kind: 'result', text: '', isError: false, subtype: 'turn.completed', turns: 1, inputTokens: asNumber(usage.input_tokens), outputTokens: asNumber(usage.output_tokens) }];
    }
    case 'turn.failed':
      return [{ kind: 'result', text: asString(asRecord(event.error)?.message) ?? 'codex turn failed', isError: true, subtype: 'turn.failed', turns: 1 }];
    default:
      return [];
  }
}

export const codex: Agent = {
  name: 'codex',
  bin: 'codex',
  command(request: AgentRequest): Command {
    // `-` reads the prompt from stdin, which is then closed: no argv limit, and codex does not wait for EOF.
    const args = ['exec', '--json', '--dangerously-bypass-approvals-and-sandbox'];
    if (request.model) args.push('-m', request.model);
    args.push(...(request.isolationArgs ?? []), ...request.extraArgs, '-');
    return { bin: 'codex', args, stdin: request.prompt, env: { ...NESTED_SESSION_ENV } };
  },
  parseLine: parseCodexLine,
  isolation: {
    args: ['--ignore-user-config'],
    covers: '$CODEX_HOME/config.toml (MCP servers, profiles, notify hooks, model settings); the login in auth.json still works',
    leaves: 'global instructions in $CODEX_HOME/AGENTS.md',
  },
  state: { paths: ['.codex'], env: ['CODEX_HOME'] },
  classify(transcript: Transcript, process: ProcessResult): Classification | undefined {
    if (process.exitCode !== 0 && /incorrect api key|invalid_api_key|401 unauthorized/i.test(failureText(transcript, process.stderrTail))) {
      return { kind: 'fatal', reason: 'codex could not authenticate (401)', hint: 'run `codex login` or set OPENAI_API_KEY, then start ralph again' };
    }
    return endedWithoutResult(transcript, process);
  },
};
