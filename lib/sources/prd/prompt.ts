// The PRD prompt: templates/prd-prompt.md filled with the task, the bounded progress history, the last
// commits and the gates ralph will run.
import { readFileSync } from 'node:fs';
import type { GateCommand } from '../../gates.ts';
import type { PrdItem } from './schema.ts';
import { packageFile } from '../../package-files.ts';

export const PRD_TEMPLATE = packageFile('templates/prd-prompt.md');

/** Replaces `{{name}}` in one pass, so values that contain braces are never expanded again. */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => values[name] ?? whole);
}

export interface PrdPromptInput {
  template: string;
  iteration: number;
  maxIterations: number;
  prdPath: string;
  progressPath: string;
  item: Pick<PrdItem, 'id' | 'title' | 'description' | 'priority' | 'estimatedComplexity' | 'acceptanceCriteria' | 'lastError' | 'attempts'>;
  patterns: string;
  progress: string;
  commits: string[];
  gates: readonly GateCommand[];
  /** The rulebook task folder the item came from (`sourcePath` written by ralph init). */
  sourcePath?: string;
  /** --prompt text, added as extra instructions. */
  extra?: string;
  /** This task's answered questions, as lib/questions/text.ts words them. */
  answers?: string;
}

/** The prompt for one iteration (pure). */
export function buildPrdPrompt(input: PrdPromptInput): string {
  const { item } = input;
  const criteria = item.acceptanceCriteria.length > 0 ? item.acceptanceCriteria.map((line) => `- [ ] ${line}`).join('\n') : '- (none listed: the title and description are the whole requirement)';
  const source = input.sourcePath
    ? `\n\nThe rulebook task folder \`${input.sourcePath}/\` (proposal.md, tasks.md, specs/) has the full context; tick the tasks.md items you finish.`
    : '';
  const previous = `${item.lastError ? `\n\nAn earlier attempt failed (${item.attempts} so far): ${item.lastError}` : ''}${input.answers ? `\n\n${input.answers}` : ''}`;
  const gates = input.gates.length > 0 ? input.gates.map((gate) => `   - ${gate.name}: \`${gate.command}\``).join('\n') : '   - (none configured: run the checks this project uses)';
  const rendered = renderTemplate(input.template, {
    iteration: String(input.iteration),
    maxIterations: String(input.maxIterations),
    prdPath: input.prdPath,
    progressPath: input.progressPath,
    taskId: item.id,
    taskTitle: item.title,
    taskPriority: item.priority === undefined ? 'unset' : String(item.priority),
    taskComplexity: item.estimatedComplexity ?? 'unknown',
    taskDescription: `${item.description?.trim() || '(no description)'}${source}${previous}`,
    acceptanceCriteria: criteria,
    gates,
    patterns: input.patterns.trim() || '(none recorded yet)',
    progress: input.progress.trim() || '(no progress recorded yet)',
    commits: input.commits.length > 0 ? input.commits.map((line) => `- ${line}`).join('\n') : '(no commits yet)',
  });
  return input.extra?.trim() ? `${rendered.trimEnd()}\n\n## Additional instructions\n\n${input.extra.trim()}\n` : rendered;
}

/** Reads the template file. */
export function loadPrdTemplate(file = PRD_TEMPLATE): string {
  return readFileSync(file, 'utf8');
}
