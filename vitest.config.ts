import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // A private TMPDIR for the run; afterwards, fails the run if a process, a temp file or a change to the
    // checkout is left behind.
    globalSetup: ['tests/support/global-setup.ts'],
    // Safety nets against hangs, not speed limits: on the shared 2-core machine running seven suites at
    // once, e2e tests that take 5 s alone took over 60 s.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // e2e tests spawn real processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
