import type { Benchmark } from './report.ts';
export const startup: Benchmark = { name: 'startup', summary: 'stub', async run() { return []; } };
