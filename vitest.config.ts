import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // A private TMPDIR for the run; afterwards, fails the run if a process, a temp file or a change to the
    // checkout is left behind.
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // e2e tests spawn real processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
