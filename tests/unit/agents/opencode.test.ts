import { describe, expect, it } from 'vitest';
import { opencode, parseOpencodeLine } from '../../../lib/agents/opencode.ts';
import { BIG_PROMPT, exited, feed, kinds, replay, request } from './replay.ts';

const COMPLETE = 'Work done. <promise>COMPLETE</promise>';

describe('opencode command', () => {
  it('runs `run --format json --auto` with the prompt as the message', () => {
    expect(opencode.command(request())).toEqual({
      bin: 'opencode',
      args: ['run', '--format', 'json', '--auto', 'Say done'],
      stdin: undefined,
      env: expect.objectContaining({ CLAUDECODE: undefined }),
    });
  });

  it('adds -m provider/model, --agent for a profile, then the prompt and the extra args', () => {
    const command = opencode.command(request({ model: 'anthropic/claude-sonnet-4-5', profile: 'build', extraArgs: ['--print-logs'] }));
    expect(command.args).toEqual(['run', '--format', 'json', '--auto', '-m', 'anthropic/claude-sonnet-4-5', '--agent', 'build', 'Say done', '--print-logs']);
  });

  it('pipes a prompt too big for argv (opencode appends stdin to the message)', () => {
    const command = opencode.command(request({ prompt: BIG_PROMPT }));
    expect(command.args).toEqual(['run', '--format', 'json', '--auto']);
    expect(command.stdin).toBe(BIG_PROMPT);
  });
});

describe('opencode recordings', () => {
  it('opencode-ok: text part, then step_finish "stop" becomes the result', () => {
    const run = replay(opencode, 'opencode-ok.jsonl');
    expect(kinds(run.events)).toEqual(['text', 'result']);
    expect(run.events[1]).toEqual({ kind: 'result', text: '', isError: false, subtype: 'stop', inputTokens: 10, outputTokens: 12, costUsd: 0 });
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it.each([
    ['opencode-429.jsonl', 429, 'transient', 'Rate limit reached for gpt-mock'],
    ['opencode-500.jsonl', 500, 'transient', 'The server is overloaded'],
    ['opencode-quota.jsonl', 429, 'usage_limit', 'You exceeded your current quota'],
  ])('%s: an APIError with statusCode %i is %s', (file, status, kind, text) => {
    const run = replay(opencode, file);
    expect(run.events).toEqual([{ kind: 'error', message: expect.stringContaining(text), status, errorType: 'APIError' }]);
    expect(run.classify(exited(1))).toMatchObject({ kind, reason: expect.stringContaining(text) });
  });

  it('opencode-tool-default: the recorded bash call completed (no denial), so the run is ok', () => {
    const run = replay(opencode, 'opencode-tool-default.jsonl');
    expect(kinds(run.events)).toEqual(['tool_call', 'tool_result', 'text', 'result']);
    expect(run.events[0]).toEqual({ kind: 'tool_call', name: 'bash', summary: 'touch /home/dev/project/oc_touched && echo created' });
    expect(run.events[1]).toEqual({ kind: 'tool_result', text: 'created\n', isError: false });
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('a rejected permission with exit 0 is retried, with the reason', () => {
    const denied = '{"type":"tool_use","part":{"type":"tool","tool":"bash","state":{"status":"error","input":{"command":"rm x"},"error":"The user rejected permission to use this specific tool call."}}}';
    const run = feed(opencode, [denied, '{"type":"text","part":{"text":"Done. <promise>COMPLETE</promise>"}}', '{"type":"step_finish","part":{"reason":"stop"}}']);
    expect(kinds(run.events)).toEqual(['tool_call', 'tool_result', 'error', 'text', 'result']);
    expect(run.classify(exited(0))).toEqual({ kind: 'transient', reason: expect.stringMatching(/^opencode denied a tool call although ralph passed --auto/) });
  });

  it('a provider auth error is fatal', () => {
    const run = feed(opencode, ['{"type":"error","error":{"name":"ProviderAuthError","data":{"providerID":"openai","message":"missing API key"}}}']);
    expect(run.classify(exited(1))).toMatchObject({ kind: 'fatal', hint: expect.stringContaining('opencode auth login') });
  });

  it('a step that stops for another reason than "stop" is a failed result', () => {
    expect(parseOpencodeLine('{"type":"step_finish","part":{"reason":"length"}}')).toEqual([
      { kind: 'result', text: 'opencode step finished with reason "length"', isError: true, subtype: 'length', inputTokens: 0, outputTokens: 0, costUsd: undefined },
    ]);
    expect(parseOpencodeLine('{"type":"step_finish","part":{"reason":"tool-calls"}}')).toEqual([]);
  });

  it('exit 0 without a final "stop" step is a cut-off run', () => {
    const run = feed(opencode, ['{"type":"text","part":{"text":"half"}}']);
    expect(run.classify(exited(0))).toMatchObject({ kind: 'transient', reason: expect.stringContaining('step_finish') });
  });
});
