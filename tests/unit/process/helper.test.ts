import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCommand, runShellText } from '../../../lib/process/helper.ts';
import { processAliveNotZombie } from '../../../lib/process/process-tree.ts';
import { tempDir } from '../../support/temp.ts';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const STUBBORN = path.join(PROJECT, 'tests', 'fixtures', 'process', 'stubborn-tree.mjs');
const NODE = process.execPath;
const temp = (): string => tempDir('ralph-helper-');
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForFile(file: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file) || readFileSync(file, 'utf8').trim().split(' ').length < 2) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${file}`);
    await pause(25);
  }
}

function pidsIn(file: string): number[] {
  return readFileSync(file, 'utf8').trim().split(' ').map(Number);
}

async function allGone(pids: number[]): Promise<boolean> {
  for (let tries = 0; tries < 40 && pids.some((pid) => processAliveNotZombie(pid)); tries += 1) await pause(50);
  return pids.every((pid) => !processAliveNotZombie(pid));
}

describe('runCommand: ralph’s own commands through zx', () => {
  it('returns exit codes as data', async () => {
    const dir = temp();
    expect(await runCommand('sh', ['-c', 'echo out; echo err >&2; exit 3'], { cwd: dir })).toMatchObject({ exitCode: 3, end: 'exit', stdout: 'out\n', stderr: 'err\n', signal: null });
    expect(await runCommand('true', [], { cwd: dir })).toMatchObject({ exitCode: 0, end: 'exit' });
    const killed = await runCommand('sh', ['-c', 'kill -9 $$'], { cwd: dir });
    expect(killed).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
    const missing = await runCommand('definitely-not-a-command-ralph', ['x'], { cwd: dir });
    expect(missing).toMatchObject({ exitCode: 127, end: 'exit' });
    expect(missing.stderr).toMatch(/definitely-not-a-command-ralph: command not found/);
  });

  it('hands every value over as one argument, byte for byte, and runs nothing in it', async () => {
    const dir = temp();
    const values = ['$(touch pwned)', '`touch pwned`', "it's", '"quoted"', 'two\nlines', 'tab\there', '', '€ 日本 😀', '--flag', '*', '; touch pwned', '$HOME', '\\'];
    const result = await runCommand(NODE, ['-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', ...values], { cwd: dir });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(values);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('gives the stack trace limit back after each call, the failed ones too', async () => {
    const dir = temp();
    const before = Error.stackTraceLimit;
    Error.stackTraceLimit = 17;
    try {
      await runCommand('true', [], { cwd: dir });
      await runCommand('touch', ['a\0b'], { cwd: dir });
      await runCommand('true', [], { cwd: path.join(dir, 'missing') });
      await runShellText('exit 3', { cwd: dir });
      expect(Error.stackTraceLimit).toBe(17);
    } finally {
      Error.stackTraceLimit = before;
    }
  });

  it('refuses a NUL byte instead of cutting the value', async () => {
    const dir = temp();
    const result = await runCommand('touch', ['a\0b'], { cwd: dir });
    expect(result).toMatchObject({ exitCode: 127, end: 'spawn_error' });
    expect(result.spawnError).toMatch(/NUL byte/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps multi-byte characters whole across pipe reads (zx’s own store splits them)', async () => {
    const result = await runCommand(NODE, ['-e', 'process.stdout.write("€".repeat(300000))'], { cwd: temp() });
    expect(result.stdout.length).toBe(300000);
    expect(result.stdout).toBe('€'.repeat(300000));
  });

  it('runs in the given folder with the given environment, without BASH_ENV or SHELLOPTS', async () => {
    const dir = temp();
    const startup = path.join(dir, 'startup.sh');
    writeFileSync(startup, `touch ${JSON.stringify(path.join(dir, 'bash-env-ran'))}\n`);
    const result = await runCommand('sh', ['-c', 'pwd; echo "$KEEP"'], { cwd: dir, env: { ...process.env, KEEP: 'kept', BASH_ENV: startup, SHELLOPTS: 'xtrace' } });
    expect(result).toMatchObject({ exitCode: 0, stdout: `${dir}\nkept\n`, stderr: '' });
    expect(existsSync(path.join(dir, 'bash-env-ran'))).toBe(false);
  });

  it('says which folder is missing', async () => {
    const missing = path.join(temp(), 'gone');
    expect(await runCommand('true', [], { cwd: missing })).toMatchObject({ exitCode: 127, end: 'spawn_error', spawnError: `folder ${missing} does not exist` });
  });

  it('ends a command that outlives its timeout, with its tree, SIGTERM then SIGKILL', async () => {
    const dir = temp();
    const pidFile = path.join(dir, 'pids');
    const started = Date.now();
    const pending = runCommand(NODE, [STUBBORN, pidFile, '--ignore-term'], { cwd: dir, timeoutMs: 3000, graceMs: 300 });
    await waitForFile(pidFile);
    const result = await pending;
    expect(result).toMatchObject({ end: 'timeout', exitCode: 137, signal: 'SIGKILL' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await allGone(pidsIn(pidFile))).toBe(true);
  });

  it('leaves what its own command started in the background alone (bd may start helpers of its own)', async () => {
    const result = await runCommand('sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { cwd: temp() });
    const pid = Number(result.stdout.trim());
    try {
      expect(result.exitCode).toBe(0);
      expect(processAliveNotZombie(pid)).toBe(true);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });
});

describe('runShellText: a gate or hook as the user wrote it', () => {
  it('runs shell text by bash without ralph’s strict mode', async () => {
    const dir = temp();
    const result = await runShellText('false; echo "$UNSET_RALPH_VAR|after" | cat; [[ -n x ]] && echo bash', { cwd: dir });
    expect(result).toMatchObject({ exitCode: 0, stdout: '|after\nbash\n' });
    expect((await runShellText('exit 4', { cwd: dir })).exitCode).toBe(4);
  });

  it('streams output to onOutput and keeps none of it', async () => {
    const chunks: string[] = [];
    const result = await runShellText('echo one; echo two >&2', { cwd: temp(), onOutput: (chunk, stream) => chunks.push(`${stream}:${chunk.toString()}`) });
    expect(result).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
    expect(chunks.sort()).toEqual(['stderr:two\n', 'stdout:one\n']);
  });

  it('ends a hanging gate and its SIGTERM-ignoring grandchild on timeout', async () => {
    const dir = temp();
    const pidFile = path.join(dir, 'pids');
    const pending = runShellText(`${JSON.stringify(NODE)} ${JSON.stringify(STUBBORN)} ${JSON.stringify(pidFile)}`, { cwd: dir, timeoutMs: 3000, graceMs: 300, reapLeftovers: true });
    await waitForFile(pidFile);
    const result = await pending;
    expect(result.end).toBe('timeout');
    expect(await allGone(pidsIn(pidFile))).toBe(true);
  });

  it('ends a hanging gate and its SIGTERM-ignoring grandchild on abort', async () => {
    const dir = temp();
    const pidFile = path.join(dir, 'pids');
    const controller = new AbortController();
    const pending = runShellText(`${JSON.stringify(NODE)} ${JSON.stringify(STUBBORN)} ${JSON.stringify(pidFile)} --ignore-term`, { cwd: dir, signal: controller.signal, graceMs: 300, reapLeftovers: true });
    await waitForFile(pidFile);
    controller.abort('SIGINT');
    const result = await pending;
    expect(result.end).toBe('aborted');
    expect(await allGone(pidsIn(pidFile))).toBe(true);
  });

  it('ends what a finished gate left running in its group', async () => {
    const result = await runShellText('sleep 30 >/dev/null 2>&1 & echo $!', { cwd: temp(), graceMs: 300, reapLeftovers: true });
    expect(result.exitCode).toBe(0);
    expect(await allGone([Number(result.stdout.trim())])).toBe(true);
  });
});

describe('without ps on PATH and with ZX_TIMEOUT set', () => {
  it('still ends a timed-out tree and never crashes (zx’s ps-based kill is never used)', () => {
    const dir = temp();
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    for (const tool of ['bash', 'sleep']) symlinkSync(spawnSync('which', [tool], { encoding: 'utf8' }).stdout.trim(), path.join(bin, tool));
    symlinkSync(NODE, path.join(bin, 'node'));
    expect(spawnSync(path.join(bin, 'bash'), ['-c', 'command -v ps'], { env: { PATH: bin } }).status).not.toBe(0);
    const pidFile = path.join(dir, 'pids');
    const probe = path.join(dir, 'probe.mts');
    writeFileSync(
      probe,
      `import { runShellText } from ${JSON.stringify(path.join(PROJECT, 'lib/process/helper.ts'))};
       const result = await runShellText(${JSON.stringify(`node ${STUBBORN} ${pidFile} --ignore-term`)}, { cwd: ${JSON.stringify(dir)}, timeoutMs: 3000, graceMs: 300, reapLeftovers: true });
       console.log(JSON.stringify(result));`,
    );
    const run = spawnSync(NODE, [path.join(PROJECT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), probe], { cwd: dir, env: { PATH: bin, HOME: dir, ZX_TIMEOUT: '100' }, encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ end: 'timeout' });
    const pids = pidsIn(pidFile);
    expect(pids.every((pid) => !processAliveNotZombie(pid))).toBe(true);
  });
});

