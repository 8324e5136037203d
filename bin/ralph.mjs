#!/usr/bin/env node
// The package's `bin`: loads tsx from ralph's own dependencies (not the caller's folder), then ralph.ts.
// ralph's own tsconfig.json, not the one tsx would find in the caller's folder: a project's `paths`
// would otherwise redirect ralph's imports (say of dayjs) to the project's files.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../ralph.ts');
