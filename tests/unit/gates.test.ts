import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import { resolveConfig } from '../../lib/config/index.ts';
import { InterruptedError } from '../../lib/errors.ts';
import { detectGates, failureLine, formatGateResults, gateName, OUTPUT_TAIL_BYTES, resolveGates, runGates, type GateResult } from '../../lib/gates.ts';
import { processAlive, processAliveNotZombie } from '../../lib/process/process-tree.ts';
import { BASH } from '../../lib/process/zx.ts';
import { tempDir } from '../support/temp.ts';

const NODE = JSON.stringify(process.execPath);
const STUBBORN = path.join(path.dirname(new URL(import.meta.url).pathname), '../fixtures/process/stubborn-tree.mjs');
const node = (code: string): string => `${NODE} -e ${JSON.stringify(code)}`;

function project(pkg: unknown, files: Record<string, string> = {}): string {
  const dir = tempDir('ralph-gates-');
  if (pkg !== undefined) writeFileSync(path.join(dir, 'package.json'), typeof pkg === 'string' ? pkg : JSON.stringify(pkg));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const run = (commands: Parameters<typeof runGates>[0], options: Partial<Parameters<typeof runGates>[1]> = {}) =>
  runGates(commands, { cwd: os.tmpdir(), signal: new AbortController().signal, ...options });

describe('detectGates', () => {
  it('finds typecheck, lint and test scripts in that order', () => {
    const dir = project({ scripts: { test: 'vitest run', lint: 'eslint .', typecheck: 'tsc --noEmit', build: 'tsc' } });
    expect(detectGates(dir)).toEqual([
      { name: 'typecheck', command: 'npm run typecheck' },
      { name: 'lint', command: 'npm run lint' },
      { name: 'test', command: 'npm run test' },
    ]);
  });

  it('accepts type-check and tsc as the type-check script', () => {
    expect(detectGates(project({ scripts: { 'type-check': 'vue-tsc' } }))).toEqual([{ name: 'typecheck', command: 'npm run type-check' }]);
    expect(detectGates(project({ scripts: { tsc: 'tsc -p .' } }))).toEqual([{ name: 'typecheck', command: 'npm run tsc' }]);
  });

  it("skips npm's placeholder test script and empty scripts", () => {
    const dir = project({ scripts: { test: 'echo "Error: no test specified" && exit 1', lint: ' ' } });
    expect(detectGates(dir)).toEqual([]);
  });

  it('uses the package manager the project uses', () => {
    expect(detectGates(project({ scripts: { test: 'jest' } }, { 'pnpm-lock.yaml': '' }))[0]!.command).toBe('pnpm run test');
    expect(detectGates(project({ scripts: { test: 'jest' } }, { 'yarn.lock': '' }))[0]!.command).toBe('yarn run test');
    expect(detectGates(project({ packageManager: 'bun@1.1.0', scripts: { test: 'bun test' } }))[0]!.command).toBe('bun run test');
  });

  it('finds nothing without a usable package.json', () => {
    expect(detectGates(project(undefined))).toEqual([]);
    expect(detectGates(project('{ not json'))).toEqual([]);
    expect(detectGates(project({ name: 'x' }))).toEqual([]);
  });

  it('reads the fixture project', () => {
    const root = path.join(path.dirname(new URL(import.meta.url).pathname), '../fixtures/prd/rulebook-project');
    expect(detectGates(root).map((gate) => gate.name)).toEqual(['typecheck', 'lint', 'test']);
  });
});

describe('resolveGates', () => {
  const config = (gate?: string[]) => resolveConfig({ flags: new Map(gate ? [['gate', gate]] : []), env: {}, file: {} });
  const testScript = () => project({ scripts: { test: 'vitest run' } });

  it('prefers configured gates and names them', () => {
    const dir = testScript();
    expect(resolveGates(dir, config(['npx tsc --noEmit', 'npx vitest run', 'npx vitest run --project e2e', 'make check']))).toEqual([
      { name: 'typecheck', command: 'npx tsc --noEmit' },
      { name: 'test', command: 'npx vitest run' },
      { name: 'test-2', command: 'npx vitest run --project e2e' },
      { name: 'make check', command: 'make check' },
    ]);
  });

  it('falls back to detection, and `none` turns gates off', () => {
    const dir = testScript();
    expect(resolveGates(dir, config())).toEqual([{ name: 'test', command: 'npm run test' }]);
    expect(resolveGates(dir, config([]))).toEqual([{ name: 'test', command: 'npm run test' }]);
    expect(resolveGates(dir, config(['none']))).toEqual([]);
  });

  it('gateName recognises common tools', () => {
    expect(['pnpm typecheck', 'cargo clippy', 'pytest -q', 'ruff check .'].map(gateName)).toEqual(['typecheck', 'lint', 'test', 'lint']);
  });
});

describe('runGates', () => {
  it('runs every gate and captures pass/fail, exit code, duration and output', async () => {
    const results = await run([
      { name: 'typecheck', command: node('console.log("0 errors")') },
      { name: 'test', command: node('console.log("1 passed"); console.error("AssertionError: expected 2 to be 3"); process.exitCode = 3') },
      { name: 'lint', command: node('process.stdout.write("\\u001b[32mclean\\u001b[0m\\n")') },
    ]);
    expect(results.map((gate) => [gate.name, gate.passed, gate.exitCode])).toEqual([
      ['typecheck', true, 0],
      ['test', false, 3],
      ['lint', true, 0],
    ]);
    expect(results[0]!.outputTail).toBe('0 errors\n');
    expect(results[1]!.outputTail).toContain('AssertionError: expected 2 to be 3');
    expect(results[2]!.outputTail).toBe('clean\n');
    for (const gate of results) expect(gate.durationMs).toBeGreaterThanOrEqual(0);
    expect(failureLine(results[1]!.outputTail)).toBe('AssertionError: expected 2 to be 3');
  });

  it('accepts plain command strings and runs them through a shell in cwd', async () => {
    const dir = project(undefined, { 'marker.txt': 'here' });
    const [result] = await run(['cat marker.txt && exit 0'], { cwd: dir });
    expect(result).toMatchObject({ name: 'cat marker.txt && exit 0', passed: true, outputTail: 'here' });
    const [missing] = await run(['definitely-not-a-command-ralph']);
    expect(missing).toMatchObject({ passed: false, exitCode: 127 });
  });

  it('runs each gate through the wrap it is given (the sandbox), shell text and all', async () => {
    const dir = project(undefined);
    const wrapped: string[][] = [];
    const [result] = await run(['echo "$GATE_WRAPPED" && exit 0'], {
      cwd: dir,
      wrap: (command) => {
        wrapped.push([command.bin, ...command.args]);
        return { bin: '/usr/bin/env', args: ['GATE_WRAPPED=yes', command.bin, ...command.args], env: { EXTRA: 'x' } };
      },
    });
    expect(wrapped).toEqual([[BASH, '-c', 'echo "$GATE_WRAPPED" && exit 0']]);
    expect(result).toMatchObject({ passed: true, outputTail: 'yes\n' });
  });

  it('keeps only the last ~4 KB of output', async () => {
    const [result] = await run([{ name: 'noisy', command: node('for (let i = 0; i < 2000; i++) console.log("line " + i); process.exitCode = 1') }]);
    expect(Buffer.byteLength(result!.outputTail)).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES + 4);
    expect(result!.outputTail.startsWith('…')).toBe(true);
    expect(result!.outputTail.endsWith('line 1999\n')).toBe(true);
    expect(result!.passed).toBe(false);
  });

  it('ends a gate that runs too long, with its whole process group', async () => {
    const dir = project(undefined);
    const pidFile = path.join(dir, 'grandchild.pid');
    // The shell starts its child and names it at once: a node grandchild took longer than the timeout to
    // start on a loaded machine, and then there was no pid file to check.
    const grandchild = `sleep 600 & echo $! > '${pidFile}'; wait`;
    const started = Date.now();
    const [result] = await run([{ name: 'hang', command: grandchild }], { timeoutMs: 1500, graceMs: 500 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ name: 'hang', passed: false, timedOut: true });
    expect(result!.outputTail).toContain('[ralph] timed out after 1500 ms');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    for (let tries = 0; tries < 40 && processAlive(pid); tries += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processAlive(pid)).toBe(false);
  });

  it('stops on abort and throws the interruption; the gates after it do not run', async () => {
    const dir = project(undefined);
    const started = path.join(dir, 'slow-started');
    const ran = path.join(dir, 'never-ran');
    const mark = (file: string, then = ''): string => `${NODE} -e ${JSON.stringify(`require('fs').writeFileSync(process.argv[1], ''); ${then}`)} ${JSON.stringify(file)}`;
    const controller = new AbortController();
    const pending = run([{ name: 'slow', command: mark(started, 'setTimeout(() => {}, 30000)') }, { name: 'never', command: mark(ran) }], { signal: controller.signal, graceMs: 500 });
    const deadline = Date.now() + 30_000;
    while (!existsSync(started) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(existsSync(started), 'the slow gate to start').toBe(true);
    controller.abort('SIGINT');
    await expect(pending).rejects.toBeInstanceOf(InterruptedError);
    expect(existsSync(ran)).toBe(false);
  });

  it('stops a hanging gate and its SIGTERM-ignoring grandchild on abort, then throws the interruption', async () => {
    const dir = project(undefined);
    const pidFile = path.join(dir, 'pids');
    const controller = new AbortController();
    const pending = run([`${NODE} ${JSON.stringify(STUBBORN)} ${JSON.stringify(pidFile)} --ignore-term`], { cwd: dir, signal: controller.signal, graceMs: 300 });
    for (let tries = 0; tries < 400 && !existsSync(pidFile); tries += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    controller.abort('SIGINT');
    await expect(pending).rejects.toBeInstanceOf(InterruptedError);
    // The gate's tree is gone by the time runGates throws.
    expect(readFileSync(pidFile, 'utf8').split(' ').map(Number).filter((pid) => processAliveNotZombie(pid))).toEqual([]);
  });

  it('runs through zx as bash text: exit codes as data, no strict mode, BASH_ENV not sourced', async () => {
    const dir = project(undefined);
    writeFileSync(path.join(dir, 'startup.sh'), 'touch bash-env-ran\n');
    const results = await run(['false; echo "[$UNSET_RALPH_GATE_VAR]" | cat', 'exit 5', 'kill -TERM $$'], { cwd: dir, env: { ...process.env, BASH_ENV: path.join(dir, 'startup.sh') } });
    expect(results.map((gate) => [gate.passed, gate.exitCode, gate.outputTail])).toEqual([
      [true, 0, '[]\n'],
      [false, 5, ''],
      [false, 143, ''],
    ]);
    expect(existsSync(path.join(dir, 'bash-env-ran'))).toBe(false);
  });

  it('throws at once when already aborted', async () => {
    const controller = new AbortController();
    controller.abort('SIGTERM');
    await expect(run(['true'], { signal: controller.signal })).rejects.toMatchObject({ exitCode: 143 });
  });
});

describe('formatGateResults', () => {
  it('summarises on one line', () => {
    const results: GateResult[] = [
      { name: 'typecheck', command: 'tsc', passed: true, exitCode: 0, durationMs: 1200, outputTail: '' },
      { name: 'test', command: 'vitest', passed: false, exitCode: 1, durationMs: 400, outputTail: '' },
      { name: 'e2e', command: 'e2e', passed: false, exitCode: 143, durationMs: 9000, outputTail: '', timedOut: true },
    ];
    expect(formatGateResults(results)).toBe('typecheck pass 1.2s, test FAIL exit 1 0.4s, e2e FAIL timed out 9.0s');
    expect(formatGateResults([])).toBe('no gates');
  });
});
