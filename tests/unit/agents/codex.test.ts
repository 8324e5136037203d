import { describe, expect, it } from 'vitest';
import { codex, parseCodexLine } from '../../../lib/agents/codex.ts';
import { nextClockTime } from '../../../lib/agents/limits.ts';
import { BIG_PROMPT, exited, feed, kinds, NOW, replay, request } from './replay.ts';

const COMPLETE = 'Work done. <promise>COMPLETE</promise>';

describe('codex command', () => {
  it('runs exec --json with approvals and sandbox bypassed, the prompt on stdin', () => {
    expect(codex.command(request())).toEqual({
      bin: 'codex',
      args: ['exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-'],
      stdin: 'Say done',
      env: expect.objectContaining({ CLAUDECODE: undefined }),
    });
  });

  it('adds -m and the extra args before the stdin marker; never --full-auto or --max-turns', () => {
    const command = codex.command(request({ prompt: BIG_PROMPT, model: 'gpt-5-codex', profile: 'ignored', extraArgs: ['--skip-git-repo-check'] }));
    expect(command.args).toEqual(['exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-m', 'gpt-5-codex', '--skip-git-repo-check', '-']);
    expect(command.args).not.toContain('--full-auto');
    expect(command.args).not.toContain('--max-turns');
    expect(command.stdin).toBe(BIG_PROMPT);
  });
});

describe('codex recordings', () => {
  it('codex-ok: the agent_message is the answer; the model-metadata error item is only a warning', () => {
    const run = replay(codex, 'codex-ok.jsonl');
    expect(kinds(run.events)).toEqual(['init', 'other', 'text', 'result']);
    expect(run.events[1]).toEqual({ kind: 'other', text: expect.stringMatching(/^warning: Model metadata for `gpt-mock` not found/) });
    expect(run.events[3]).toMatchObject({ kind: 'result', isError: false, subtype: 'turn.completed', inputTokens: 10, outputTokens: 12 });
    expect(run.transcript.errors).toEqual([]);
    expect(run.answer).toBe(COMPLETE);
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('codex-429: turn.failed after the retry limit: transient', () => {
    const run = replay(codex, 'codex-429.jsonl', 'codex-429.err');
    expect(run.transcript.result).toMatchObject({ isError: true, subtype: 'turn.failed', text: 'exceeded retry limit, last status: 429 Too Many Requests' });
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: 'exceeded retry limit, last status: 429 Too Many Requests' });
  });

  it('codex-500: high demand is transient', () => {
    const run = replay(codex, 'codex-500.jsonl');
    expect(run.classify(exited(1))).toEqual({ kind: 'transient', reason: 'We’re currently experiencing high demand, which may cause temporary errors.' });
  });

  it('codex-quota: "Quota exceeded" is a usage limit (no reset given: the fallback wait)', () => {
    const run = replay(codex, 'codex-quota.jsonl');
    expect(run.classify(exited(1))).toEqual({ kind: 'usage_limit', reason: 'Quota exceeded. Check your plan and billing details.', resetAt: NOW + 5 * 60_000 });
  });

  it('codex-usagelimit: the usage limit resets at the next 2:26 AM', () => {
    const run = replay(codex, 'codex-usagelimit.jsonl', 'codex-usagelimit.err');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'usage_limit', reason: expect.stringContaining('You’ve hit your usage limit'), resetAt: nextClockTime(2, 26, NOW) });
  });

  it('codex-text-usagelimit.err: the text-mode message on stderr is read the same way', () => {
    const run = replay(codex, undefined, 'codex-text-usagelimit.err');
    expect(run.classify(exited(1))).toMatchObject({ kind: 'usage_limit', resetAt: nextClockTime(2, 26, NOW) });
  });

  it('maps reconnects to retries and tool items to calls and results', () => {
    expect(parseCodexLine('{"type":"error","message":"Reconnecting... 2/5 (stream disconnected)"}')).toEqual([{ kind: 'retry', attempt: 2, message: 'Reconnecting... 2/5 (stream disconnected)' }]);
    expect(parseCodexLine('{"type":"item.started","item":{"id":"i","type":"command_execution","command":"bash -lc ls","status":"in_progress"}}')).toEqual([{ kind: 'tool_call', name: 'shell', summary: 'bash -lc ls' }]);
    expect(parseCodexLine('{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"ls","aggregated_output":"a\\n","exit_code":2,"status":"failed"}}')).toEqual([{ kind: 'tool_result', text: 'a\n', isError: true }]);
    expect(parseCodexLine('{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"src/a.ts","kind":"update"}],"status":"completed"}}')).toEqual([
      { kind: 'tool_call', name: 'edit', summary: 'update src/a.ts' },
      { kind: 'tool_result', text: '', isError: false },
    ]);
    expect(parseCodexLine('{"type":"item.completed","item":{"id":"i","type":"reasoning","text":"thinking"}}')).toEqual([]);
  });

  it('the last agent_message after the last tool is the answer', () => {
    const lines = [
      '{"type":"item.completed","item":{"id":"1","type":"agent_message","text":"I will check <promise>COMPLETE</promise> later"}}',
      '{"type":"item.started","item":{"id":"2","type":"command_execution","command":"ls","status":"in_progress"}}',
      '{"type":"item.completed","item":{"id":"3","type":"agent_message","text":"All done."}}',
      '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}',
    ];
    const run = feed(codex, lines);
    expect(kinds(run.events)).toEqual(['text', 'tool_call', 'text', 'result']);
    expect(run.answer).toBe('All done.');
    expect(run.classify(exited(0))).toEqual({ kind: 'ok' });
  });

  it('exit 0 without turn.completed is a cut-off run', () => {
    const run = replay(codex);
    expect(run.classify(exited(0))).toMatchObject({ kind: 'transient' });
  });
});
