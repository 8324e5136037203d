import { describe, expect, it } from 'vitest';
import { classifyRun } from '../../../lib/agents/classify.ts';
import { gemini, parseGeminiLine } from '../../../lib/agents/gemini.ts';
import { finalAnswer, newTranscript, record } from '../../../lib/agents/transcript.ts';
import { BIG_PROMPT, exited, kinds, NOW, replay, request } from './replay.ts';

const COMPLETE = 'Work done. <promise>COMPLETE</promise>';

describe('gemini command', () => {
  it('passes the prompt with -p, yolo, skip-trust and stream-json', () => {
    expect(gemini.command(request())).toEqual({
      bin: 'gemini',
      args: ['-p', 'Say done', '--yolo', '--skip-trust', '-o', 'stream-json'],
      stdin: undefined,
      env: expect.objectContaining({ CLAUDECODE: undefined }),
    });
  });

  it('adds -m and the extra args; a profile has no gemini equivalent', () => {
    const command = gemini.command(request({ model: 'gemini-2.5-pro', profile: 'reviewer', extraArgs: ['--include-directories', '../shared'] }));
    expect(command.args).toEqual(['-p', 'Say done', '--yolo', '--skip-trust', '-o', 'stream-json', '-m', 'gemini-2.5-pro', '--include-directories', '../shared']);
  });

  it('pipes a prompt too big for argv: with no -p, stdin is the whole prompt', () => {
    const command = gemini.command(request({ prompt: BIG_PROMPT, model: 'm' }));
    expect(command.args).toEqual(['--yolo', '--skip-trust', '-o', 'stream-json', '-m', 'm']);
    expect(command.stdin).toBe(BIG_PROMPT);
  });
});

describe('gemini recordings', () => {
  it('gemini-ok: assistant deltas, then result success', () => {
    const run = replay(gemini, 'gemini-ok.jsonl');
    expect(kinds(run.events)).toEqual(['init', 'text', 'result']);
    expect(run.events[0]).toEqual({ kind: 'init', model: 'gemini-2.5-flash', sessionId: '39098910-5b55-47d5-b2d3-f3d4b6fa00a0' });
    expect(run.events[2]).toMatchObject({ kind: 'result', isError: false, subtype: 'success', inputTokens: 10, outputTokens: 12 });
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('joins deltas without line breaks, so a token split across them survives', () => {
    const lines = [
      ...['Work done. <prom', 'ise>COMPLETE</promise>'].map((content) => JSON.stringify({ type: 'message', role: 'assistant', content, delta: true })),
      '{"type":"result","status":"success","stats":{"total_tokens":30,"input_tokens":10,"output_tokens":12}}',
    ];
    const transcript = newTranscript();
    for (const event of lines.flatMap(parseGeminiLine)) record(transcript, event);
    expect(finalAnswer(transcript)).toBe(COMPLETE);
    // Thinking tokens only show in total_tokens; they are billed as output.
    expect(transcript.outputTokens).toBe(20);
  });

  it("a flag gemini's yargs refuses (Unknown argument) is a setup error, not retried", () => {
    const transcript = newTranscript();
    expect(classifyRun(gemini, transcript, exited(1, { stderrTail: 'Unknown argument: frobnicate\nUsage: gemini [options] [command]\n' }), NOW)).toMatchObject({ kind: 'fatal', reason: 'Unknown argument: frobnicate', hint: expect.stringContaining('rejected a flag') });
  });

  it('gemini-429: no result and exit 173 (429 mod 256): transient', () => {
    const run = replay(gemini, 'gemini-429.jsonl');
    expect(kinds(run.events)).toEqual(['init']);
    expect(run.classify(exited(173))).toEqual({ kind: 'transient', reason: 'gemini API error: HTTP 429 (exit 173)' });
  });

  it('gemini-529: result error and exit 247 (503 mod 256): transient', () => {
    const run = replay(gemini, 'gemini-529.jsonl');
    expect(run.transcript.result).toMatchObject({ isError: true, subtype: 'error', text: '[API Error: The model is overloaded. Please try again later.]' });
    expect(run.classify(exited(247))).toEqual({ kind: 'transient', reason: 'gemini API error: HTTP 503 (exit 247): [API Error: The model is overloaded. Please try again later.]' });
  });

  it('gemini-quota: an exhausted daily quota is a usage limit', () => {
    const run = replay(gemini, 'gemini-quota.jsonl');
    expect(run.transcript.result?.text).toContain('You have exhausted your daily quota on this model.');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'usage_limit', reason: '[API Error: You have exhausted your daily quota on this model.]' });
    // With an HTTP exit code the quota text still wins.
    expect(run.classify(exited(173)).kind).toBe('usage_limit');
  });

  it('gemini-quota-json.err: TerminalQuotaError on stderr is a usage limit', () => {
    const run = replay(gemini, undefined, 'gemini-quota-json.err');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'usage_limit', reason: expect.stringContaining('TerminalQuotaError') });
  });

  it('gemini-notrust.err: exit 55 is fatal', () => {
    const run = replay(gemini, undefined, 'gemini-notrust.err');
    expect(run.classify(exited(55))).toMatchObject({ kind: 'fatal', reason: expect.stringContaining('untrusted folder'), hint: expect.stringContaining('--skip-trust') });
  });

  it.each([
    [41, 'fatal'],
    [42, 'fatal'],
    [52, 'fatal'],
    [53, 'transient'],
    [247, 'transient'],
  ])('exit %i is %s', (code, kind) => {
    expect(replay(gemini).classify(exited(code)).kind).toBe(kind);
  });

  it('reads tool calls, tool results and warnings', () => {
    expect(parseGeminiLine('{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}')).toEqual([{ kind: 'tool_call', name: 'run_shell_command', summary: 'ls' }]);
    expect(parseGeminiLine('{"type":"tool_result","tool_id":"t1","status":"error","error":{"type":"x","message":"boom"}}')).toEqual([{ kind: 'tool_result', text: 'boom', isError: true }]);
    expect(parseGeminiLine('{"type":"error","severity":"warning","message":"loop detected"}')).toEqual([{ kind: 'other', text: 'warning: loop detected' }]);
    expect(parseGeminiLine('{"type":"message","role":"user","content":"Say done"}')).toEqual([]);
  });

  it('exit 0 without a result line is a cut-off run', () => {
    const run = replay(gemini, 'gemini-429.jsonl');
    expect(run.classify(exited(0)).kind).toBe('transient');
  });
});
