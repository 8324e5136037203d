import { describe, expect, it } from 'vitest';
import { createCustomAgent, type CustomAgentConfig } from '../../../lib/agents/custom.ts';
import { RalphError } from '../../../lib/errors.ts';
import { exited, feed, kinds, replay, request } from './replay.ts';

const base: CustomAgentConfig = { bin: 'my-agent', args: ['run', '--model', '{model}', '{prompt}'], format: 'text' };

describe('custom agent command', () => {
  it('puts the prompt where "{prompt}" stands and the model where "{model}" stands', () => {
    const command = createCustomAgent(base).command(request({ prompt: 'cost $5 & `rm`', model: 'm1', extraArgs: ['--fast'] }));
    expect(command).toEqual({ bin: 'my-agent', args: ['run', '--model', 'm1', 'cost $5 & `rm`', '--fast'], stdin: undefined, env: expect.objectContaining({ CLAUDECODE: undefined }) });
  });

  it('without a model drops "{model}" and the flag before it, and an argument embedding it', () => {
    const agent = createCustomAgent({ ...base, args: ['run', '--model', '{model}', '--variant={model}', '{prompt}'] });
    expect(agent.command(request()).args).toEqual(['run', 'Say done']);
  });

  it('replaces "{prompt}" inside an argument too', () => {
    const agent = createCustomAgent({ ...base, args: ['--prompt={prompt}'] });
    expect(agent.command(request()).args).toEqual(['--prompt=Say done']);
  });

  it('pipes the prompt when no argument holds "{prompt}"', () => {
    const command = createCustomAgent({ ...base, args: ['-p', '-'] }).command(request({ profile: 'ignored' }));
    expect(command.args).toEqual(['-p', '-']);
    expect(command.stdin).toBe('Say done');
  });

  it('rejects a definition without bin, with bad args or an unknown format', () => {
    expect(() => createCustomAgent({ ...base, bin: ' ' })).toThrow(RalphError);
    expect(() => createCustomAgent({ ...base, args: [1] as unknown as string[] })).toThrow(/args/);
    expect(() => createCustomAgent({ ...base, format: 'xml' as CustomAgentConfig['format'] })).toThrow(/unknown format 'xml'/);
  });
});

describe('custom agent output', () => {
  it('text: every line is answer text; exit 0 is ok', () => {
    const run = feed(createCustomAgent(base), ['Thinking…', 'Work done.', '<promise>COMPLETE</promise>', '']);
    expect(kinds(run.events)).toEqual(['text', 'text', 'text']);
    expect(run.answer).toBe('Thinking…\nWork done.\n<promise>COMPLETE</promise>');
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
    expect(run.classify(exited(2)).kind).toBe('transient');
  });

  it('claude-stream-json: read with the Claude parser and classified like Claude', () => {
    const agent = createCustomAgent({ ...base, format: 'claude-stream-json' });
    const ok = replay(agent, 'claude-ok.jsonl');
    expect(ok.answer).toBe('Work done. <promise>COMPLETE</promise>');
    expect(ok.classify(exited(0))).toEqual({ kind: 'ok' });
    expect(replay(agent, 'claude-oauth-unified5h.jsonl').classify(exited(1))).toMatchObject({ kind: 'usage_limit', resetAt: 1795317728000 });
    expect(replay(agent, 'claude-429-retry.jsonl').classify(exited(0))).toMatchObject({ kind: 'transient' });
  });
});
