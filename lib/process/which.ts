import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** Finds an executable on PATH like `command -v`; undefined when missing. */
export function findOnPath(bin: string, env: NodeJS.ProcessEnv): string | undefined {
  const candidates = bin.includes('/') ? [bin] : (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, bin));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
