// The agent's question, read from its final answer the way the completion token is: outside code, never
// from a quoted line, never from the prompt's own instruction echoed back. Pure.
import { fencedLines } from '../markdown.ts';

/** The most of a question ralph keeps; the rest is cut with an ellipsis. */
export const QUESTION_MAX_CHARS = 2000;

const TAG = /<question>([\s\S]*?)<\/question>/gi;
/** Inline code: `…` or ``…`` on one line. */
const CODE_SPAN = /(`+)[^`\n]*?\1/g;
/** What the prompt's instruction puts between the tags: an ellipsis, not a question. */
const PLACEHOLDER = /^[\s.…]*$/;

/**
 * The question the agent asks in its final answer: the text inside the last `<question>…</question>`
 * outside fenced code, inline code and `>` quotes, trimmed; undefined when there is none (or only the
 * instruction's placeholder `<question>…</question>`, as an agent quoting its prompt would write it).
 */
export function parseQuestion(finalAnswer: string): string | undefined {
  const lines = finalAnswer.replace(/\r/g, '').split('\n');
  const { fenced } = fencedLines(lines);
  const text = lines
    .map((line, index) => (fenced.has(index) || /^\s*>/.test(line) ? '' : line.replace(CODE_SPAN, '')))
    .join('\n');
  let last: string | undefined;
  for (const match of text.matchAll(TAG)) {
    const inner = match[1]!.trim();
    if (!PLACEHOLDER.test(inner)) last = inner;
  }
  if (last === undefined) return undefined;
  return last.length > QUESTION_MAX_CHARS ? `${last.slice(0, QUESTION_MAX_CHARS - 1).trimEnd()}…` : last;
}
