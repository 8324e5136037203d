import { RalphError } from '../errors.ts';
import type { Command, ProcessResult } from '../process/runner.ts';
import { claude, parseClaudeLine } from './claude.ts';
import { NESTED_SESSION_ENV } from './common.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';

export const CUSTOM_FORMATS = ['claude-stream-json', 'text'] as const;

/** Any other agent CLI, described in the config. */
export interface CustomAgentConfig {
  bin: string;
  /**
   * May contain `{prompt}` and `{model}`. An argument containing `{prompt}` carries the prompt (then
   * nothing is piped); without one the prompt goes on stdin.
   */
  args: string[];
  /** `claude-stream-json`: Claude Code's stream-json events; `text`: every line is answer text. */
  format: (typeof CUSTOM_FORMATS)[number];
}

const PROMPT = '{prompt}';
const MODEL = '{model}';

/** Fills the placeholders; without a model, `{model}` arguments are dropped, with the flag just before a bare one. */
function expandArgs(template: readonly string[], request: AgentRequest): string[] {
  const args: string[] = [];
  for (const arg of template) {
    if (arg.includes(MODEL) && !request.model) {
      if (arg === MODEL && args.at(-1)?.startsWith('-')) args.pop();
      continue;
    }
    // Function replacers: a `$` in the prompt must stay a `$`.
    args.push(arg.replaceAll(MODEL, () => request.model ?? '').replaceAll(PROMPT, () => request.prompt));
  }
  return args;
}

function parseTextLine(line: string): AgentEvent[] {
  return line.trim() ? [{ kind: 'text', text: line }] : [];
}

/** Builds the adapter for a custom agent; throws a RalphError naming the bad field. */
export function createCustomAgent(config: CustomAgentConfig): Agent {
  if (typeof config.bin !== 'string' || !config.bin.trim()) {
    throw new RalphError('custom agent: "bin" must name the agent executable', { hint: 'set bin, args and format of the custom agent in the config' });
  }
  if (!Array.isArray(config.args) || config.args.some((arg) => typeof arg !== 'string')) {
    throw new RalphError('custom agent: "args" must be a list of strings', { hint: 'e.g. ["-p", "{prompt}", "--model", "{model}"]' });
  }
  if (!CUSTOM_FORMATS.includes(config.format)) {
    throw new RalphError(`custom agent: unknown format '${String(config.format)}'; use ${CUSTOM_FORMATS.join(' or ')}`);
  }
  const streamJson = config.format === 'claude-stream-json';
  return {
    name: 'custom',
    bin: config.bin,
    command(request: AgentRequest): Command {
      const promptInArgs = config.args.some((arg) => arg.includes(PROMPT));
      const args = [...expandArgs(config.args, request), ...request.extraArgs];
      return { bin: config.bin, args, stdin: promptInArgs ? undefined : request.prompt, env: { ...NESTED_SESSION_ENV } };
    },
    parseLine: streamJson ? parseClaudeLine : parseTextLine,
    classify(transcript: Transcript, process: ProcessResult, now: number): Classification | undefined {
      return streamJson ? claude.classify?.(transcript, process, now) : undefined;
    },
  };
}
