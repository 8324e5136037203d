// Readers for the files of one rulebook task folder (tasks.md, proposal.md, specs/*/spec.md,
// .metadata.json status). Pure functions only.
import type { PrdStatus } from './schema.ts';

/** Unchecked and checked `- [ ] 1.1 …` items of a tasks.md, code blocks excluded. */
export function parseTasksMd(text: string): { open: string[]; done: string[] } {
  const open: string[] = [];
  const done: string[] = [];
  let inFence = false;
  for (const line of text.replace(/\r/g, '').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const match = /^\s*[-*+]\s+\[([ xX])\]\s+(.+?)\s*$/.exec(line);
    if (!match) continue;
    (match[1] === ' ' ? open : done).push(match[2]!);
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
