import { fencedLines } from './markdown.ts';

export const COMPLETION_TOKEN = '<promise>COMPLETE</promise>';

const NEGATION = /\b(?:not|never|no|don't|do not|won't|will not|cannot|can't|shouldn't|should not|until|unless|once|when|only|before|after|as soon as|if)\b/i;

/**
 * True when the agent's final answer claims completion: the token stands on its own line or ends the
 * answer, outside quotes and code, and the sentence it ends is not negated or conditional.
 */
export function claimsCompletion(finalAnswer: string): boolean {
  const lines = finalAnswer.replace(/\r/g, '').split('\n');
  const { fenced } = fencedLines(lines);
  const lastContent = lines.map((line, index) => ({ line: line.trim(), index })).filter((entry) => entry.line && !fenced.has(entry.index)).at(-1);
  for (const [index, raw] of lines.entries()) {
    if (fenced.has(index) || !raw.includes(COMPLETION_TOKEN)) continue;
    const line = raw.trim();
    if (line === COMPLETION_TOKEN) return true;
    if (index !== lastContent?.index || !line.endsWith(COMPLETION_TOKEN)) continue;
    const before = line.slice(0, -COMPLETION_TOKEN.length);
    if (opensQuote(before)) continue;
    const sentence = before.split(/[.!?]\s+/).at(-1) ?? '';
    if (!NEGATION.test(sentence)) return true;
  }
  return false;
}

/**
 * Whether the text before the token ends by opening a quote (the token is quoted, not said): a typographic
 * opening quote; a straight " or ` with an even number of its kind before it; a ' not right after a letter
 * (after one it closes a quote or is an apostrophe). `Wrote "hello" <token>` is a claim, `print "<token>` is not.
 */
function opensQuote(before: string): boolean {
  const match = /([`"'“‘])\s*$/.exec(before);
  if (!match) return false;
  const quote = match[1]!;
  const head = before.slice(0, match.index);
  if (quote === '“' || quote === '‘') return true;
  if (quote === "'") return !/[\p{L}\p{N}]$/u.test(head);
  return (head.split(quote).length - 1) % 2 === 0;
}
