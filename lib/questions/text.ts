// How questions and answers are said: in a prompt, in the line that ends a run, at the start of a run. Pure.
import { oneLine } from '../agents/common.ts';
import type { Question } from './store.ts';

/** How a task's id is written in `ralph answer`: quoted only when the shell needs it. */
function shellWord(text: string): string {
  return /^[\w.:@/+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `ralph answer T003 "…"`: the command that answers the task's question. */
export function answerCommand(taskId: string): string {
  return `ralph answer ${shellWord(taskId)} "…"`;
}

/** A question on one line, for messages: `"Should … 410?"`. */
export function quoted(question: string, max = 160): string {
  return `"${oneLine(question, max)}"`;
}

/** Continuation lines indented under their list item. */
const indented = (text: string): string => text.trim().replace(/\n/g, '\n  ');

/**
 * The block the next prompt for a task carries once its question is answered: the question and the
 * answer, word for word, and what to do with them.
 */
export function answersBlock(questions: readonly Question[]): string {
  if (questions.length === 0) return '';
  const one = questions.length === 1;
  const when = one ? `in iteration ${questions[0]!.iteration}` : `in iterations ${questions.map((item) => item.iteration).join(', ')}`;
  const lines = [
    `Your question${one ? '' : 's'} and ${one ? 'its answer' : 'their answers'}: ${when} the agent working on this task stopped to ask a person, and ralph set the task aside until the answer came. Go on with ${one ? 'this answer' : 'these answers'}; do not ask the same again.`,
  ];
  for (const item of questions) lines.push(`- Question: ${indented(item.question)}`, `- Answer: ${indented(item.answer ?? '')}`);
  return lines.join('\n');
}

/** Why the run ends when only tasks waiting for answers are left: each task and its question, and how to answer. */
export function waitingMessage(questions: readonly Question[]): string {
  const named = questions.map((item) => `${item.taskId} ${quoted(item.question)}`);
  const how = questions.length === 1 ? `answer with: ${answerCommand(questions[0]!.taskId)}` : `answer each with: ralph answer TASK "…" ('ralph answer' lists them)`;
  return `waiting for answers: ${named.join(', ')}; ${how}`;
}

/** What a run says as it starts about the questions of its tasks: set aside, or taken again with the answer. */
export function startNotes(questions: readonly Question[]): Array<{ warning: boolean; message: string }> {
  return questions.map((item) =>
    item.answer === undefined
      ? { warning: true, message: `${item.taskId} waits for an answer to the question of iteration ${item.iteration}, ${quoted(item.question)}: set aside until ${answerCommand(item.taskId)}` }
      : { warning: false, message: `${item.taskId}: the question of iteration ${item.iteration} was answered; its next prompt carries the answer` },
  );
}

/**
 * `ralph status` and `ralph answer`: the questions waiting for an answer (each with how to answer it), then
 * the answered ones not yet worked on. Where they are in several sources or scopes, each says which.
 */
export function questionLines(questions: readonly Question[], ago: (iso: string) => string): string[] {
  const places = new Set(questions.map((item) => `${item.source} ${item.scope}`));
  const where = (item: Question): string => (places.size > 1 ? `, ${item.source} ${item.scope}` : '');
  const waiting = questions.filter((item) => item.answer === undefined);
  const answered = questions.filter((item) => item.answer !== undefined);
  const lines: string[] = [];
  if (waiting.length > 0) {
    lines.push(`waiting for answers (${waiting.length === 1 ? answerCommand(waiting[0]!.taskId) : 'ralph answer TASK "…"'}):`);
    for (const item of waiting) lines.push(`  ${item.taskId} (iteration ${item.iteration}, ${ago(item.askedAt)}${where(item)}): ${oneLine(item.question, 300)}`);
  }
  if (answered.length > 0) {
    lines.push('answered, for the next iteration on the task:');
    for (const item of answered) lines.push(`  ${item.taskId}${where(item) ? ` (${where(item).slice(2)})` : ''}: ${quoted(item.question)} → ${quoted(item.answer ?? '')}`);
  }
  return lines;
}
