import { describe, expect, it } from 'vitest';
import { BUILT_IN_AGENTS, getAgent, SUPPORTED_AGENTS } from '../../../lib/agents/index.ts';
import type { Agent } from '../../../lib/agents/types.ts';
import { RalphError } from '../../../lib/errors.ts';
import { request } from './replay.ts';

const builtIns = (): Promise<Agent[]> => Promise.all(BUILT_IN_AGENTS.map((name) => getAgent(name)));

describe('agent registry', () => {
  it('holds every built-in adapter under its --agent name, plus custom', async () => {
    expect(BUILT_IN_AGENTS).toEqual(['claude', 'copilot', 'gemini', 'codex', 'amp', 'opencode', 'cursor']);
    expect(SUPPORTED_AGENTS).toEqual(['claude', 'copilot', 'gemini', 'codex', 'amp', 'opencode', 'cursor', 'custom']);
    for (const [index, agent] of (await builtIns()).entries()) {
      expect(agent.name).toBe(BUILT_IN_AGENTS[index]);
      expect(await getAgent(agent.name)).toBe(agent);
      // run.ts asks for the executable with an empty prompt.
      expect(agent.command(request({ prompt: '' })).bin).toBe(agent.bin);
    }
    expect(await getAgent(' Gemini ')).toBe(await getAgent('gemini'));
  });

  it('every adapter unsets the nested-session variables and never builds a shell string', async () => {
    for (const agent of await builtIns()) {
      const command = agent.command(request({ prompt: 'a; rm -rf / && echo "$HOME"' }));
      expect(command.env).toMatchObject({ CLAUDECODE: undefined, CLAUDE_CODE_ENTRYPOINT: undefined });
      expect(command.bin).not.toMatch(/\s/);
      expect([...command.args, command.stdin]).toContain('a; rm -rf / && echo "$HOME"');
    }
  });

  it('names the unknown agent and lists the supported ones, on one line', async () => {
    await expect(getAgent('aider')).rejects.toThrow(RalphError);
    await expect(getAgent('aider')).rejects.toThrow("unknown agent 'aider'; supported agents: claude, copilot, gemini, codex, amp, opencode, cursor, custom");
    await expect(getAgent('toString')).rejects.toThrow(/unknown agent 'toString'/);
  });

  it('builds custom from its definition and refuses it without one', async () => {
    await expect(getAgent('custom')).rejects.toThrow(/agent 'custom' has no definition/);
    const agent = await getAgent('custom', { bin: 'my-agent', args: ['{prompt}'], format: 'text' });
    expect(agent.command(request()).args).toEqual(['Say done']);
  });
});
