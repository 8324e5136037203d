// Readers for the files of one rulebook task folder (tasks.md, proposal.md, specs/*/spec.md,
// .metadata.json status). Pure functions only.
import { readCheckbox } from '../../markdown.ts';
import type { PrdStatus } from './schema.ts';

/**
 * Unchecked and checked `- [ ] 1.1 …` items of a tasks.md, code blocks excluded (CRLF, a BOM, `[]` and
 * `[✅]` read too). A mark ralph cannot read (`[-]`, `[~]`) counts as open: never done on a guess.
 */
export function parseTasksMd(text: string): { open: string[]; done: string[] } {
  const open: string[] = [];
  const done: string[] = [];
  let inFence = false;
  for (const line of text.replace(/^\uFEFF/, '').replace(/\r/g, '').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const checkbox = readCheckbox(line);
    if (!checkbox || checkbox.quoted || !checkbox.rest) continue;
    (checkbox.state === 'done' ? done : open).push(checkbox.rest);
  }
  return { open, done };
}

/** `# Proposal: Title` and the `## What Changes` section of a proposal.md. */
export function parseProposal(text: string): { title?: string; whatChanges?: string } {
  const lines = text.replace(/\r/g, '').split('\n');
  const heading = lines.find((line) => /^#\s+\S/.test(line));
  const title = heading?.replace(/^#\s+/, '').replace(/^proposal:\s*/i, '').trim();
  const start = lines.findIndex((line) => /^##\s+what changes\s*$/i.test(line));
  let whatChanges: string | undefined;
  if (start !== -1) {
    let end = start + 1;
    while (end < lines.length && !/^#{1,2}\s/.test(lines[end]!)) end += 1;
    whatChanges = lines.slice(start + 1, end).join('\n').trim() || undefined;
  }
  return { ...(title ? { title } : {}), ...(whatChanges ? { whatChanges } : {}) };
}

/** SHALL/MUST lines of a spec.md, with markdown bullets, emphasis and code ticks removed. */
export function specRequirements(text: string): string[] {
  const found: string[] = [];
  let inFence = false;
  for (const line of text.replace(/\r/g, '').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence || /^\s*#/.test(line) || !/\b(SHALL|MUST)\b/.test(line)) continue;
    const cleaned = line
      .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '')
      .replace(/\*\*|__/g, '')
      .replace(/`([^`]*)`/g, '$1')
      .trim();
    if (cleaned.length >= 10 && !found.includes(cleaned)) found.push(cleaned);
  }
  return found;
}

/**
 * Complexity from the number of open tasks.md items: 0–3 → low, 4–8 → medium, 9 or more → high.
 * Spec requirements are not counted: they restate what the items deliver.
 */
export function estimateComplexity(openItems: number): 'low' | 'medium' | 'high' {
  if (openItems <= 3) return 'low';
  if (openItems <= 8) return 'medium';
  return 'high';
}

/** rulebook metadata status → prd status: pending and in-progress → pending (ralph claims work itself). */
export function mapRulebookStatus(value: unknown): PrdStatus | undefined {
  switch (typeof value === 'string' ? value.toLowerCase() : value) {
    case 'pending':
    case 'in-progress':
    case 'in_progress':
      return 'pending';
    case 'completed':
    case 'done':
      return 'completed';
    case 'blocked':
      return 'blocked';
    default:
      return undefined;
  }
}

export interface StatusJudgement {
  status: PrdStatus;
  /** How: `.metadata.json says "pending"`, `no .metadata.json; tasks.md fully ticked (20 items)`. */
  judgedBy: string;
  /** The metadata object (empty when missing or unreadable). */
  metadata: Record<string, unknown>;
  /** Why the metadata could not be used, when it exists but is broken. */
  problem?: string;
  /** The metadata says pending or in progress while every item of tasks.md is ticked. */
  tickedButPending: boolean;
}

/**
 * A task's status: its `.metadata.json` when that says one; otherwise its tasks.md decides, and a fully
 * ticked tasks.md is finished work (completed), not a task to queue.
 */
export function judgeStatus(metadataText: string | undefined, items: { open: string[]; done: string[] }): StatusJudgement {
  let metadata: Record<string, unknown> = {};
  let problem: string | undefined;
  if (metadataText !== undefined) {
    try {
      const parsed: unknown = JSON.parse(metadataText);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) metadata = parsed as Record<string, unknown>;
      else problem = '.metadata.json: expected a JSON object';
    } catch (error) {
      problem = `.metadata.json: not valid JSON (${(error as Error).message})`;
    }
  }
  const ticked = items.open.length === 0 && items.done.length > 0;
  const fromMetadata = problem ? undefined : mapRulebookStatus(metadata.status);
  if (fromMetadata) {
    return { status: fromMetadata, judgedBy: `.metadata.json says ${JSON.stringify(metadata.status)}`, metadata, tickedButPending: ticked && fromMetadata === 'pending' };
  }
  if (!problem && metadata.status !== undefined) problem = `.metadata.json: unknown status ${JSON.stringify(metadata.status)}`;
  const why = metadataText === undefined ? 'no .metadata.json' : problem ? 'unusable .metadata.json' : 'no status in .metadata.json';
  const count = (n: number): string => `${n} item${n === 1 ? '' : 's'}`;
  const checkboxes = ticked ? `tasks.md fully ticked (${count(items.done.length)})` : items.open.length > 0 ? `tasks.md has ${items.open.length} of ${count(items.open.length + items.done.length)} open` : 'no checkbox in tasks.md';
  return { status: ticked ? 'completed' : 'pending', judgedBy: `${why}; ${checkboxes}`, metadata, ...(problem ? { problem } : {}), tickedButPending: false };
}
