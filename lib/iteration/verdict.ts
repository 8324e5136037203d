// The reviewer's verdict, read from the last line of its final answer only. Pure.

export type Verdict = { kind: 'approve' } | { kind: 'reject'; reasons: string } | { kind: 'none'; why: string };

/** `VERDICT: APPROVE` or `VERDICT: REJECT: reasons`, alone on the line; bold or backticks around it are allowed. */
const VERDICT_LINE = /^(?:\*\*|__|`)?\s*VERDICT\s*:\s*(APPROVE|REJECT)\b(?:\s*:\s*(.*?))?\s*(?:\*\*|__|`)?[.!]?\s*$/i;

/**
 * The verdict of a review: only the last non-blank line of the final answer counts, and only when it is
 * the verdict line itself. A verdict quoted, negated or discussed anywhere else, a last line inside a code
 * block (`VERDICT:` never ends a closing fence) or an APPROVE with anything after it gives `none`.
 */
export function parseVerdict(finalAnswer: string): Verdict {
  const lines = finalAnswer.replace(/\r/g, '').split('\n');
  const last = lines.map((line) => line.trim()).filter(Boolean).at(-1);
  if (last === undefined) return { kind: 'none', why: 'the reviewer gave no answer' };
  const match = VERDICT_LINE.exec(last);
  if (!match) return { kind: 'none', why: `the reviewer's answer does not end with a VERDICT line (last line: ${clip(last)})` };
  const word = match[1]!.toUpperCase();
  const rest = (match[2] ?? '').replace(/(?:\*\*|__|`)+$/, '').trim();
  if (word === 'APPROVE') {
    return rest ? { kind: 'none', why: `an APPROVE verdict with more after it is not a verdict (last line: ${clip(last)})` } : { kind: 'approve' };
  }
  return { kind: 'reject', reasons: rest || 'the reviewer gave no reasons' };
}

function clip(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
