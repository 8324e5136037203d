// How beads mode puts things in words: the feature's name from the branch, a bead for the reviewer, and what
// the /sp:next prompt must know about reviews and questions. Pure.
import type { BdIssue } from './bd.ts';
import type { Question } from '../../questions/store.ts';
import { answersBlock, quoted } from '../../questions/text.ts';

/** `001-ralph-automation`, `feat/001-ralph-automation` → `ralph-automation`. */
export function featureNameFromBranch(branch: string): string {
  const last = branch.split('/').at(-1) ?? branch;
  return last.replace(/^\d{8}-\d{6}-/, '').replace(/^\d+-/, '');
}

/** The epic title the ralph.sh workflow gives a feature branch. */
export function epicTitleForBranch(branch: string): string {
  return `Feature: ${featureNameFromBranch(branch)}`;
}

/** A bead as the reviewer sees it: id, title, description, design and acceptance criteria. */
export function beadBrief(issue: BdIssue): string {
  const parts = [`### Bead ${issue.id}: ${issue.title}`, '', issue.description?.trim() || '(no description in beads)'];
  if (issue.design?.trim()) parts.push('', '#### Design', '', issue.design.trim());
  parts.push('', '#### Acceptance criteria', '', issue.acceptance_criteria?.trim() || '(none recorded in beads: judge by the title and description)');
  return parts.join('\n');
}

/** The prompt with a note per bead the reviewer sent back, so whoever picks it up next knows why. */
export function withReviewNotes(prompt: string, notes: ReadonlyArray<{ id: string; title: string; iteration: number; reasons: string }>): string {
  if (notes.length === 0) return prompt;
  const lines = notes.map((note) => `- ${note.id} "${note.title}" (iteration ${note.iteration}): ${note.reasons}`);
  return `${prompt}\n\nralph's independent reviewer rejected the work on these beads and reopened them; whoever works on one next must fix these problems before closing it again:\n${lines.join('\n')}\n`;
}

/**
 * The prompt with what /sp:next must know about questions: the beads waiting for a person's answer (to be
 * left alone: /sp:next picks from bd ready, which still lists them) and the answers to the bead's questions.
 */
export function withQuestionNotes(prompt: string, questions: readonly Question[], taskId: string | undefined): string {
  const waiting = questions.filter((item) => item.answer === undefined);
  const answered = questions.filter((item) => item.answer !== undefined && (taskId === undefined || item.taskId === taskId));
  const parts: string[] = [];
  if (waiting.length > 0) {
    parts.push(`ralph set these beads aside until a person answers the question an earlier iteration asked about each; do not work on them, claim them or close them:\n${waiting.map((item) => `- ${item.taskId} "${item.taskTitle}": ${quoted(item.question)}`).join('\n')}`);
  }
  for (const id of new Set(answered.map((item) => item.taskId))) {
    parts.push(`Bead ${id}: ${answersBlock(answered.filter((item) => item.taskId === id))}`);
  }
  return parts.length === 0 ? prompt : `${prompt}\n\n${parts.join('\n\n')}\n`;
}
