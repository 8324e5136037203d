import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { SourceName } from '../config/index.ts';
import { RalphError } from '../errors.ts';
import { detectPrd } from './prd/locate.ts';
import { detectSpeckit } from './speckit/resolve.ts';
import type { SourceContext, TaskSource } from './types.ts';

// A source's modules load only when it is used (each module costs a few ms under tsx); detection reads
// the project through two small modules.
const beads = () => import('./beads/source.ts');
const speckit = () => import('./speckit/index.ts');
const prd = () => import('./prd/source.ts');

/** Picks the source when --source is absent: .beads/ → beads, then Spec Kit, then prd.json. */
export async function detectSource(root: string, extra: { prd?: string } = {}): Promise<SourceName | undefined> {
  if (existsSync(path.join(root, '.beads'))) return 'beads';
  if (detectSpeckit(root)) return 'speckit';
  if (extra.prd || detectPrd(root)) return 'prd';
  return undefined;
}

export async function createSource(name: SourceName, ctx: SourceContext): Promise<TaskSource> {
  switch (name) {
    case 'beads':
      return (await beads()).createBeadsSource(ctx);
    case 'speckit':
      return (await speckit()).createSpeckitSource(ctx);
    case 'prd':
      return (await prd()).createPrdSource(ctx);
  }
}

/** The error for a repo where no source can be found. */
export function noSourceError(root: string): RalphError {
  let hint = 'pass --source beads|speckit|prd';
  try {
    if (readdirSync(root).length === 0) hint = 'this folder is empty: run ralph inside your project';
  } catch {
    // keep the generic hint
  }
  return new RalphError(`no task source found in ${root}: expected .beads/ (beads), specs/*/tasks.md or .specify/ (Spec Kit), or prd.json`, { hint });
}
