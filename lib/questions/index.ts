// Questions of a run's tasks, as the session and the iterations see them: what an iteration's question or
// finished task changes in the store, what the run says at its start and end.
import type { IterationRecord, QuestionSummary } from '../events.ts';
import type { IterationInfo, Snapshot, TaskSource } from '../sources/types.ts';
import { questionsOf, readQuestions, recordAsked, recordClosed, type Question } from './store.ts';
import { startNotes, waitingMessage } from './text.ts';

type Source = Pick<TaskSource, 'name' | 'scope'>;

/** The open questions of the run's own tasks. */
export function sourceQuestions(root: string, source: Source): Question[] {
  return questionsOf(readQuestions(root), source.name, source.scope());
}

/**
 * After an iteration: a question is stored (its task waits from the next snapshot on); a task it finished
 * has its questions and answers done with. An agent that asked but also changed files is said to have.
 */
export function noteQuestions(root: string, source: Source, record: IterationRecord, info: IterationInfo, at: string, warn: (message: string) => void): void {
  const scope = source.scope();
  if (record.outcome === 'question' && record.question !== undefined) {
    recordAsked(root, { source: source.name, scope, taskId: record.taskId, taskTitle: record.taskTitle, question: record.question, iteration: record.iteration, askedAt: at, sessionId: info.sessionId });
    if (record.changed) warn(`iteration ${record.iteration}: ${record.taskId} asked a question but also changed files: they stay in the work tree as they are, not committed by ralph`);
  }
  if (record.tasksDone.length === 0) return;
  const open = new Set(sourceQuestions(root, source).map((item) => item.taskId));
  for (const taskId of new Set(record.tasksDone)) if (open.has(taskId)) recordClosed(root, { source: source.name, scope, taskId }, at);
}

/**
 * As a run starts: questions of tasks finished meanwhile (ticked by hand, closed in bd) are done with; the
 * others are said: set aside until answered, or taken again with the answer. The source is read only when
 * a question is open.
 */
export async function questionsAtStart(root: string, source: Source & Pick<TaskSource, 'snapshot'>, at: string): Promise<Array<{ warning: boolean; message: string }>> {
  const open = sourceQuestions(root, source);
  if (open.length === 0) return [];
  const done = new Set((await source.snapshot()).done.map((task) => task.id));
  const finished = new Set(open.filter((item) => done.has(item.taskId)).map((item) => item.taskId));
  for (const taskId of finished) recordClosed(root, { source: source.name, scope: source.scope(), taskId }, at);
  return startNotes(open.filter((item) => !finished.has(item.taskId)));
}

/**
 * Why a run ends when nothing can start and tasks wait for answers: each such task with its question and
 * how to answer; then, when other tasks are left too (waiting on those, or set aside), why they cannot start.
 */
export function describeWaiting(root: string, source: Source & Pick<TaskSource, 'explainStuck'>, snapshot: Snapshot): string {
  const waiting = new Set((snapshot.waiting ?? []).map((task) => task.id));
  const message = waitingMessage(sourceQuestions(root, source).filter((item) => item.answer === undefined && waiting.has(item.taskId)));
  const others = snapshot.remaining.filter((task) => !waiting.has(task.id)).length + (snapshot.skipped?.length ?? 0);
  return others > 0 ? `${message}\n${source.explainStuck(snapshot)}` : message;
}

/** The questions a run's summary lists: waiting, or answered and not yet worked on (none when they cannot be read). */
export function questionSummaries(root: string, source: Source): QuestionSummary[] {
  let open: Question[];
  try {
    open = sourceQuestions(root, source);
  } catch {
    return [];
  }
  return open.map((item) => ({
    taskId: item.taskId,
    taskTitle: item.taskTitle,
    question: item.question,
    iteration: item.iteration,
    askedAt: item.askedAt,
    ...(item.answer === undefined ? {} : { answer: item.answer, answeredAt: item.answeredAt }),
  }));
}
