#!/usr/bin/env node
// The package's `bin`: loads tsx from ralph's own dependencies (not the caller's folder), then ralph.ts.
import { register } from 'tsx/esm/api';

register();
await import('../ralph.ts');
