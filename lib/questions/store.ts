// Where the agents' questions and the people's answers live: `.ralph/questions.jsonl`, one line per
// thing that happened (asked, answered, closed), appended and never rewritten, so `ralph answer` in one
// terminal and the run in another never lose each other's writes. The state is the fold of the lines.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PRIVATE_DIR, PRIVATE_FILE } from '../repo/private-files.ts';

export const QUESTIONS_FILE = path.join('.ralph', 'questions.jsonl');

/** Which task a question is about: the source, what the run works on there (feature, prd.json, epic), the task. */
export interface QuestionKey {
  source: string;
  scope: string;
  taskId: string;
}

/** One question of a task, with its answer once a person gave one. */
export interface Question extends QuestionKey {
  taskTitle: string;
  question: string;
  /** The iteration that asked, and when. */
  iteration: number;
  askedAt: string;
  sessionId?: string;
  answer?: string;
  answeredAt?: string;
  /** Who answered: `ralph answer (PID 123)`, `ralph serve (PID 456)`. */
  answeredBy?: string;
}

type Line =
  | ({ kind: 'asked' } & Omit<Question, 'answer' | 'answeredAt' | 'answeredBy'>)
  | ({ kind: 'answered'; answer: string; at: string; by?: string } & QuestionKey)
  | ({ kind: 'closed'; at: string } & QuestionKey);

const sameTask = (a: QuestionKey, b: QuestionKey): boolean => a.source === b.source && a.scope === b.scope && a.taskId === b.taskId;

/**
 * The questions still open (their task not finished since), oldest first, from the file's lines. An answer
 * goes to the task's oldest unanswered question; a line that cannot be read (a torn last write) is skipped.
 */
export function foldQuestions(text: string): Question[] {
  let open: Question[] = [];
  for (const raw of text.split('\n')) {
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      continue;
    }
    if (typeof line?.taskId !== 'string' || typeof line.source !== 'string' || typeof line.scope !== 'string') continue;
    if (line.kind === 'asked' && typeof line.question === 'string') {
      const { kind: _kind, ...question } = line;
      open.push(question);
    } else if (line.kind === 'answered' && typeof line.answer === 'string') {
      const waiting = open.find((item) => sameTask(item, line) && item.answer === undefined);
      if (waiting) Object.assign(waiting, { answer: line.answer, answeredAt: line.at, ...(line.by ? { answeredBy: line.by } : {}) });
    } else if (line.kind === 'closed') {
      open = open.filter((item) => !sameTask(item, line));
    }
  }
  return open;
}

/** The open questions of `root` (none when the file, or its folder, does not exist). */
export function readQuestions(root: string): Question[] {
  let text: string;
  try {
    text = readFileSync(path.join(root, QUESTIONS_FILE), 'utf8');
  } catch (error) {
    // No file, or no folder .ralph/ to hold one (a file of that name: the preflight says so): no question.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
  return foldQuestions(text);
}

function append(root: string, line: Line): void {
  const file = path.join(root, QUESTIONS_FILE);
  mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR });
  // One write with O_APPEND: two writers' lines never mix, and neither overwrites the other's.
  appendFileSync(file, `${JSON.stringify(line)}\n`, { mode: PRIVATE_FILE });
}

/** The agent of `iteration` asked `question` about the task: it waits for an answer from now on. */
export function recordAsked(root: string, question: Omit<Question, 'answer' | 'answeredAt' | 'answeredBy'>): void {
  append(root, { kind: 'asked', ...question });
}

/** A person answered the task's waiting question. */
export function recordAnswer(root: string, key: QuestionKey, answer: string, at: string, by?: string): void {
  append(root, { kind: 'answered', source: key.source, scope: key.scope, taskId: key.taskId, answer, at, ...(by ? { by } : {}) });
}

/** The task is finished: its questions and answers are done with. */
export function recordClosed(root: string, key: QuestionKey, at: string): void {
  append(root, { kind: 'closed', source: key.source, scope: key.scope, taskId: key.taskId, at });
}

/** Questions of one source and scope. */
export function questionsOf(questions: readonly Question[], source: string, scope: string): Question[] {
  return questions.filter((item) => item.source === source && item.scope === scope);
}

/** Ids of the tasks of one source and scope whose question waits for an answer: set aside until then. */
export function waitingIds(root: string, source: string, scope: string): Set<string> {
  return new Set(questionsOf(readQuestions(root), source, scope).filter((item) => item.answer === undefined).map((item) => item.taskId));
}

/** The answered questions of one task, oldest first: what its next prompt carries. */
export function answeredFor(root: string, key: QuestionKey): Question[] {
  return readQuestions(root).filter((item) => sameTask(item, key) && item.answer !== undefined);
}
