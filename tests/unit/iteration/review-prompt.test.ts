import { describe, expect, it } from 'vitest';
import type { GateResult } from '../../../lib/gates.ts';
import { loadReviewTemplate, renderReviewPrompt } from '../../../lib/iteration/review-prompt.ts';
import { parseReviewSpec, rejectionReason } from '../../../lib/iteration/review.ts';

const gate = (name: string, passed: boolean): GateResult => ({ name, command: `npm run ${name}`, passed, exitCode: passed ? 0 : 1, durationMs: 10, timedOut: false, outputTail: '' }) as GateResult;

describe('renderReviewPrompt', () => {
  const input = {
    iteration: 4,
    evidence: 'completed T003',
    briefs: ['### Task T003\n\nAdd the parser {{diff}}'],
    gates: [gate('test', true), gate('lint', true)],
    diff: { stat: ' src/p.ts | 3 ++-', diff: 'diff --git a/src/p.ts b/src/p.ts\n+const fence = "```";\n', truncated: false },
  };

  it('fills the built-in template with the task, the evidence, the gates and the diff', () => {
    const prompt = renderReviewPrompt(loadReviewTemplate(), input);
    expect(prompt).toContain('# Independent review of ralph iteration 4');
    expect(prompt).toContain("ralph's own checks call it done: completed T003");
    expect(prompt).toContain('- test (`npm run test`): passed');
    expect(prompt).toContain(' src/p.ts | 3 ++-');
    expect(prompt).toContain('VERDICT: APPROVE');
    expect(prompt).toContain('VERDICT: REJECT: <');
    expect(prompt).toMatch(/Do not change anything/);
    // Braces in a value are never expanded again.
    expect(prompt).toContain('Add the parser {{diff}}');
  });

  it('fences the diff with more backticks than it contains', () => {
    const prompt = renderReviewPrompt('{{diff}}', input);
    expect(prompt.startsWith('````diff\n')).toBe(true);
    expect(prompt.trimEnd().endsWith('````')).toBe(true);
  });

  it('says when the diff was cut and when no gates ran', () => {
    const prompt = renderReviewPrompt('{{gates}}\n{{diff}}', { ...input, gates: [], diff: { ...input.diff, truncated: true } });
    expect(prompt).toContain('no quality gates are configured');
    expect(prompt).toContain('the diff is cut here');
  });
});

describe('parseReviewSpec', () => {
  it.each([
    ['codex', { agent: 'codex' }],
    ['claude:claude-opus-4', { agent: 'claude', model: 'claude-opus-4' }],
    ['opencode:openrouter/qwen:free', { agent: 'opencode', model: 'openrouter/qwen:free' }],
    [' gemini ', { agent: 'gemini' }],
    ['none', undefined],
    ['off', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j', (value, expected) => {
    expect(parseReviewSpec(value)).toEqual(expected);
  });
});

describe('rejectionReason', () => {
  const base = { agent: 'codex', taskIds: ['T1'], attempts: 1, exhausted: false, durationMs: 1, costUsd: 0, inputTokens: 0, outputTokens: 0 };
  it('names the reviewer and its reasons, or why the review failed', () => {
    expect(rejectionReason({ ...base, verdict: 'reject', reasons: 'no tests' })).toBe('the reviewer (codex) rejected the work: no tests');
    expect(rejectionReason({ ...base, verdict: 'failed', reasons: 'agent timed out' })).toBe('the review failed: agent timed out');
  });
});
