// Honest summaries: skipped tasks are named apart from remaining ones in the final line, the limit
// message, --json, the report and `ralph status`, never folded into (or hidden from) "remaining".
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST, makeSandbox, runRalph, scenario, type Sandbox } from './helpers.ts';
import { answer, specKitProject, tick } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const TASKS = ['# Tasks: Demo', '', '## Phase 1: Setup', '', '- [ ] T001 Hard task', '- [ ] T002 Easy task', '- [ ] T003 Another task', ''].join('\n');
/** Changes a file without ticking anything: a failed iteration that still is progress for the breaker. */
const attempt = (n: number) => ({ write: { [`try-${n}.txt`]: `${n}\n` }, lines: [answer(`Tried, not done (${n}).`)] });

describe('skipped and remaining tasks, named apart', () => {
  it('at the iteration limit: "1 remaining, 1 skipped (T001)" in the message, the final line, --json and the report', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    // T001 fails three times in a row and is skipped; T002 is done; T003 is left when the limit hits.
    scenario(sandbox, [attempt(1), attempt(2), attempt(3), { edit: [tick('T002')], lines: [answer('Did T002.')] }]);
    const result = await runRalph(sandbox, ['--json', '--max-iterations', '4', ...FAST]);
    expect(result.code, result.stderr).toBe(2);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'limit_reached', tasksRemaining: 1, tasksSkipped: 1, skippedTaskIds: ['T001'], tasksCompleted: 1 });
    expect(summary.message).toBe('iteration limit of 4 reached with 1 remaining, 1 skipped (T001)');
    expect(result.stderr).toMatch(/limit_reached: .* \(4 iterations, 1 done, 1 remaining, 1 skipped \(T001\), .*\) exit 2$/m);
    const reports = path.join(sandbox.repo, '.ralph', 'reports');
    const report = readFileSync(path.join(reports, readdirSync(reports).find((name) => name.endsWith('.md'))!), 'utf8');
    expect(report).toContain('| 4 | 1 | 0 | 3 | 1 | 1 | 1 (T001) |');
    const status = await runRalph(sandbox, ['status']);
    expect(status.stdout).toContain('1 remaining (1 ready), 1 skipped (T001)');
  });
});
