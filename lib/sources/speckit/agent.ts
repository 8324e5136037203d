// The agent a Spec Kit project was set up for: `.specify/init-options.json`, else the agent folders present.

/** The custom agent Spec Kit installs for Copilot (`.github/agents/speckit.implement.agent.md`). */
export const COPILOT_PROFILE = 'speckit.implement';
export const COPILOT_PROFILE_FILE = '.github/agents/speckit.implement.agent.md';

/** Spec Kit integration keys whose ralph agent has another name. */
const ALIASES: Record<string, string> = {
  'cursor-agent': 'cursor',
  'claude-code': 'claude',
  'github-copilot': 'copilot',
  'copilot-cli': 'copilot',
  'gemini-cli': 'gemini',
};

/** Folders each integration writes its commands to, most specific first (Spec Kit 1.0 and older layouts). */
export const AGENT_FOLDERS: readonly { agent: string; dirs: readonly string[] }[] = [
  { agent: 'claude', dirs: ['.claude/skills', '.claude/commands', '.claude'] },
  { agent: 'copilot', dirs: ['.github/agents', '.github/prompts'] },
  { agent: 'gemini', dirs: ['.gemini/commands', '.gemini'] },
  { agent: 'codex', dirs: ['.agents/skills', '.codex/prompts', '.codex'] },
  { agent: 'opencode', dirs: ['.opencode/command', '.opencode/commands', '.opencode'] },
  { agent: 'cursor', dirs: ['.cursor/commands', '.cursor/skills', '.cursor'] },
  { agent: 'amp', dirs: ['.agents/commands'] },
];

/** Maps a Spec Kit integration key to ralph's agent name. */
export function agentName(integration: string): string {
  const key = integration.trim().toLowerCase();
  return ALIASES[key] ?? key;
}

/** The integration recorded by `specify init` (`integration`, older `ai`); undefined when absent or unreadable. */
export function agentFromInitOptions(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    const data = JSON.parse(text) as Record<string, unknown>;
    const value = data.integration ?? data.ai;
    return typeof value === 'string' && value.trim() ? agentName(value) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The agent whose folders hold Spec Kit commands (an entry named `speckit…`); else the first agent
 * folder present. `list` returns a folder's entries, or undefined when it does not exist.
 */
export function agentFromFolders(list: (dir: string) => string[] | undefined): string | undefined {
  let present: string | undefined;
  for (const { agent, dirs } of AGENT_FOLDERS) {
    for (const dir of dirs) {
      const entries = list(dir);
      if (!entries) continue;
      if (entries.some((entry) => entry.toLowerCase().includes('speckit'))) return agent;
      present ??= agent;
    }
  }
  return present;
}
