// ralph runs its helper commands (bd, gates, the on-exit hook) through zx's `$`. zx reads ZX_* variables
// and bash reads BASH_ENV / ENV from the environment: none of them may change what a run does.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bdCalls, closeStep, FAST, makeSandbox, pidAlive, runRalph, scenario, seedBeads, signalRalph, standardEpic, startRalph, waitFor, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const NODE = JSON.stringify(process.execPath);
const STUBBORN = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'process', 'stubborn-tree.mjs');

/** Every file below `dir` whose name starts with `prefix` (skipping .git). */
function filesNamed(dir: string, prefix: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '.git') continue;
    const full = path.join(dir, entry.name);
    if (entry.name.startsWith(prefix)) found.push(full);
    if (entry.isDirectory()) found.push(...filesNamed(full, prefix));
  }
  return found;
}

describe('the environment cannot change how ralph runs its helper commands', () => {
  it('a full run with bd, gates and an on-exit hook under ZX_* and BASH_ENV does exactly what it does without them', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    scenario(sandbox, [closeStep('ws-9w6.2'), closeStep('ws-9w6.3')]);
    const startup = path.join(sandbox.root, 'bash-startup.sh');
    const sourced = path.join(sandbox.root, 'sourced');
    writeFileSync(startup, `echo BASH_ENV-was-sourced >&2; touch ${JSON.stringify(sourced)}\n`);
    const gateLog = path.join(sandbox.root, 'gate.log');
    const hookFile = path.join(sandbox.root, 'hook.txt');
    const gate = `${NODE} -e "require('fs').appendFileSync(process.argv[1], 'gate ran\\n')" ${JSON.stringify(gateLog)}`;
    const hook = `echo "hook $RALPH_STATUS $RALPH_EXIT_CODE" > ${JSON.stringify(hookFile)}`;
    const hostile = {
      ZX_SHELL: '/bin/sh',
      ZX_PREFIX: 'touch pwned;',
      ZX_POSTFIX: ';touch pwned-postfix',
      ZX_VERBOSE: 'true',
      ZX_QUIET: 'false',
      ZX_TIMEOUT: '20',
      ZX_CWD: '/',
      ZX_PREFER_LOCAL: 'true',
      BASH_ENV: startup,
      ENV: startup,
      SHELLOPTS: 'xtrace',
    };
    const result = await runRalph(sandbox, ['--json', '--gate', gate, '--on-exit', hook, ...FAST], hostile);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', iterations: 2, tasksCompleted: 2 });
    expect(bdCalls(sandbox).length).toBeGreaterThan(0);
    expect(readFileSync(gateLog, 'utf8')).toBe('gate ran\ngate ran\n');
    expect(readFileSync(hookFile, 'utf8')).toBe('hook completed 0\n');
    // Nothing ran that the environment slipped in, and no command was echoed.
    expect(filesNamed(sandbox.root, 'pwned')).toEqual([]);
    expect(existsSync(path.join('/', 'pwned'))).toBe(false);
    expect(existsSync(sourced)).toBe(false);
    expect(result.stderr).not.toMatch(/BASH_ENV-was-sourced|set -euo pipefail|\$ bd |\+ bd |touch pwned/);
  });
});

describe('a hanging gate whose grandchild ignores SIGTERM', () => {
  it('is ended with its whole tree when it times out', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const pidFile = path.join(sandbox.root, 'gate.pids');
    const gate = `${NODE} ${JSON.stringify(STUBBORN)} ${JSON.stringify(pidFile)} --ignore-term`;
    const started = Date.now();
    const result = await runRalph(sandbox, ['--json', '--gate', gate, '--timeout', '4s', '--max-iterations', '1', ...FAST]);
    // The gate failed on its timeout (beads still counts the task the agent closed).
    expect(result.stderr).toMatch(/gates: \S+ FAILED/);
    const summary = JSON.parse(result.stdout) as { records: Array<{ gates?: Array<{ passed: boolean }> }> };
    expect(summary.records[0]!.gates).toEqual([expect.objectContaining({ passed: false })]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    const pids = readFileSync(pidFile, 'utf8').split(' ').map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(pidAlive(pid), `pid ${pid}`).toBe(false);
  });

  it('is ended with its whole tree on Ctrl+C, and ralph exits 130', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const pidFile = path.join(sandbox.root, 'gate.pids');
    const gate = `${NODE} ${JSON.stringify(STUBBORN)} ${JSON.stringify(pidFile)} --ignore-term`;
    const run = startRalph(sandbox, ['--json', '--gate', gate, ...FAST]);
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '), 30_000, 'the gate and its grandchild');
    signalRalph(sandbox, 'SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(existsSync(path.join(sandbox.repo, '.ralph.lock'))).toBe(false);
    const pids = readFileSync(pidFile, 'utf8').split(' ').map(Number);
    for (const pid of pids) expect(pidAlive(pid), `pid ${pid}`).toBe(false);
  });
});
