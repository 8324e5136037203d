import { RalphError } from '../errors.ts';
import type { CustomAgentConfig } from './custom.ts';
import type { Agent } from './types.ts';

export type { CustomAgentConfig } from './custom.ts';

// An adapter's module loads only when its agent is used: each module costs a few ms of a run's start under tsx.
const BUILT_IN: Record<string, () => Promise<Agent>> = {
  claude: async () => (await import('./claude.ts')).claude,
  copilot: async () => (await import('./copilot.ts')).copilot,
  gemini: async () => (await import('./gemini.ts')).gemini,
  codex: async () => (await import('./codex.ts')).codex,
  amp: async () => (await import('./amp.ts')).amp,
  opencode: async () => (await import('./opencode.ts')).opencode,
  cursor: async () => (await import('./cursor.ts')).cursor,
};

/** The built-in adapters' --agent names. */
export const BUILT_IN_AGENTS: string[] = Object.keys(BUILT_IN);

/** Every value --agent accepts: the built-ins and `custom`. */
export const SUPPORTED_AGENTS: string[] = [...BUILT_IN_AGENTS, 'custom'];

/** The adapter for an --agent value; `custom` needs its definition. Rejects with a one-line RalphError otherwise. */
export async function getAgent(name: string, custom?: CustomAgentConfig): Promise<Agent> {
  const key = name.trim().toLowerCase();
  if (key === 'custom') {
    if (!custom) throw new RalphError("agent 'custom' has no definition", { hint: 'describe it in the config: bin, args (with {prompt} and {model}) and format' });
    return (await import('./custom.ts')).createCustomAgent(custom);
  }
  const load = Object.hasOwn(BUILT_IN, key) ? BUILT_IN[key] : undefined;
  if (!load) {
    throw new RalphError(`unknown agent '${name}'; supported agents: ${SUPPORTED_AGENTS.join(', ')}`, { hint: 'choose one with --agent' });
  }
  return load();
}
