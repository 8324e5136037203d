// The reviewer's prompt: templates/review-prompt.md filled with the task, ralph's evidence, the gate
// results and the iteration's (bounded) diff. Pure, apart from reading the template.
import { readFileSync } from 'node:fs';
import type { GateResult } from '../gates.ts';
import type { ReviewDiff } from './review-diff.ts';
import { packageFile } from '../package-files.ts';

export const REVIEW_TEMPLATE = packageFile('templates/review-prompt.md');

export interface ReviewPromptInput {
  iteration: number;
  /** Why ralph calls the iteration done, e.g. `completed T003` or `the agent completed the task; 3 gates passed`. */
  evidence: string;
  /** One Markdown brief per task under review (title, description, acceptance criteria). */
  briefs: string[];
  gates: readonly GateResult[];
  diff: ReviewDiff;
}

/** A code fence longer than any run of backticks in `text`, so the diff cannot close it early. */
function fenceFor(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

function gateLines(gates: readonly GateResult[]): string {
  if (gates.length === 0) return '(none: no quality gates are configured for this run, so check the work yourself)';
  return gates.map((gate) => `- ${gate.name} (\`${gate.command}\`): ${gate.passed ? 'passed' : `FAILED (${gate.timedOut ? 'timed out' : `exit ${gate.exitCode}`})`}`).join('\n');
}

/** Fills `{{name}}` in one pass, so values containing braces are never expanded again. */
export function renderReviewPrompt(template: string, input: ReviewPromptInput): string {
  const fence = fenceFor(input.diff.diff);
  const cut = input.diff.truncated ? '\n\n[the diff is cut here to keep this prompt bounded; read the remaining files named above in the repository]' : '';
  const values: Record<string, string> = {
    iteration: String(input.iteration),
    evidence: input.evidence,
    tasks: input.briefs.join('\n\n'),
    gates: gateLines(input.gates),
    stat: `${fence}\n${input.diff.stat}\n${fence}`,
    diff: input.diff.diff.trim() ? `${fence}diff\n${input.diff.diff.trimEnd()}\n${fence}${cut}` : '(no textual diff: the changes above are all there is)',
  };
  return template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => values[name] ?? whole);
}

export function loadReviewTemplate(file = REVIEW_TEMPLATE): string {
  return readFileSync(file, 'utf8');
}
