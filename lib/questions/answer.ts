// Answering a question, shared by `ralph answer` and the live page of `ralph serve`: find the task's
// waiting question, record the answer, and say what happens next.
import { inspectLock } from '../repo/lock.ts';
import { readQuestions, recordAnswer, type Question } from './store.ts';
import { answerCommand, quoted } from './text.ts';

export interface AnswerResult {
  /** 0 when the answer was recorded, 1 when there is no such question (or the id names several). */
  exitCode: number;
  message: string;
  question?: Question;
}

/** The most of an answer ralph keeps: it goes into a prompt. */
export const ANSWER_MAX_CHARS = 8000;

/** Waiting questions `id` names: by task id, else `SCOPE/TASK` (the feature, prd.json path or epic, then the id). */
export function findWaiting(questions: readonly Question[], id: string): Question[] {
  const waiting = questions.filter((item) => item.answer === undefined);
  const byId = waiting.filter((item) => item.taskId === id);
  if (byId.length > 0 || !id.includes('/')) return byId;
  const cut = id.lastIndexOf('/');
  return waiting.filter((item) => item.scope === id.slice(0, cut) && item.taskId === id.slice(cut + 1));
}

/** Records `text` as the answer to the question of the task `id` in the repository `root`. */
export function answerQuestion(root: string, id: string, text: string, options: { by: string; now: number }): AnswerResult {
  const answer = text.trim();
  const questions = readQuestions(root);
  const found = findWaiting(questions, id);
  if (found.length === 0) {
    const answered = questions.filter((item) => item.taskId === id && item.answer !== undefined).at(-1);
    const others = questions.filter((item) => item.answer === undefined).map((item) => item.taskId);
    const why = answered
      ? `the question of ${id} was already answered (${quoted(answered.answer ?? '', 80)}); it is used by the next iteration on ${id}`
      : `no question of ${id} waits for an answer`;
    return { exitCode: 1, message: `${why}${others.length > 0 ? `; waiting: ${[...new Set(others)].join(', ')}` : ''}` };
  }
  if (found.length > 1) {
    const places = found.map((item) => `${item.source} ${item.scope}`);
    return { exitCode: 1, message: `${id} has a waiting question in ${found.length} places (${places.join('; ')}): name one as SCOPE/${id}, e.g. ralph answer ${found[0]!.scope}/${id} "…"` };
  }
  const question = found[0]!;
  if (!answer) return { exitCode: 1, message: `the answer is empty: ${answerCommand(id)} with the answer in quotes`, question };
  if (answer.length > ANSWER_MAX_CHARS) return { exitCode: 1, message: `the answer is ${answer.length} characters long; at most ${ANSWER_MAX_CHARS} go into a prompt`, question };
  recordAnswer(root, question, answer, new Date(options.now).toISOString(), options.by);
  const lock = inspectLock(root, options.now);
  const next = lock.held
    ? `the run in progress (PID ${lock.info?.pid ?? '?'}) takes ${question.taskId} again when it next picks a task`
    : `the next run takes ${question.taskId} again`;
  return { exitCode: 0, message: `answered ${question.taskId}: ${quoted(question.question)} → ${quoted(answer)}; ${next}, with the question and the answer in its prompt`, question: { ...question, answer } };
}
