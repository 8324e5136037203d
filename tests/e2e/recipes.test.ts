// The recipes in examples/: the Makefile targets (exit codes propagate) and the tmux launcher.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { needsTool } from '../support/needs-tool.ts';
import { closeStep, makeSandbox, PROJECT, RALPH, scenario, seedBeads, standardEpic, TSX, waitFor, type Sandbox } from './helpers.ts';

const MAKEFILE = path.join(PROJECT, 'examples', 'Makefile');
const TMUX_SCRIPT = path.join(PROJECT, 'examples', 'ralph-tmux.sh');
const BIN = path.join(PROJECT, 'bin', 'ralph.mjs');
const make = needsTool('make');
const tmux = needsTool('tmux');
const FAST_FLAGS = '--retry-delay 10ms --retry-max-delay 50ms --kill-grace 500ms';

let sandbox: Sandbox | undefined;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  sandbox?.cleanup();
  sandbox = undefined;
});

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Result> {
  return new Promise((resolve) => {
    execFile(bin, args, { ...options, encoding: 'utf8', timeout: 110_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** make with the Makefile's own command for ralph (node on this checkout's bin/ralph.mjs). */
function runMake(box: Sandbox, targets: string[], vars: Record<string, string> = {}): Promise<Result> {
  const assignments = Object.entries(vars).map(([key, value]) => `${key}=${value}`);
  return run(make.bin(), ['--no-print-directory', '-f', MAKEFILE, ...targets, ...assignments], { cwd: box.repo, env: box.env });
}

describe.skipIf(make.skip)(make.title('examples/Makefile'), () => {
  it('ralph-dry exits 0 for a ready repo and prints the plan', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    const result = await runMake(sandbox, ['ralph-dry']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('source: beads, epic ws-9w6 "Feature: ralph-automation"');
    expect(existsSync(path.join(sandbox.repo, '.ralph'))).toBe(false);
  });

  it('ralph-dry fails make when the clarify phase is still open', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1, 'open'));
    const result = await runMake(sandbox, ['ralph-dry']);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toMatch(/✗ clarify phase/);
    expect(result.stderr).toMatch(/\[.*ralph-dry\] Error 1/);
  });

  it("ralph passes RALPH_FLAGS and fails make with ralph's code at the iteration limit", async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    scenario(sandbox, [closeStep('ws-9w6.2'), closeStep('ws-9w6.3')]);
    const limited = await runMake(sandbox, ['ralph'], { RALPH_FLAGS: `--max-iterations 1 ${FAST_FLAGS}` });
    expect(limited.code).not.toBe(0);
    expect(limited.stderr).toMatch(/\[.*ralph\] Error 2/);
    const finished = await runMake(sandbox, ['ralph'], { RALPH_FLAGS: FAST_FLAGS });
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stderr).toMatch(/completed: all tasks of epic ws-9w6/);
  });

  it('ralph-status runs `ralph status` in the repo', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    const result = await runMake(sandbox, ['ralph-status']);
    expect(result.code, result.stderr).toBe(0);
  });

  it('by default starts bin/ralph.mjs of the checkout above examples/ with node', async () => {
    sandbox = makeSandbox();
    const result = await run(make.bin(), ['--no-print-directory', '-n', '-f', MAKEFILE, 'ralph', 'ralph-dry', 'ralph-status'], { cwd: sandbox.repo, env: sandbox.env });
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([`node ${BIN}`, `node ${BIN} --dry-run`, `node ${BIN} status`]);
  });
});

