// ralph's own files (.ralph/) hold the agent's transcripts: only their owner may read them.
import { chmodSync, mkdirSync } from 'node:fs';

/** Mode of every file ralph writes under .ralph/. */
export const PRIVATE_FILE = 0o600;
/** Mode of .ralph/ and the folders in it. */
export const PRIVATE_DIR = 0o700;

/** Creates `dir` (and missing parents) as 0700, and tightens it when it already exists with wider rights. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  chmodSync(dir, PRIVATE_DIR);
}
