// `npm run demo` from the project root: green, fast, offline, and it says where the report is.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT, TSX } from './helpers.ts';

let demoRoot: string | undefined;
afterEach(() => {
  if (demoRoot) rmSync(demoRoot, { recursive: true, force: true });
  demoRoot = undefined;
});

describe('npm run demo', () => {
  it('runs the whole loop against the bundled project and exits 0 in well under a minute', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('RALPH_')));
    const started = Date.now();
    const child = spawn(TSX, [path.join(PROJECT, 'examples', 'demo', 'run-demo.ts')], { cwd: PROJECT, env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const elapsed = Date.now() - started;

    const project = /project: +(\S+)/.exec(stdout)?.[1];
    if (project && path.basename(path.dirname(project)).startsWith('ralph-demo-') && project.startsWith(os.tmpdir())) demoRoot = path.dirname(project);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(elapsed).toBeLessThan(60_000);

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
  }, 90_000);
});
