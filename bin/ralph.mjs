#!/usr/bin/env node
// The package's `bin`: ralph's modules as compiled once by ./compile-cache.mjs (plain modules, no module
// hooks), else tsx from ralph's own dependencies (not the caller's folder), then ralph.ts.
// ralph's own tsconfig.json, not the one tsx would find in the caller's folder: a project's `paths`
// would otherwise redirect ralph's imports (say of dayjs) to the project's files.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledEntry } from './compile-cache.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = compiledEntry(root);
if (compiled) {
  // Stacks (RALPH_DEBUG=1) name the TypeScript lines; reading the maps costs a little, so only then.
  if (process.env.RALPH_DEBUG === '1') process.setSourceMapsEnabled(true);
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  await import('../ralph.ts');
}
