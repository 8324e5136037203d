import { RalphError } from '../errors.ts';
import { amp } from './amp.ts';
import { claude } from './claude.ts';
import { codex } from './codex.ts';
import { copilot } from './copilot.ts';
import { cursor } from './cursor.ts';
import { createCustomAgent, type CustomAgentConfig } from './custom.ts';
import { gemini } from './gemini.ts';
import { opencode } from './opencode.ts';
import type { Agent } from './types.ts';

export type { CustomAgentConfig } from './custom.ts';

/** The built-in adapters, by the name given to --agent. */
export const AGENTS: Record<string, Agent> = { claude, copilot, gemini, codex, amp, opencode, cursor };

/** Every value --agent accepts: the built-ins and `custom`. */
export const SUPPORTED_AGENTS: string[] = [...Object.keys(AGENTS), 'custom'];

/** The adapter for an --agent value; `custom` needs its definition. Throws a one-line RalphError otherwise. */
export function getAgent(name: string, custom?: CustomAgentConfig): Agent {
  const key = name.trim().toLowerCase();
  if (key === 'custom') {
    if (!custom) throw new RalphError("agent 'custom' has no definition", { hint: 'describe it in the config: bin, args (with {prompt} and {model}) and format' });
    return createCustomAgent(custom);
  }
  const agent = Object.hasOwn(AGENTS, key) ? AGENTS[key] : undefined;
  if (!agent) {
    throw new RalphError(`unknown agent '${name}'; supported agents: ${SUPPORTED_AGENTS.join(', ')}`, { hint: 'choose one with --agent' });
  }
  return agent;
}
