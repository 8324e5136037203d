import { describe, it, expect } from 'vitest';
import { agentFromFolders, agentFromInitOptions, agentName } from '../../../../lib/sources/speckit/agent.ts';

describe('agentFromInitOptions', () => {
  it.each([
    ['{"integration":"copilot","ai":"claude"}', 'copilot'],
    ['{"ai":"gemini"}', 'gemini'],
    ['{"integration":"cursor-agent"}', 'cursor'],
    ['{"integration":" Codex "}', 'codex'],
    ['{"integration":"windsurf"}', 'windsurf'],
    ['{"script":"sh"}', undefined],
    ['{"integration":""}', undefined],
    ['not json', undefined],
    [undefined, undefined],
  ])('%s → %s', (text, agent) => {
    expect(agentFromInitOptions(text)).toBe(agent);
  });

  it('passes names ralph may not drive through unchanged, for the agent registry to reject by name', () => {
    expect(agentName('qwen')).toBe('qwen');
  });
});

describe('agentFromFolders', () => {
  const tree = (dirs: Record<string, string[]>) => (dir: string) => dirs[dir];

  it.each([
    [{}, undefined],
    [{ '.claude': ['settings.json'] }, 'claude'],
    [{ '.github/agents': ['speckit.implement.agent.md'] }, 'copilot'],
    [{ '.codex': [] }, 'codex'],
    [{ '.agents/skills': ['speckit-implement'] }, 'codex'],
    [{ '.agents/commands': ['speckit.implement.md'] }, 'amp'],
    [{ '.opencode/command': ['speckit.implement.md'] }, 'opencode'],
    [{ '.cursor': [] }, 'cursor'],
    // A .claude folder with only personal settings loses to the folder holding Spec Kit commands.
    [{ '.claude': ['settings.local.json'], '.gemini/commands': ['speckit.implement.toml'] }, 'gemini'],
    [{ '.claude/skills': ['speckit-implement'], '.github/agents': ['speckit.implement.agent.md'] }, 'claude'],
  ])('%j → %s', (dirs, agent) => {
    expect(agentFromFolders(tree(dirs as Record<string, string[]>))).toBe(agent);
  });
});
