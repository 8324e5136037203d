// Where a prd.json is: what source detection needs, without loading the PRD source itself.
import { existsSync } from 'node:fs';
import path from 'node:path';

/** Where a prd.json is looked for when --prd is not given, in this order. */
export const PRD_CANDIDATES = ['.rulebook-ralph/prd.json', '.rulebook/ralph/prd.json', 'prd.json'] as const;

/** The first prd.json candidate that exists under `root` (absolute path), or undefined. */
export function detectPrd(root: string): string | undefined {
  return PRD_CANDIDATES.map((candidate) => path.join(root, candidate)).find((file) => existsSync(file));
}
