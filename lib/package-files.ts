// ralph's own files beside its code (package.json, templates/, lib/serve/assets/), by their path in the
// package. Found from this module's folder up to the first that holds package.json, so the same code reads
// them from the sources (lib/…) and from the compiled tree (bin/compile-cache.mjs: chunks in one folder,
// those files linked beside them), where a path relative to the module would point elsewhere.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The folder of ralph's package.json (looked up once). */
function packageRoot(): string {
  if (root) return root;
  const here = path.dirname(fileURLToPath(import.meta.url));
  let dir = here;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    // No package.json above (never in a checkout or an install): the sources' layout, lib/ under the root.
    if (up === dir) return (root = path.dirname(here));
    dir = up;
  }
  return (root = dir);
}

/** The absolute path of `relative` (posix separators) in ralph's package. */
export const packageFile = (relative: string): string => path.join(packageRoot(), ...relative.split('/'));
