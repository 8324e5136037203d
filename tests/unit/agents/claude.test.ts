import { describe, expect, it } from 'vitest';
import { classifyRun } from '../../../lib/agents/classify.ts';
import { claude } from '../../../lib/agents/claude.ts';
import { newTranscript, record } from '../../../lib/agents/transcript.ts';
import { BIG_PROMPT, exited, kinds, NOW, replay, request } from './replay.ts';

const COMPLETE = 'Work done. <promise>COMPLETE</promise>';

describe('claude command', () => {
  it('runs print mode with stream-json, verbose and all tools, prompt on stdin', () => {
    const command = claude.command(request());
    expect(command).toEqual({
      bin: 'claude',
      args: ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'],
      stdin: 'Say done',
      env: expect.objectContaining({ CLAUDECODE: undefined, CLAUDE_CODE_ENTRYPOINT: undefined }),
    });
  });

  it('adds model, profile and extra args, and keeps a big prompt on stdin', () => {
    const command = claude.command(request({ prompt: BIG_PROMPT, model: 'opus', profile: 'builder', extraArgs: ['--max-turns', '30'] }));
    expect(command.args).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--model', 'opus', '--agent', 'builder', '--max-turns', '30']);
    expect(command.stdin).toBe(BIG_PROMPT);
  });
});

