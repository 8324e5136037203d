// The agent's learnings, read from its final answer for the progress.txt entry. Pure.

const LEARNING_WORD = String.raw`\b(?:learnings?|learned|lessons?)\b`;
const LEARNING_HEADING = new RegExp(String.raw`^(#{1,6})\s+.*${LEARNING_WORD}`, 'i');
/** `Learnings:`, `**Key learnings:**`, `- **What I learned**: text`, `**Learnings**` alone on a line. */
const LEARNING_LABEL = new RegExp(
  String.raw`^\s*(?:[-*]\s+)?(?:\*\*|__)?[^:*_\n]{0,40}${LEARNING_WORD}[^:*_\n]{0,20}(?:(?:\*\*|__)?\s*:\s*(?:\*\*|__)?|(?:\*\*|__)\s*$)\s*(.*)$`,
  'i',
);
/** A bold label that starts another part of the answer: `**Checks:**`, `- **Next**: …`, `**Summary**` alone. */
const LABEL_LINE = /^\s*(?:[-*]\s+)?(?:\*\*|__)[^*_\n]{1,60}(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|(?:\*\*|__)\s*$)/;
const MAX_LEARNING_LINES = 40;
const TOKEN = /<promise>\s*COMPLETE\s*<\/promise>/gi;
const TOKEN_LINE = /^\s*<promise>\s*COMPLETE\s*<\/promise>\s*$/i;

/**
 * The agent's learnings: the part of its final answer under a `Learnings` / `Key learnings` / `What I
 * learned` / `Lessons learned` heading or label, up to the next heading or bold label.
 */
export function extractLearnings(agentText: string): string | undefined {
  const lines = agentText.replace(/\r/g, '').split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const heading = LEARNING_HEADING.exec(line);
    const label = heading ? undefined : LEARNING_LABEL.exec(line);
    if (!heading && !label) continue;
    const level = heading ? heading[1]!.length : 7;
    const body: string[] = [];
    const inline = label?.[1]?.trim();
    if (inline) body.push(inline);
    let fence = false;
    for (let next = index + 1; next < lines.length && body.length < MAX_LEARNING_LINES; next += 1) {
      const text = lines[next]!;
      if (/^\s*(```|~~~)/.test(text)) fence = !fence;
      else if (!fence) {
        const nextHeading = /^(#{1,6})\s/.exec(text);
        if (nextHeading && nextHeading[1]!.length <= level) break;
        if (!heading && LABEL_LINE.test(text)) break;
        if (TOKEN_LINE.test(text)) break;
        // A label's section is its list; a plain paragraph after a blank line is the answer going on.
        if (!heading && !text.trim() && !/^\s*(?:[-*+]|\d+[.)])\s|^\s{2,}\S/.test(lines.slice(next + 1).find((rest) => rest.trim()) ?? '')) break;
      }
      body.push(text);
    }
    const trimmed = body.join('\n').replace(TOKEN, '[completion token]').trim();
    if (trimmed) return trimmed;
  }
  return undefined;
}
