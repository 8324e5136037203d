import { describe, expect, it } from 'vitest';
import { cursor, parseCursorLine } from '../../../lib/agents/cursor.ts';
import { BIG_PROMPT, exited, feed, kinds, replay, request } from './replay.ts';

describe('cursor command', () => {
  it('runs `agent -p --force --trust --output-format stream-json PROMPT`', () => {
    expect(cursor.command(request())).toEqual({
      bin: 'agent',
      args: ['-p', '--force', '--trust', '--output-format', 'stream-json', 'Say done'],
      stdin: undefined,
      env: expect.objectContaining({ CLAUDECODE: undefined }),
    });
  });

  it('adds --model, then the prompt, then the extra args; a profile has no cursor equivalent', () => {
    const command = cursor.command(request({ model: 'sonnet-4.5', profile: 'ignored', extraArgs: ['--approve-mcps'] }));
    expect(command.args).toEqual(['-p', '--force', '--trust', '--output-format', 'stream-json', '--model', 'sonnet-4.5', 'Say done', '--approve-mcps']);
  });

  it('pipes a prompt too big for argv, with no positional prompt', () => {
    const command = cursor.command(request({ prompt: BIG_PROMPT }));
    expect(command.args).toEqual(['-p', '--force', '--trust', '--output-format', 'stream-json']);
    expect(command.stdin).toBe(BIG_PROMPT);
  });
});

// No recording exists for Cursor: these lines follow its documented stream-json format.
const DOCUMENTED = [
  '{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/dev/project","session_id":"c1","model":"Claude 4 Sonnet","permissionMode":"default"}',
  '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Say done"}]},"session_id":"c1"}',
  '{"type":"tool_call","subtype":"started","call_id":"t1","tool_call":{"shellToolCall":{"args":{"command":"npm test"}}},"session_id":"c1"}',
  '{"type":"tool_call","subtype":"completed","call_id":"t1","tool_call":{"shellToolCall":{"args":{"command":"npm test"},"result":{"success":{"stdout":"ok","exitCode":0}}}},"session_id":"c1"}',
  '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Work done. <promise>COMPLETE</promise>"}]},"session_id":"c1"}',
  '{"type":"result","subtype":"success","duration_ms":1234,"is_error":false,"result":"Work done. <promise>COMPLETE</promise>","session_id":"c1"}',
];

describe('cursor stream', () => {
  it('reads the documented events: Claude-compatible plus tool_call', () => {
    const run = feed(cursor, DOCUMENTED);
    expect(kinds(run.events)).toEqual(['init', 'tool_call', 'tool_result', 'text', 'result']);
    expect(run.events[1]).toEqual({ kind: 'tool_call', name: 'shell', summary: 'npm test' });
    expect(run.events[2]).toEqual({ kind: 'tool_result', text: 'ok', isError: false });
    expect(run.answer).toBe('Work done. <promise>COMPLETE</promise>');
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('marks a failed tool call as an error result', () => {
    expect(parseCursorLine('{"type":"tool_call","subtype":"completed","tool_call":{"editToolCall":{"args":{"path":"a.ts"},"result":{"error":{"message":"no such file"}}}}}')).toEqual([
      { kind: 'tool_result', text: 'no such file', isError: true },
    ]);
  });

  it('reads a Claude recording the same way (claude-429.jsonl)', () => {
    const run = replay(cursor, 'claude-429.jsonl');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'transient', reason: expect.stringContaining('429') });
  });

  it('a missing login is fatal', () => {
    const run = feed(cursor, [], "Error: Authentication required. Please run 'agent login' first, or set CURSOR_API_KEY environment variable.");
    expect(run.classify(exited(1))).toMatchObject({ kind: 'fatal', hint: expect.stringContaining('agent login') });
  });

  it('exit 0 without a result is a cut-off run', () => {
    const run = feed(cursor, DOCUMENTED.slice(0, -1));
    expect(run.classify(exited(0))).toMatchObject({ kind: 'transient' });
  });
});
