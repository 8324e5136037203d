import { describe, expect, it } from 'vitest';
import { classifyRun } from '../../../lib/agents/classify.ts';
import { copilot, parseCopilotLine } from '../../../lib/agents/copilot.ts';
import { newTranscript, record } from '../../../lib/agents/transcript.ts';
import { BIG_PROMPT, exited, kinds, NOW, replay, request } from './replay.ts';

const COMPLETE = 'Work done. <promise>COMPLETE</promise>';

describe('copilot command', () => {
  it('passes the prompt with -p, allows all tools and asks for JSONL', () => {
    expect(copilot.command(request())).toEqual({
      bin: 'copilot',
      args: ['-p', 'Say done', '--allow-all-tools', '--output-format', 'json'],
      stdin: undefined,
      env: expect.objectContaining({ CLAUDECODE: undefined }),
    });
  });

  it('adds --model, --agent for a profile and the extra args; never --autopilot', () => {
    const command = copilot.command(request({ model: 'gpt-5', profile: 'reviewer', extraArgs: ['--allow-all-paths'] }));
    expect(command.args).toEqual(['-p', 'Say done', '--allow-all-tools', '--output-format', 'json', '--model', 'gpt-5', '--agent', 'reviewer', '--allow-all-paths']);
    expect(command.args).not.toContain('--autopilot');
  });

  it('pipes a prompt too big for argv (or starting with a dash) instead of -p', () => {
    for (const prompt of [BIG_PROMPT, '- [ ] task one']) {
      const command = copilot.command(request({ prompt, profile: 'reviewer' }));
      expect(command.args).toEqual(['--allow-all-tools', '--output-format', 'json', '--agent', 'reviewer']);
      expect(command.stdin).toBe(prompt);
    }
  });
});

describe('copilot recordings', () => {
  it('copilot-ok: the assistant.message content is the answer, result exit 0', () => {
    const run = replay(copilot, 'copilot-ok.jsonl');
    expect(kinds(run.events)).toEqual(['text', 'result']);
    expect(run.events[1]).toEqual({ kind: 'result', text: '', isError: false, subtype: 'exit 0' });
    expect(run.transcript.result?.text).toBe(COMPLETE);
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('copilot-429: retries, then session.error rate_limit: transient', () => {
    const run = replay(copilot, 'copilot-429.jsonl');
    expect(run.transcript.retries).toBe(5);
    expect(run.transcript.errors).toEqual([expect.objectContaining({ errorType: 'rate_limit', status: 429 })]);
    expect(run.transcript.result).toMatchObject({ isError: true, subtype: 'exit 1' });
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: expect.stringContaining('Last error: 429 Rate limit reached') });
  });

  it('copilot-500: session.error with errorType query: transient', () => {
    const run = replay(copilot, 'copilot-500.jsonl');
    expect(run.transcript.errors).toEqual([expect.objectContaining({ errorType: 'query', status: 500 })]);
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: expect.stringContaining('500 The server is overloaded') });
  });

  it('copilot-quota: "exceeded your current quota" is a usage limit', () => {
    const run = replay(copilot, 'copilot-quota.jsonl');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'usage_limit', reason: expect.stringContaining('exceeded your current quota') });
  });

  it('copilot-text-429.err: the text-mode failure on stderr is transient', () => {
    const run = replay(copilot, undefined, 'copilot-text-429.err');
    expect(run.classify(exited(1)).kind).toBe('transient');
  });

  it('copilot-tool-noallow: a denied tool with exit 0 is retried although the agent claims completion', () => {
    const run = replay(copilot, 'copilot-tool-noallow.jsonl');
    expect(kinds(run.events)).toEqual(['tool_call', 'tool_result', 'error', 'text', 'result']);
    expect(run.events[0]).toEqual({ kind: 'tool_call', name: 'bash', summary: 'touch /home/dev/project/copilot_touched && echo created' });
    expect(run.events[1]).toMatchObject({ kind: 'tool_result', isError: true, text: expect.stringContaining('Permission denied') });
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'transient', reason: expect.stringMatching(/^copilot denied a tool call although ralph passed --allow-all-tools/) });
  });

  it('exit 0 without the result line is a cut-off run', () => {
    const transcript = newTranscript();
    for (const event of parseCopilotLine('{"type":"assistant.message","data":{"content":"half"}}')) record(transcript, event);
    expect(classifyRun(copilot, transcript, exited(0), NOW)).toMatchObject({ kind: 'transient', reason: expect.stringContaining('without a result') });
  });

  it('reads a successful tool result and keeps unknown lines as other', () => {
    expect(parseCopilotLine('{"type":"tool.execution_complete","data":{"success":true,"result":{"content":"ok"}}}')).toEqual([{ kind: 'tool_result', text: 'ok', isError: false }]);
    expect(parseCopilotLine('Error: something')).toEqual([{ kind: 'other', text: 'Error: something' }]);
    expect(parseCopilotLine('{"type":"assistant.message_delta","data":{"deltaContent":"x"}}')).toEqual([]);
  });
});
