import { defineConfig } from 'vitest/config';
import SlowFirst from './tests/support/sequencer.ts';

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
    // Six workers on two cores: an e2e test spends much of its time waiting on its processes (an agent's
    // scripted pause, a timeout, a usage-limit reset), and with four the cores still sat idle whenever three
    // of them waited at once. Measured on this 2-core machine: 2 workers 203 s, 3 workers 143 s (isolate
    // off); then, two interleaved rounds each, 4 workers 116.3 and 116.2 s, 6 workers 111.0 and 111.4 s,
    // 8 workers 113.3 and 106.5 s.
    maxWorkers: 6,
    // One module graph per worker, not per test file: a fresh one cost ~18 s of CPU over the unit tests.
    // A test file owns what it changes (env, timers, spies) and restores it in its own hooks.
    isolate: false,
    // The slowest files start first when vitest has no durations of an earlier run (a clean clone, CI).
    sequence: { sequencer: SlowFirst },
  },
});