describe('claude recordings', () => {
  it('claude-ok: init, text, result with the token', () => {
    const run = replay(claude, 'claude-ok.jsonl');
    expect(kinds(run.events)).toEqual(['init', 'text', 'result']);
    expect(run.events[0]).toMatchObject({ kind: 'init', model: 'claude-sonnet-4-5' });
    expect(run.transcript.result).toMatchObject({ isError: false, subtype: 'success', turns: 1, text: COMPLETE, outputTokens: 12 });
    expect(run.transcript.costUsd).toBeCloseTo(0.00021);
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('claude-oauth-ok: an allowed rate_limit_event does not stop the run', () => {
    const run = replay(claude, 'claude-oauth-ok.jsonl');
    expect(run.events).toContainEqual({ kind: 'rate_limit', status: 'allowed', resetsAt: undefined, limitType: undefined });
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('claude-429: is_error with subtype success is a transient failure', () => {
    const run = replay(claude, 'claude-429.jsonl');
    expect(run.transcript.result).toMatchObject({ isError: true, subtype: 'success', apiErrorStatus: 429 });
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: expect.stringContaining('API Error: Request rejected (429)') });
  });

  it('claude-429-retry: api_retry events, no result: transient', () => {
    const run = replay(claude, 'claude-429-retry.jsonl');
    expect(run.events.filter((event) => event.kind === 'retry')).toHaveLength(8);
    expect(run.events[1]).toEqual({ kind: 'retry', attempt: 1, delayMs: 1048, status: 429, message: 'rate_limit' });
    expect(run.transcript.result).toBeUndefined();
    expect(run.classify(exited(1)).kind).toBe('transient');
    expect(run.classify(exited(0))).toEqual({ kind: 'transient', reason: 'agent ended without a result (crash or cut-off output)' });
  });

  it.each([
    ['claude-500.jsonl', 500, 'API Error: 500'],
    ['claude-529.jsonl', 529, 'API Error: 529 Overloaded'],
  ])('%s: server errors are transient', (file, status, text) => {
    const run = replay(claude, file);
    expect(run.transcript.result).toMatchObject({ isError: true, apiErrorStatus: status });
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: expect.stringContaining(text) });
  });

  it('claude-unified5h (API key): a plain 429 without rate_limit_event is transient', () => {
    const run = replay(claude, 'claude-unified5h.jsonl');
    expect(run.transcript.rateLimit).toBeUndefined();
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: 'API Error: Request rejected (429) · Rate limited' });
  });

  it('claude-oauth-unified5h: a rejected rate_limit_event is a usage limit until resetsAt', () => {
    const run = replay(claude, 'claude-oauth-unified5h.jsonl');
    expect(run.transcript.rateLimit).toEqual({ kind: 'rate_limit', status: 'rejected', resetsAt: 1795317728000, limitType: 'five_hour' });
    expect(run.transcript.result).toMatchObject({ apiError: 'usage_limit_reached' });
    expect(run.classify(exited(1))).toEqual({ kind: 'usage_limit', reason: 'usage limit (five_hour)', resetAt: 1795317728000 });
  });

  it('claude-json-5h.out: the single result object is a usage limit with the reset read from the text', () => {
    const run = replay(claude, 'claude-json-5h.out');
    expect(kinds(run.events)).toEqual(['result']);
    expect(run.classify(exited(1))).toEqual({ kind: 'usage_limit', reason: "You've hit your 5-hour limit · resets 3:22am (UTC)", resetAt: Date.UTC(2026, 10, 22, 3, 22) });
  });

  it('claude-text-5h.out: text output is a usage limit resetting at the next 3:22 UTC', () => {
    const run = replay(claude, 'claude-text-5h.out');
    expect(kinds(run.events)).toEqual(['other']);
    expect(run.classify(exited(1))).toMatchObject({ kind: 'usage_limit', resetAt: Date.UTC(2026, 10, 22, 3, 22) });
    // Past 3:22 today: tomorrow.
    expect(run.classify(exited(1), Date.UTC(2026, 10, 22, 4, 0))).toMatchObject({ kind: 'usage_limit', resetAt: Date.UTC(2026, 10, 23, 3, 22) });
  });

  it('claude-maxturns: tool calls, then error_max_turns: transient', () => {
    const run = replay(claude, 'claude-maxturns.jsonl');
    expect(kinds(run.events)).toEqual(['init', 'tool_call', 'tool_result', 'tool_call', 'tool_result', 'result']);
    expect(run.events[1]).toEqual({ kind: 'tool_call', name: 'Bash', summary: 'echo hi' });
    expect(run.events[2]).toEqual({ kind: 'tool_result', text: 'hi', isError: false });
    expect(run.transcript.result).toMatchObject({ subtype: 'error_max_turns', isError: true, text: 'Reached maximum number of turns (2)', turns: 3 });
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: 'Reached maximum number of turns (2)' });
  });

  it('claude-noperm: exit 0 but an error result is not success', () => {
    const run = replay(claude, 'claude-noperm.jsonl');
    expect(run.transcript.toolCalls).toBe(2);
    expect(run.classify(exited(0))).toEqual({ kind: 'transient', reason: 'Reached maximum number of turns (2)' });
  });

  it('claude-noverbose.err: a rejected flag combination is fatal', () => {
    const run = replay(claude, undefined, 'claude-noverbose.err');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'fatal', reason: expect.stringContaining('requires --verbose') });
  });

  it('claude-agent-nosuch.err: an unknown profile is fatal', () => {
    const run = replay(claude, undefined, 'claude-agent-nosuch.err');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'fatal', reason: expect.stringContaining("--agent 'nosuch' not found"), hint: expect.stringContaining('--agent-profile') });
  });

  it("bubblewrap's own error (the sandbox could not start the agent) is fatal, not retried", () => {
    const transcript = newTranscript();
    const stderr = 'bwrap: execvp claude: No such file or directory\n';
    record(transcript, { kind: 'other', text: stderr.trim() });
    const verdict = classifyRun(claude, transcript, exited(1, { stderrTail: stderr }), NOW);
    expect(verdict).toMatchObject({ kind: 'fatal', reason: 'bwrap: execvp claude: No such file or directory', hint: expect.stringContaining('--sandbox bwrap') });
    // The agent's own words about bwrap are not bubblewrap's.
    const said = newTranscript();
    record(said, { kind: 'other', text: 'I ran bwrap: it failed' });
    expect(classifyRun(claude, said, exited(1, { stderrTail: 'the tests use bwrap: see the docs\n' }), NOW)).toMatchObject({ kind: 'transient' });
  });

  it('refusing root is fatal with the IS_SANDBOX hint', () => {
    const transcript = newTranscript();
    const stderr = '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n';
    record(transcript, { kind: 'other', text: stderr.trim() });
    const verdict = classifyRun(claude, transcript, exited(1, { stderrTail: stderr }), NOW);
    expect(verdict).toMatchObject({ kind: 'fatal', hint: expect.stringContaining('IS_SANDBOX=1') });
  });
});
