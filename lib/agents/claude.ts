import type { Command } from '../process/runner.ts';
import { asNumber, asRecord, asString, NESTED_SESSION_ENV, parseJsonObject, summarizeInput } from './common.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';
import type { ProcessResult } from '../process/runner.ts';

/** Reads one line of `claude -p --output-format stream-json --verbose`. */
export function parseClaudeLine(line: string): AgentEvent[] {
  const event = parseJsonObject(line);
  if (!event) return line.trim() ? [{ kind: 'other', text: line }] : [];
  switch (event.type) {
    case 'system': {
      if (event.subtype === 'init') return [{ kind: 'init', model: asString(event.model), sessionId: asString(event.session_id) }];
      if (event.subtype === 'api_retry') {
        return [{ kind: 'retry', attempt: asNumber(event.attempt), delayMs: asNumber(event.retry_delay_ms), status: asNumber(event.error_status), message: asString(event.error) }];
      }
      return [];
    }
    case 'assistant':
    case 'user': {
      const content = asRecord(event.message)?.content;
      if (!Array.isArray(content)) return [];
      const events: AgentEvent[] = [];
      for (const block of content) {
        const part = asRecord(block);
        if (!part) continue;
        if (event.type === 'assistant' && part.type === 'text' && typeof part.text === 'string') events.push({ kind: 'text', text: part.text });
        if (part.type === 'tool_use') events.push({ kind: 'tool_call', name: asString(part.name) ?? 'tool', summary: summarizeInput(part.input) });
        if (part.type === 'tool_result') events.push({ kind: 'tool_result', text: toolResultText(part.content), isError: part.is_error === true });
      }
      return events;
    }
    case 'rate_limit_event': {
      const info = asRecord(event.rate_limit_info) ?? {};
      const resetsAt = asNumber(info.resetsAt);
      return [
        {
          kind: 'rate_limit',
          status: info.status === 'rejected' ? 'rejected' : 'allowed',
          resetsAt: resetsAt === undefined ? undefined : resetsAt < 1e12 ? resetsAt * 1000 : resetsAt,
          limitType: asString(info.rateLimitType),
        },
      ];
    }
    case 'result': {
      const usage = asRecord(event.usage) ?? {};
      const errors = Array.isArray(event.errors) ? event.errors.filter((item): item is string => typeof item === 'string') : [];
      return [
        {
          kind: 'result',
          text: asString(event.result) ?? errors.join('\n'),
          isError: event.is_error === true,
          subtype: asString(event.subtype),
          turns: asNumber(event.num_turns),
          inputTokens: (asNumber(usage.input_tokens) ?? 0) + (asNumber(usage.cache_read_input_tokens) ?? 0) + (asNumber(usage.cache_creation_input_tokens) ?? 0),
          outputTokens: asNumber(usage.output_tokens),
          costUsd: asNumber(event.total_cost_usd),
          apiErrorStatus: asNumber(event.api_error_status),
          apiError: asString(event.api_error),
        },
      ];
    }
    default:
      return [];
  }
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((item) => asString(asRecord(item)?.text) ?? '').join('\n');
  return '';
}

export const claude: Agent = {
  name: 'claude',
  bin: 'claude',
  command(request: AgentRequest): Command {
    const args = ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
    if (request.model) args.push('--model', request.model);
    if (request.profile) args.push('--agent', request.profile);
    args.push(...(request.isolationArgs ?? []), ...request.extraArgs);
    // The prompt goes on stdin (closed after writing): no argv size limit, nothing for a shell to see.
    return { bin: 'claude', args, stdin: request.prompt, env: { ...NESTED_SESSION_ENV } };
  },
  parseLine: parseClaudeLine,
  isolation: {
    args: ['--setting-sources', 'project,local', '--strict-mcp-config'],
    keepProjectFile: { file: '.mcp.json', flag: '--mcp-config' },
    covers: "user settings (~/.claude/settings.json: hooks, enabled plugins, permissions, env) and every MCP server but the project's .mcp.json (user- and local-scope servers in ~/.claude.json)",
    leaves: 'user memory (~/.claude/CLAUDE.md), user subagents and commands in ~/.claude/ (not verified against the real CLI)',
  },
  state: { paths: ['.claude', '.claude.json'], env: ['CLAUDE_CONFIG_DIR'] },
  // Recorded: as uid 0, --dangerously-skip-permissions is refused unless IS_SANDBOX=1 (exit 1, no work done).
  refuses(command, { uid, env }) {
    if (uid !== 0 || !command.args.includes('--dangerously-skip-permissions')) return undefined;
    const sandbox = command.env && 'IS_SANDBOX' in command.env ? command.env.IS_SANDBOX : env.IS_SANDBOX;
    if (sandbox === '1') return undefined;
    return 'claude refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1: run ralph as a normal user, or set IS_SANDBOX=1 where the agent is contained (a container, a VM, --sandbox bwrap)';
  },
  classify(transcript: Transcript, process: ProcessResult): Classification | undefined {
    // stream-json always ends with a result line; its absence means the CLI crashed or was cut off.
    if (process.exitCode === 0 && !transcript.result && transcript.errors.length === 0 && !/not logged in/i.test(transcript.otherText.join('\n'))) {
      return { kind: 'transient', reason: 'agent ended without a result (crash or cut-off output)' };
    }
    return undefined;
  },
};
