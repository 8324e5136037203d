import type { Benchmark } from './report.ts';
export const scale: Benchmark = { name: 'scale', summary: 'stub', async run() { return []; } };
