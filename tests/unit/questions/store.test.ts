import { appendFileSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerQuestion, findWaiting } from '../../../lib/questions/answer.ts';
import { answeredFor, foldQuestions, QUESTIONS_FILE, readQuestions, recordAnswer, recordAsked, recordClosed, waitingIds, type Question } from '../../../lib/questions/store.ts';
import { answersBlock, waitingMessage } from '../../../lib/questions/text.ts';
import { tempDir } from '../../support/temp.ts';

const T0 = Date.parse('2026-11-22T02:00:00Z');
const key = (taskId: string, scope = '001-demo', source = 'speckit') => ({ source, scope, taskId });
const ask = (root: string, taskId: string, question: string, iteration = 1, scope = '001-demo'): void =>
  recordAsked(root, { ...key(taskId, scope), taskTitle: `title ${taskId}`, question, iteration, askedAt: new Date(T0).toISOString(), sessionId: 's1' });

describe('the question store (.ralph/questions.jsonl)', () => {
  it('a task waits from its question until its answer; the answer stays until the task is done', () => {
    const root = tempDir('ralph-questions-');
    expect(readQuestions(root)).toEqual([]);
    ask(root, 'T002', '404 or 410?');
    expect(waitingIds(root, 'speckit', '001-demo')).toEqual(new Set(['T002']));
    // Another feature's T002, another source's: other tasks.
    expect(waitingIds(root, 'speckit', '002-other')).toEqual(new Set());
    expect(waitingIds(root, 'prd', '001-demo')).toEqual(new Set());
    recordAnswer(root, key('T002'), '410', new Date(T0 + 1000).toISOString(), 'ralph answer (PID 1)');
    expect(waitingIds(root, 'speckit', '001-demo')).toEqual(new Set());
    expect(answeredFor(root, key('T002'))).toMatchObject([{ taskId: 'T002', question: '404 or 410?', answer: '410', answeredBy: 'ralph answer (PID 1)', iteration: 1 }]);
    recordClosed(root, key('T002'), new Date(T0 + 2000).toISOString());
    expect(readQuestions(root)).toEqual([]);
    // Private: it holds the agents' words.
    expect(statSync(path.join(root, QUESTIONS_FILE)).mode & 0o777).toBe(0o600);
  });

  it('an answer goes to the oldest unanswered question of the task; a torn line is skipped', () => {
    const asked = (taskId: string, question: string, iteration: number) => JSON.stringify({ kind: 'asked', ...key(taskId), taskTitle: taskId, question, iteration, askedAt: 'x' });
    const text = [
      asked('T002', 'first?', 1),
      JSON.stringify({ kind: 'answered', ...key('T002'), answer: 'yes', at: 'y' }),
      asked('T002', 'second?', 3),
      asked('T005', 'other?', 4),
      '{"kind":"answered","source":"speckit","sco', // a write cut short
      JSON.stringify({ kind: 'answered', ...key('T009'), answer: 'nobody asked', at: 'z' }),
    ].join('\n');
    const open = foldQuestions(text);
    expect(open.map((item: Question) => [item.taskId, item.question, item.answer])).toEqual([
      ['T002', 'first?', 'yes'],
      ['T002', 'second?', undefined],
      ['T005', 'other?', undefined],
    ]);
  });

  it('two writers append: neither loses the other\'s line', () => {
    const root = tempDir('ralph-questions-');
    ask(root, 'T002', '404 or 410?');
    // `ralph answer` in another terminal appends its line while the run appends a question of its own.
    const file = path.join(root, QUESTIONS_FILE);
    appendFileSync(file, `${JSON.stringify({ kind: 'answered', ...key('T002'), answer: '410', at: 'x' })}\n`);
    ask(root, 'T004', 'Which port?', 2);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(readQuestions(root).map((item) => [item.taskId, item.answer])).toEqual([
      ['T002', '410'],
      ['T004', undefined],
    ]);
  });
});

describe('answerQuestion', () => {
  it('records the answer of a waiting question and says what happens next', () => {
    const root = tempDir('ralph-questions-');
    ask(root, 'T002', 'Should the API return 404 or 410 for deleted users?');
    const result = answerQuestion(root, 'T002', '  410  ', { by: 'test', now: T0 });
    expect(result.exitCode).toBe(0);
    expect(result.message).toBe('answered T002: "Should the API return 404 or 410 for deleted users?" → "410"; the next run takes T002 again, with the question and the answer in its prompt');
    expect(answeredFor(root, key('T002'))[0]!.answer).toBe('410');
  });

  it.each([
    ['an unknown task', 'T999', '410', /^no question of T999 waits for an answer; waiting: T002$/],
    ['an empty answer', 'T002', '  ', /^the answer is empty: ralph answer T002 "…"/],
  ])('refuses %s (exit 1)', (_name, id, text, message) => {
    const root = tempDir('ralph-questions-');
    ask(root, 'T002', '404 or 410?');
    const result = answerQuestion(root, id, text, { by: 'test', now: T0 });
    expect(result).toMatchObject({ exitCode: 1 });
    expect(result.message).toMatch(message);
    expect(answeredFor(root, key('T002'))).toEqual([]);
  });

  it('refuses a question already answered, saying so', () => {
    const root = tempDir('ralph-questions-');
    ask(root, 'T002', '404 or 410?');
    expect(answerQuestion(root, 'T002', '410', { by: 'test', now: T0 }).exitCode).toBe(0);
    const again = answerQuestion(root, 'T002', '404', { by: 'test', now: T0 });
    expect(again.exitCode).toBe(1);
    expect(again.message).toMatch(/already answered \("410"\)/);
  });

  it('an id waiting in two features is named with its scope', () => {
    const root = tempDir('ralph-questions-');
    ask(root, 'T002', 'a?', 1, '001-a');
    ask(root, 'T002', 'b?', 1, '002-b');
    const ambiguous = answerQuestion(root, 'T002', '410', { by: 'test', now: T0 });
    expect(ambiguous.exitCode).toBe(1);
    expect(ambiguous.message).toMatch(/T002 has a waiting question in 2 places .*ralph answer 001-a\/T002/);
    expect(findWaiting(readQuestions(root), '002-b/T002').map((item) => item.question)).toEqual(['b?']);
    expect(answerQuestion(root, '002-b/T002', '410', { by: 'test', now: T0 }).exitCode).toBe(0);
    expect(waitingIds(root, 'speckit', '001-a')).toEqual(new Set(['T002']));
    expect(waitingIds(root, 'speckit', '002-b')).toEqual(new Set());
  });
});

describe('how questions are said', () => {
  const question = (taskId: string, text: string, answer?: string): Question => ({ ...key(taskId), taskTitle: taskId, question: text, iteration: 3, askedAt: 'x', ...(answer ? { answer } : {}) });

  it('the end of a run names each task, its question and how to answer', () => {
    expect(waitingMessage([question('T003', 'Should the API return 404 or 410 for deleted users?')])).toBe('waiting for answers: T003 "Should the API return 404 or 410 for deleted users?"; answer with: ralph answer T003 "…"');
    expect(waitingMessage([question('T003', 'a?'), question('T005', 'b\nc?')])).toBe('waiting for answers: T003 "a?", T005 "b c?"; answer each with: ralph answer TASK "…" (\'ralph answer\' lists them)');
  });

  it('the prompt block carries the question and the answer word for word', () => {
    const block = answersBlock([question('T003', '404 or 410?', '410, and log it')]);
    expect(block).toContain('in iteration 3 the agent working on this task stopped to ask a person');
    expect(block).toContain('- Question: 404 or 410?\n- Answer: 410, and log it');
  });
});
