import { describe, expect, it } from 'vitest';
import { amp } from '../../../lib/agents/amp.ts';
import { BIG_PROMPT, exited, feed, kinds, replay, request } from './replay.ts';

describe('amp command', () => {
  it('runs execute mode with all tools allowed and stream-json, the prompt on stdin', () => {
    expect(amp.command(request())).toEqual({
      bin: 'amp',
      args: ['-x', '--dangerously-allow-all', '--stream-json'],
      stdin: 'Say done',
      env: expect.objectContaining({ CLAUDECODE: undefined }),
    });
  });

  it('adds -m and the extra args; a profile has no amp equivalent; a big prompt stays on stdin', () => {
    const command = amp.command(request({ prompt: BIG_PROMPT, model: 'high', profile: 'ignored', extraArgs: ['--no-notifications'] }));
    expect(command.args).toEqual(['-x', '--dangerously-allow-all', '--stream-json', '-m', 'high', '--no-notifications']);
    expect(command.stdin).toBe(BIG_PROMPT);
  });
});

describe('amp recordings', () => {
  it('amp-noauth.out: the login prompt blocks until the idle timeout; that is fatal, not a timeout', () => {
    const run = replay(amp, 'amp-noauth.out');
    expect(kinds(run.events)).toEqual(['other', 'other', 'other', 'other']);
    const hung = exited(null, { signal: 'SIGTERM', reason: 'idle', durationMs: 900_000 });
    expect(run.classify(hung)).toMatchObject({ kind: 'fatal', reason: 'No API key found. Starting login flow...', hint: expect.stringContaining('AMP_API_KEY') });
    expect(run.classify(exited(0))).toMatchObject({ kind: 'fatal', hint: expect.stringContaining('AMP_API_KEY') });
    expect(run.classify(exited(1))).toMatchObject({ kind: 'fatal' });
  });

  it('amp-mock.err: a failed backend request is transient', () => {
    const run = replay(amp, undefined, 'amp-mock.err');
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: 'agent exited with code 1: Error: API request for getUserInfo failed: 404' });
  });

  it('reads Claude-compatible stream-json (replaying claude-ok.jsonl)', () => {
    const run = replay(amp, 'claude-ok.jsonl');
    expect(kinds(run.events)).toEqual(['init', 'text', 'result']);
    expect(run.answer).toBe('Work done. <promise>COMPLETE</promise>');
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('uses the `error` string of a failed result as its text', () => {
    const run = feed(amp, ['{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":1,"error":"Rate limit exceeded. Try again shortly.","session_id":"T-1"}']);
    expect(run.transcript.result).toMatchObject({ isError: true, subtype: 'error_during_execution', text: 'Rate limit exceeded. Try again shortly.' });
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: 'Rate limit exceeded. Try again shortly.' });
  });

  it('"You are out of credits." is a usage limit', () => {
    const run = feed(amp, ['{"type":"result","subtype":"error_during_execution","is_error":true,"error":"You are out of credits."}']);
    expect(run.classify(exited(1))).toMatchObject({ kind: 'usage_limit', reason: 'You are out of credits.' });
  });

  it('exit 0 without a result is a cut-off run', () => {
    const run = feed(amp, ['{"type":"assistant","message":{"content":[{"type":"text","text":"half"}]}}']);
    expect(run.classify(exited(0))).toMatchObject({ kind: 'transient' });
  });
});
