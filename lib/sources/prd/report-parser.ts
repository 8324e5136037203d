// Reads what the agent says it did. The PRD prompt asks for a closing `## Ralph Report` block
// (report-block.ts); agents that ignore it still get a best-effort reading of their prose
// (report-prose.ts). Pure functions only.
import { claimsCompletion } from '../../completion.ts';
import { clip, findReportStart, normalizeStatus, readFields, readQuality, readReportFields, unique, type Field, type FieldText, type ReportedCheck, type ReportedStatus } from './report-block.ts';
import { changesFromProse, checksFromProse, commitsFromProse, contextLimitLine, lastParagraph, learningsFromProse, proseLines, statusFromWording } from './report-prose.ts';

export { normalizeCheckName, normalizeStatus, type ReportedCheck, type ReportedStatus } from './report-block.ts';

export interface AgentReport {
  status?: ReportedStatus;
  /** Where the status came from: the report block, the completion promise, or the wording of the text. */
  statusSource?: 'report' | 'promise' | 'wording';
  /** True when a `Ralph Report` block was found. */
  hasReport: boolean;
  summary?: string;
  changes: string[];
  learnings: string[];
  quality: ReportedCheck[];
  commitMessages: string[];
  /** Why the output looks cut off or unfinished; empty when it does not. */
  contextLoss: string[];
}

/**
 * Reads the agent's final text: its status (completed / failed / partial), learnings, the quality
 * results it reports, commit messages, a change summary, and signs of context loss.
 */
export function parseAgentReport(text: string): AgentReport {
  const { lines, fenced, openFence } = proseLines(text);
  const start = findReportStart(lines, fenced);
  const hasReport = start !== -1;
  const reportFields = hasReport ? readReportFields(lines, fenced, start) : new Map<Field, FieldText[]>();
  const proseFields = readFields(lines, fenced);
  // Scalar fields: the last occurrence, from the report when there is one. List fields: every occurrence.
  const occurrences = (name: Field): FieldText[] => reportFields.get(name) ?? (hasReport ? [] : proseFields.get(name) ?? []);
  const field = (name: Field): FieldText | undefined => occurrences(name).at(-1);
  const listed = (found: readonly FieldText[]): string[] => found.flatMap((entry) => [entry.value, ...entry.items]);

  let status: ReportedStatus | undefined;
  let statusSource: AgentReport['statusSource'];
  const statusField = field('status');
  if (statusField) status = normalizeStatus(statusField.value || statusField.items.join(' '));
  if (status) statusSource = 'report';
  else if (claimsCompletion(text)) {
    status = 'completed';
    statusSource = 'promise';
  } else if ((status = statusFromWording(lines.filter((_, index) => !fenced.has(index)).join('\n')))) {
    statusSource = 'wording';
  }

  const summaryField = field('summary');
  const summary = summaryField && (summaryField.value || summaryField.items[0]) ? clip(summaryField.value || summaryField.items.join('; ')) : lastParagraph(lines, fenced);

  const changesFound = occurrences('changes');
  const changes = unique(changesFound.length > 0 ? listed(changesFound) : changesFromProse(lines, fenced));

  // Learnings: the report's list, plus `Learning: …` lines and a Learnings section anywhere in the prose.
  const learnings = unique([
    ...listed(reportFields.get('learnings') ?? []),
    ...listed(proseFields.get('learnings') ?? []),
    ...learningsFromProse(lines, fenced),
  ]);

  const qualityField = field('quality');
  let quality: ReportedCheck[] = qualityField ? readQuality(qualityField) : [];
  if (quality.length === 0) quality = checksFromProse(lines);

  const commitMessages = unique([...listed(occurrences('commits')), ...commitsFromProse(text)]);

  const contextLoss: string[] = [];
  if (text.trim() === '') contextLoss.push('no output from the agent');
  else {
    if (openFence) contextLoss.push('the output ends inside a code block');
    const limitLine = contextLimitLine(lines);
    if (limitLine) contextLoss.push(`context limit: ${clip(limitLine).slice(0, 160)}`);
    if (!hasReport && !status) contextLoss.push('no final report or status');
  }

  return {
    ...(status ? { status, statusSource } : {}),
    hasReport,
    ...(summary ? { summary } : {}),
    changes,
    learnings,
    quality,
    commitMessages,
    contextLoss,
  };
}
