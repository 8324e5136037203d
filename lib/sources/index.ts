import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { SourceName } from '../config.ts';
import { RalphError } from '../errors.ts';
import { createBeadsSource } from './beads.ts';
import { createSpeckitSource, detectSpeckit } from './speckit/index.ts';
import { createPrdSource, detectPrd } from './prd/source.ts';
import type { SourceContext, TaskSource } from './types.ts';

/** Picks the source when --source is absent: .beads/ → beads, then Spec Kit, then prd.json. */
export function detectSource(root: string, extra: { prd?: string } = {}): SourceName | undefined {
  if (existsSync(path.join(root, '.beads'))) return 'beads';
  if (detectSpeckit(root)) return 'speckit';
  if (extra.prd || detectPrd(root)) return 'prd';
  return undefined;
}

export function createSource(name: SourceName, ctx: SourceContext): TaskSource {
  switch (name) {
    case 'beads':
      return createBeadsSource(ctx);
    case 'speckit':
      return createSpeckitSource(ctx);
    case 'prd':
      return createPrdSource(ctx);
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
