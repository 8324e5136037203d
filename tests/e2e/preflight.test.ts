// One preflight: every check a run makes before its first agent is one list, shared by --dry-run and the
// run. What the dry run passes, the run starts; what it refuses, the run refuses with the same lines.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prdProject, report } from './projects.ts';
import { agentCalls, FAST, makeSandbox, runRalph, scenario, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const problemLines = (text: string): string[] => text.split('\n').filter((line) => line.includes('✗ ')).map((line) => line.slice(line.indexOf('✗ ') + 2));

describe('one preflight for the dry run and the run', () => {
  it('the dry run names every problem the run would hit, and the run reports the same ones at once, before anything', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    writeFileSync(path.join(sandbox.repo, '.ralph'), 'a file\n');
    const args = ['--notify', 'ftp://example.test/hook', '--retry-delay', '10m', '--retry-max-delay', '1m'];
    const plan = await runRalph(sandbox, ['--dry-run', ...args]);
    expect(plan.code).toBe(1);
    const planned = problemLines(plan.stdout);
    expect(planned).toEqual([
      `${sandbox.repo}/.ralph is not a folder: ralph keeps its state (logs, status, reports) in the folder .ralph/; move the file away`,
      '--retry-delay 10m 00s is longer than --retry-max-delay 1m 00s: the first backoff would already pass the cap; lower --retry-delay or raise --retry-max-delay',
      '--notify: only http and https webhooks are supported, not ftp',
    ]);
    expect(plan.stdout).toMatch(/a real run could not start: 3 problem\(s\)$/m);
    const run = await runRalph(sandbox, ['--json', ...args, '--kill-grace', '500ms']);
    expect(run.code).toBe(1);
    expect(problemLines(run.stderr)).toEqual(planned);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'failed', exitCode: 1, tasksRemaining: 2, problems: planned });
    expect(agentCalls(sandbox)).toHaveLength(0);
    expect(existsSync(path.join(sandbox.repo, '.ralph.lock'))).toBe(false);
  });

  it('what the dry run passes, the run starts', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [{ write: { 'a.txt': '1\n' }, lines: [report('completed')] }, { write: { 'a.txt': '2\n' }, lines: [report('completed')] }]);
    const args = ['--notify', 'http://127.0.0.1:9/hook', '--notify-timeout', '200ms'];
    const plan = await runRalph(sandbox, ['--dry-run', ...args]);
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toMatch(/a real run could start now/);
    const run = await runRalph(sandbox, [...args, ...FAST]);
    expect(run.code, run.stderr).toBe(0);
    expect(agentCalls(sandbox)).toHaveLength(2);
  });

  it('a run that fails at its first agent (not logged in) counts what is left from the source: the final line, --json and the report', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    scenario(sandbox, [{ stderr: 'Not logged in · Please run /login', exit: 1 }]);
    const run = await runRalph(sandbox, ['--json', ...FAST]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ralph: agent setup error: Not logged in/);
    expect(run.stderr).toMatch(/failed: agent setup error: Not logged in · Please run \/login \(0 iterations, 0 done, 2 remaining, /);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ status: 'failed', tasksRemaining: 2 });
    const report = readFileSync(path.join(sandbox.repo, '.ralph', 'reports', `${summary.sessionId}.md`), 'utf8');
    expect(report).toMatch(/\| 0 \| 0 \| 0 \| 0 \| 0 \| 2 \|/);
  });

  it('--json prints one JSON object on a command line ralph cannot read', async () => {
    sandbox = makeSandbox();
    for (const args of [['--json', '--frobnicate'], ['--max-iterations', 'ten', '--json'], ['--json', 'status', '--parallel', '2']]) {
      const result = await runRalph(sandbox, args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr.split('\n')[0]).toMatch(/^ralph: /);
      const summary = JSON.parse(result.stdout);
      expect(summary).toMatchObject({ status: 'failed', exitCode: 1, success: false, problems: [summary.message] });
    }
    expect(JSON.parse((await runRalph(sandbox, ['--frobnicate'], { RALPH_JSON: '1' })).stdout)).toMatchObject({ message: 'unknown option --frobnicate' });
    expect((await runRalph(sandbox, ['--frobnicate'])).stdout).toBe('');
  });
});
