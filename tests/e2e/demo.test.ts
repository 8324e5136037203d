// `npm run demo` from the project root: green, fast, offline, and it says where the report is.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT, TSX } from './helpers.ts';

let demoRoot: string | undefined;

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
/** CPU time (ms) of this process's children that have ended, their own descendants included (/proc/self/stat). */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
}
afterEach(() => {
  if (demoRoot) rmSync(demoRoot, { recursive: true, force: true });
  demoRoot = undefined;
});

describe('npm run demo', () => {
  it('runs the whole loop against the bundled project and exits 0 in well under a minute', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('RALPH_')));
    const started = Date.now();
    const cpuBefore = childrenCpuMs();
    const child = spawn(TSX, [path.join(PROJECT, 'examples', 'demo', 'run-demo.ts')], { cwd: PROJECT, env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const elapsed = Date.now() - started;
    const cpuMs = childrenCpuMs() - cpuBefore;

    const project = /project: +(\S+)/.exec(stdout)?.[1];
    if (project && path.basename(path.dirname(project)).startsWith('ralph-demo-') && project.startsWith(os.tmpdir())) demoRoot = path.dirname(project);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    // "Well under a minute" is the demo's own cost: the CPU time of its whole process tree, and the waits
    // ralph planned (backoffs, usage-limit waits). The wall clock of a loaded shared machine measured the
    // other engineers' builds too (66 s beside them, 14 s alone).
    expect(cpuMs, `wall time ${elapsed} ms`).toBeLessThan(60_000);
    const events = readFileSync(path.join(project!, '.ralph', 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; at: string; until?: number });
    const waitedMs = events.filter((event) => event.type === 'backoff' || event.type === 'usage_wait').reduce((sum, event) => sum + (event.until! - Date.parse(event.at)), 0);
    expect(waitedMs).toBeLessThan(10_000);

    // Several iterations, one retry after the scripted 529, one finished task per iteration.
    expect(stderr).toMatch(/attempt 1 failed \(transient\): API Error: 529 Overloaded/);
    for (let iteration = 1; iteration <= 4; iteration += 1) expect(stderr).toMatch(new RegExp(`iteration ${iteration} gr-1\\.${iteration + 1}: pass`));
    expect(stderr).toMatch(/completed: all tasks of epic gr-1/);

    // It says where to look, and those places exist.
    expect(project, stdout).toBeDefined();
    expect(stdout).toContain(`git -C ${project} log --oneline`);
    expect(stdout).toMatch(/Add a farewell function \(gr-1\.2\)/);
    const reports = [...stdout.matchAll(/report: +(\S+)/g)].map((match) => match[1]!);
    expect(reports.map((file) => path.extname(file)).sort(), stdout).toEqual(['.html', '.md']);
    for (const file of reports) expect(existsSync(file), file).toBe(true);
    const markdown = readFileSync(reports.find((file) => file.endsWith('.md'))!, 'utf8');
    expect(markdown.match(/^\| \d+ \| gr-1\.\d /gm)).toHaveLength(4);
    expect(markdown).toContain('pass after 2 attempts');
  }, 180_000);
});
