import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { finalAnswer, newTranscript, record } from '../../../lib/agents/transcript.ts';
import type { AgentEvent } from '../../../lib/agents/types.ts';
import { parseQuestion, QUESTION_MAX_CHARS } from '../../../lib/questions/parse.ts';

const template = (name: string): string => readFileSync(new URL(`../../../templates/${name}`, import.meta.url), 'utf8');

describe('parseQuestion', () => {
  it.each([
    ['a question alone', '<question>Should the API return 404 or 410 for deleted users?</question>', 'Should the API return 404 or 410 for deleted users?'],
    ['after a report', 'I changed nothing.\n\n<question>404 or 410?</question>\n', '404 or 410?'],
    ['trimmed, over several lines', '<question>\n  Which one?\n  - 404\n  - 410\n</question>', 'Which one?\n  - 404\n  - 410'],
    ['the last of several', '<question>first?</question> and then <question>second?</question>', 'second?'],
    ['any case of the tag', '<Question>Upper?</QUESTION>', 'Upper?'],
    ['a real one after the quoted placeholder', 'The prompt says to use <question>…</question>.\n<question>410?</question>', '410?'],
    ['inside a sentence', 'Before I go on: <question>Is the limit per user or per account?</question> Nothing changed.', 'Is the limit per user or per account?'],
    ['with Windows line breaks', 'Report.\r\n<question>Which one?\r\n- 404\r\n- 410</question>\r\n', 'Which one?\n- 404\n- 410'],
    ['after inline code of two backticks', 'Run ``npm test`` first. <question>404 or 410?</question>', '404 or 410?'],
  ])('reads %s', (_name, text, expected) => {
    expect(parseQuestion(text)).toBe(expected);
  });

  it.each([
    ['no tag', 'Did T002. Tests pass.'],
    ['an empty tag', 'Nothing to ask: <question></question>'],
    ['the instruction\'s placeholder', 'I would write <question>…</question> if I had to ask.'],
    ['three dots', '<question>...</question>'],
    ['spaced dots', '<question>. . .</question>'],
    ['inline code of two backticks', 'Use ``<question>404 or 410?</question>`` to ask.'],
    ['a tag that is never closed (an answer cut off)', '<question>Should it'],
    ['a fenced code block', 'Example:\n```\n<question>404 or 410?</question>\n```\nDone.'],
    ['a tilde fence', '~~~md\n<question>404 or 410?</question>\n~~~'],
    ['inline code', 'Use `<question>404 or 410?</question>` to ask.'],
    ['a quoted line', 'The spec says:\n> <question>404 or 410?</question>\nso I went with 410.'],
  ])('ignores %s', (_name, text) => {
    expect(parseQuestion(text)).toBeUndefined();
  });

  // The prompts themselves tell the agent about the tag: an agent that quotes them back asks nothing.
  it.each(['ralph-prompt.md', 'prd-prompt.md'])('ignores %s echoed back, with or without its code marks', (name) => {
    const text = template(name);
    expect(text).toContain('<question>…</question>');
    expect(parseQuestion(text)).toBeUndefined();
    expect(parseQuestion(text.replaceAll('`', ''))).toBeUndefined();
  });

  it('the review and converge prompts do not tell the agent to ask', () => {
    expect(template('review-prompt.md')).not.toContain('<question>');
    expect(template('converge-prompt.md')).not.toContain('<question>');
  });

  it('keeps a question of QUESTION_MAX_CHARS characters whole; a longer one to one character less and an ellipsis', () => {
    // No spaces: a cut one character too far would not be hidden by the trim before the ellipsis.
    const whole = 'q'.repeat(QUESTION_MAX_CHARS);
    expect(parseQuestion(`<question>${whole}</question>`)).toBe(whole);
    expect(parseQuestion(`<question>${whole}r</question>`)).toBe(`${'q'.repeat(QUESTION_MAX_CHARS - 1)}…`);
    expect(parseQuestion(`<question>${'abcdefghij'.repeat(300)}</question>`)).toBe(`${'abcdefghij'.repeat(199)}abcdefghi…`);
    // A cut just after a space: the space goes, the ellipsis follows the word.
    expect(parseQuestion(`<question>${'q'.repeat(QUESTION_MAX_CHARS - 2)} and more</question>`)).toBe(`${'q'.repeat(QUESTION_MAX_CHARS - 2)}…`);
  });

  it('keeps at most QUESTION_MAX_CHARS characters', () => {
    const asked = parseQuestion(`<question>${'why '.repeat(2000)}?</question>`)!;
    expect(asked.length).toBe(QUESTION_MAX_CHARS);
    expect(asked.endsWith('…')).toBe(true);
  });
});

describe('parseQuestion on the final answer only', () => {
  const answerOf = (events: AgentEvent[]): string => {
    const transcript = newTranscript();
    for (const event of events) record(transcript, event);
    return finalAnswer(transcript);
  };

  it('a question in a tool result or in earlier text is not the final answer', () => {
    const text = answerOf([
      { kind: 'text', text: 'Reading the spec: <question>Is this it?</question>' },
      { kind: 'tool_call', name: 'Read', summary: 'spec.md' },
      { kind: 'tool_result', text: 'spec.md: <question>404 or 410?</question>', isError: false },
      { kind: 'other', text: '{"echo": "<question>404 or 410?</question>"}' },
      { kind: 'result', text: 'Did T002.', isError: false },
    ]);
    expect(text).toBe('Did T002.');
    expect(parseQuestion(text)).toBeUndefined();
  });

  it('the final answer\'s question counts, with or without a result event', () => {
    expect(parseQuestion(answerOf([{ kind: 'tool_call', name: 'Read', summary: 'spec.md' }, { kind: 'result', text: 'Stopped. <question>404 or 410?</question>', isError: false }]))).toBe('404 or 410?');
    expect(parseQuestion(answerOf([{ kind: 'tool_call', name: 'Read', summary: 'spec.md' }, { kind: 'text', text: '<question>404 or 410?</question>' }]))).toBe('404 or 410?');
  });
});
