import { describe, expect, it } from 'vitest';
import { AGENTS, getAgent, SUPPORTED_AGENTS } from '../../../lib/agents/index.ts';
import { RalphError } from '../../../lib/errors.ts';
import { request } from './replay.ts';

describe('agent registry', () => {
  it('holds every built-in adapter under its --agent name, plus custom', () => {
    expect(Object.keys(AGENTS)).toEqual(['claude', 'copilot', 'gemini', 'codex', 'amp', 'opencode', 'cursor']);
    expect(SUPPORTED_AGENTS).toEqual(['claude', 'copilot', 'gemini', 'codex', 'amp', 'opencode', 'cursor', 'custom']);
    for (const [name, agent] of Object.entries(AGENTS)) {
      expect(agent.name).toBe(name);
      expect(getAgent(name)).toBe(agent);
      // run.ts asks for the executable with an empty prompt.
      expect(agent.command(request({ prompt: '' })).bin).toBe(agent.bin);
    }
    expect(getAgent(' Gemini ')).toBe(AGENTS.gemini);
  });

  it('every adapter unsets the nested-session variables and never builds a shell string', () => {
    for (const agent of Object.values(AGENTS)) {
      const command = agent.command(request({ prompt: 'a; rm -rf / && echo "$HOME"' }));
      expect(command.env).toMatchObject({ CLAUDECODE: undefined, CLAUDE_CODE_ENTRYPOINT: undefined });
      expect(command.bin).not.toMatch(/\s/);
      expect([...command.args, command.stdin]).toContain('a; rm -rf / && echo "$HOME"');
    }
  });

  it('names the unknown agent and lists the supported ones, on one line', () => {
    expect(() => getAgent('aider')).toThrow(RalphError);
    expect(() => getAgent('aider')).toThrow("unknown agent 'aider'; supported agents: claude, copilot, gemini, codex, amp, opencode, cursor, custom");
    expect(() => getAgent('toString')).toThrow(/unknown agent 'toString'/);
  });

  it('builds custom from its definition and refuses it without one', () => {
    expect(() => getAgent('custom')).toThrow(/agent 'custom' has no definition/);
    const agent = getAgent('custom', { bin: 'my-agent', args: ['{prompt}'], format: 'text' });
    expect(agent.command(request()).args).toEqual(['Say done']);
  });
});
