// Questions for people in beads itself. beads 1.2+ keeps them as issues labelled `human` (`bd human list`
// shows them, `bd human respond ID --response …` answers one: a comment `Response: …` and a close with the
// reason `Responded`). An agent's <question> in beads mode goes there as well as to ralph's own store
// (lib/questions/), and an answer given either way reaches the next prompt:
// - answered in beads: ralph reads the answer from the question's comments into its store;
// - answered with `ralph answer`: ralph answers the question in beads too, so it leaves `bd human list`.
// Such issues are questions, never work: the source leaves every `human`-labelled issue out of its tasks.
//
// bd 1.2.2's `human respond` fails (`storage is nil`, recorded): there ralph answers as the command is
// documented to, a comment and a close with `Responded`.
import { errorMessage } from '../../errors.ts';
import type { Bd, BdIssue } from './bd.ts';
import { questionsOf, readQuestions, recordAnswer } from '../../questions/store.ts';
import { quoted } from '../../questions/text.ts';

export const HUMAN_LABEL = 'human';

/** Whether beads keeps `issue` as a question for a person (never a task). */
export function isHumanQuestion(issue: Pick<BdIssue, 'labels'>): boolean {
  return issue.labels?.includes(HUMAN_LABEL) ?? false;
}

/** The title of the question bead of `taskId`: what `bd human list` shows, and how ralph finds it again. */
export function questionTitle(taskId: string, question: string): string {
  const title = `Question on ${taskId}: ${question.replace(/\s+/g, ' ').trim()}`;
  return title.length > 200 ? `${title.slice(0, 199)}…` : title;
}

/** The answer a closed question bead holds: its last comment (`Response: ` dropped), else why it was closed. */
export function answerText(issue: Pick<BdIssue, 'id'> & { close_reason?: string }, comments: ReadonlyArray<{ text?: string }>): string {
  const last = [...comments].reverse().find((comment) => typeof comment.text === 'string' && comment.text.trim());
  if (last?.text) return last.text.trim().replace(/^Response:\s*/, '');
  return `(closed in beads without an answer${issue.close_reason ? `: ${issue.close_reason}` : ''}; go on with your best judgement)`;
}

/** Files `question`, asked by the agent working on `task`, as a question bead; what to tell the user. */
export async function fileQuestion(bd: Bd, task: { id: string; title: string }, question: string, iteration: number): Promise<string> {
  const filed = await createQuestion(bd, task, question, iteration);
  if (filed.error) return `could not file the question of ${task.id} in beads (bd human): ${filed.error}; it waits in ralph answer only`;
  return `${task.id}: the question is in beads too, as ${filed.id} (bd human list; answer with bd human respond ${filed.id} --response "…" or ralph answer ${task.id} "…")`;
}

async function createQuestion(bd: Bd, task: { id: string; title: string }, question: string, iteration: number): Promise<{ id?: string; error?: string }> {
  const description = `The agent ralph runs on bead ${task.id} "${task.title}" stopped in iteration ${iteration} to ask:\n\n${question}\n\nralph sets ${task.id} aside until the answer comes. Answer here (bd human respond <this id> --response "…") or with: ralph answer ${task.id} "…"`;
  const created = await bd.command(['create', questionTitle(task.id, question), '-l', HUMAN_LABEL, '-d', description]);
  if (!created.ok) return { error: created.error };
  try {
    const parsed = JSON.parse(created.stdout) as { id?: unknown; data?: { id?: unknown } };
    const id = parsed.id ?? parsed.data?.id;
    return typeof id === 'string' ? { id } : { error: 'bd create printed no id' };
  } catch {
    return { error: `bd create printed invalid JSON: ${created.stdout.trim().slice(0, 80)}` };
  }
}

/** Answers the question bead `id` with `answer`: `bd human respond`, else a comment and a close (bd 1.2.2). */
async function respond(bd: Bd, id: string, answer: string): Promise<string | undefined> {
  const responded = await bd.command(['human', 'respond', id, '--response', answer]);
  if (responded.ok) return undefined;
  const comment = await bd.command(['comments', 'add', id, `Response: ${answer}`]);
  if (!comment.ok) return comment.error;
  const closed = await bd.command(['close', id, '--reason', 'Responded']);
  return closed.ok ? undefined : closed.error;
}

/**
 * Brings ralph's store and beads' question beads together for the questions of `source`/`scope` (see the
 * top of this file); returns what to tell the user. Reads bd only while a question of the run is open.
 */
export async function syncQuestions(bd: Bd, root: string, key: { source: string; scope: string }, at: string): Promise<string[]> {
  const open = questionsOf(readQuestions(root), key.source, key.scope);
  if (open.length === 0) return [];
  const beads = await bd.query(['list', '--label', HUMAN_LABEL, '--all', '--limit', '0']);
  const byTitle = new Map(beads.map((issue) => [issue.title, issue]));
  const messages: string[] = [];
  for (const question of open) {
    const bead = byTitle.get(questionTitle(question.taskId, question.question));
    if (!bead) continue;
    try {
      if (question.answer === undefined && bead.status === 'closed') {
        const listed = await bd.command(['comments', bead.id]);
        const comments = listed.ok ? (JSON.parse(listed.stdout) as Array<{ text?: string }> | null) ?? [] : [];
        const answer = answerText(bead as BdIssue & { close_reason?: string }, comments);
        recordAnswer(root, question, answer, at, `bd human respond (${bead.id})`);
        messages.push(`${question.taskId}: answered in beads (${bead.id}): ${quoted(question.question, 80)} → ${quoted(answer, 80)}`);
      } else if (question.answer !== undefined && bead.status !== 'closed') {
        const failed = await respond(bd, bead.id, question.answer);
        if (failed) messages.push(`could not answer the question bead ${bead.id} in beads (answered with ralph answer): ${failed}`);
      }
    } catch (error) {
      messages.push(`could not read the answer of the question bead ${bead.id}: ${errorMessage(error)}`);
    }
  }
  return messages;
}

