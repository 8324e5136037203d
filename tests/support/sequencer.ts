// The order the test files start in. Six workers share the files; a long file started last keeps the run
// going after the others are done. vitest orders by the durations it measured in an earlier run, when it has
// them (node_modules/.vite/vitest): then that order stands. A clean clone (CI) has none, and vitest would
// keep the files' alphabetical order, which starts the longest files (crash-beads, crash-points) late:
// 230 s against 189 s for the measured order on 2 cores. So the files measured slowest start first. The
// list only orders; a file missing from it or gone from the suite changes nothing but the time.
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files of a clean-clone run (2026-11-28, 2 cores: 7–94 s each), slowest first. The ones that
 * mostly wait (the demo's tsx start, a hook's grace period, bubblewrap's timeouts) are here too: started
 * last, they kept the run going for their whole wait after every other file was done.
 */
export const SLOW_FIRST = [
  'tests/e2e/crash-points.test.ts',
  'tests/e2e/crash-beads.test.ts',
  'tests/e2e/crash-hosts.test.ts',
  'tests/e2e/parallel.test.ts',
  'tests/faults/remote.test.ts',
  'tests/e2e/beads-leases.test.ts',
  'tests/e2e/remote.test.ts',
  'tests/e2e/crash-loop.test.ts',
  'tests/e2e/remote-show.test.ts',
  'tests/e2e/beads.test.ts',
  'tests/e2e/clean-endings.test.ts',
  'tests/e2e/remote-transports.test.ts',
  'tests/e2e/steer.test.ts',
  'tests/e2e/agents.test.ts',
  'tests/e2e/remote-resume.test.ts',
  'tests/e2e/pr.test.ts',
  'tests/e2e/review.test.ts',
  'tests/e2e/fallback.test.ts',
  'tests/e2e/speckit.test.ts',
  'tests/e2e/questions.test.ts',
  'tests/e2e/crash.test.ts',
  'tests/e2e/notify.test.ts',
  'tests/faults/agent.test.ts',
  'tests/e2e/demo.test.ts',
  'tests/e2e/status.test.ts',
  'tests/e2e/agent-leaves-work.test.ts',
  'tests/unit/process/helper.test.ts',
  'tests/e2e/converge.test.ts',
  'tests/e2e/breaker.test.ts',
  'tests/e2e/commits.test.ts',
  'tests/e2e/serve-browser.test.ts',
  'tests/e2e/start-anywhere.test.ts',
  'tests/unit/sandbox/runner-bwrap.test.ts',
  'tests/e2e/prd.test.ts',
  'tests/e2e/recipes.test.ts',
  'tests/faults/parallel.test.ts',
  'tests/unit/session/exit-hook.test.ts',
];

/** Where `file` (relative to the project) stands in SLOW_FIRST; after all of them when it is not there. */
export function slowRank(file: string): number {
  const at = SLOW_FIRST.indexOf(file.split(path.sep).join('/'));
  return at === -1 ? SLOW_FIRST.length : at;
}

export default class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const key = (spec: TestSpecification): string => `${spec.project.name}:${path.relative(root, spec.moduleId)}`;
    // Measured durations of an earlier run: vitest's own order (longest first) is better than any list.
    if (files.some((spec) => this.ctx.cache.getFileTestResults(key(spec)))) return sorted;
    return [...sorted].sort((a, b) => slowRank(path.relative(root, a.moduleId)) - slowRank(path.relative(root, b.moduleId)));
  }
}