describe('examples/ralph-tmux.sh', () => {
  it.skipIf(tmux.skip)(tmux.title('starts a detached session with the run, `ralph status --watch` and `ralph serve`; ralph pause and unpause steer it'), async () => {
    const bin = tmux.bin();
    const box = makeSandbox();
    sandbox = box;
    seedBeads(box, standardEpic(3));
    const go = path.join(box.root, 'go-1');
    scenario(box, [closeStep('ws-9w6.2', { delayMs: 150, waitFile: go }), closeStep('ws-9w6.3', { delayMs: 150 }), closeStep('ws-9w6.4', { delayMs: 150 })]);
    // A private tmux server (its socket under the sandbox), so the user's own tmux is never touched.
    const env: NodeJS.ProcessEnv = { ...box.env, PATH: tmux.pathWith(box.env.PATH), TMUX_TMPDIR: box.root, SHELL: '/bin/sh', TERM: 'xterm-256color', RALPH_SERVE_PORT: '0' };
    delete env.TMUX;
    const name = `ralph-test-${process.pid}-${Date.now()}`;
    const tmuxRun = (...args: string[]): string => execFileSync(bin, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => {
      try {
        tmuxRun('kill-server');
      } catch {
        // already gone
      }
    });

    const started = await run('bash', [TMUX_SCRIPT, name, ...FAST_FLAGS.split(' ')], { cwd: box.repo, env });
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toContain(`tmux attach -t ${name}`);
    expect(tmuxRun('list-panes', '-t', `=${name}:ralph`, '-F', '#{pane_index}').trim().split('\n')).toEqual(['0', '1', '2']);
    const command = `node ${BIN} `;
    expect(started.stdout).toContain(`steer:  ${command}pause | ${command}unpause | ${command}stop (after this iteration) | ${command}stop --now`);

    const pane = (index: number): string => tmuxRun('capture-pane', '-p', '-J', '-S', '-', '-t', `=${name}:ralph.${index}`);
    await waitFor(() => /iteration 1\/50/.test(pane(0)), 30_000, `the run to start in pane 0:\n${pane(0)}`).catch((error: Error) => {
      throw new Error(`${error.message}\n--- pane 0:\n${pane(0)}\n--- pane 1:\n${pane(1)}`);
    });
    // From another shell in the repo, as the README shows: pause, see it in the status pane, unpause.
    const ralph = (...args: string[]) => run(TSX, [RALPH, ...args], { cwd: box.repo, env });
    expect((await ralph('pause')).code).toBe(0);
    writeFileSync(go, '');
    await waitFor(() => /state: +paused since/.test(pane(1)), 30_000, 'the status pane to say paused').catch((error: Error) => {
      throw new Error(`${error.message}\n--- pane 1:\n${pane(1)}`);
    });
    expect(pane(0)).toMatch(/paused since .*: waiting for 'ralph unpause'/);
    expect((await ralph('unpause')).code).toBe(0);
    await waitFor(() => /exited with \d+/.test(pane(0)), 30_000, 'the run to finish').catch((error: Error) => {
      throw new Error(`${error.message}\n--- pane 0:\n${pane(0)}`);
    });
    expect(pane(0)).toMatch(/completed: all tasks of epic ws-9w6/);
    expect(pane(0)).toMatch(/exited with 0/);
    // A second start with the same name refuses instead of clobbering the running session.
    const again = await run('bash', [TMUX_SCRIPT, name], { cwd: box.repo, env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`a tmux session named '${name}' already exists`);
    // The status pane shows ralph's status, not an error.
    expect(pane(1)).not.toMatch(/not available yet|unknown command|command not found/);
    expect(pane(1).trim()).not.toBe('');
    expect(pane(0)).toMatch(/resumed after a pause of/);
    // The third pane serves the live page.
    await waitFor(() => /ralph serve \(PID \d+\): the live page .* at http:\/\/127\.0\.0\.1:\d+\//.test(pane(2)), 30_000, 'ralph serve in pane 2').catch((error: Error) => {
      throw new Error(`${error.message}\n--- pane 2:\n${pane(2)}`);
    });
    tmuxRun('kill-session', '-t', `=${name}`);
    expect(() => tmuxRun('has-session', '-t', `=${name}`)).toThrow();
  }, 180_000);
});
