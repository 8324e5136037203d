import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { $, BASH, findOnPath, helperEnv, STRICT_PREFIX } from '../../../lib/process/zx.ts';
import { tempDir } from '../../support/temp.ts';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const TSX = path.join(PROJECT, 'node_modules', '.bin', 'tsx');
const temp = (): string => tempDir('ralph-zx-');

/** Every ZX_* variable zx 8 reads at import, set to something that would change how ralph runs commands. */
const HOSTILE_ZX_ENV = {
  ZX_SHELL: '/bin/sh',
  ZX_PREFIX: 'touch pwned-prefix;',
  ZX_POSTFIX: ';touch pwned-postfix',
  ZX_VERBOSE: 'true',
  ZX_QUIET: 'false',
  ZX_TIMEOUT: '50',
  ZX_TIMEOUT_SIGNAL: 'SIGKILL',
  ZX_KILL_SIGNAL: 'SIGKILL',
  ZX_CWD: '/',
  ZX_PREFER_LOCAL: 'true',
  ZX_DETACHED: 'false',
};

/** Runs a TypeScript snippet in a fresh process (zx reads its environment once, at import). */
function runScript(dir: string, code: string, env: NodeJS.ProcessEnv): { stdout: string; stderr: string } {
  const file = path.join(dir, 'probe.mts');
  writeFileSync(file, code);
  const result = spawnSync(TSX, [file], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`probe exited ${result.status}: ${result.stderr}${result.stdout}`);
  return { stdout: result.stdout, stderr: result.stderr };
}

describe('the zx configuration', () => {
  it('pins shell, prefix, postfix, verbose, quiet, timeout and the rest after import', () => {
    expect($.shell).toBe(BASH);
    expect(BASH).toMatch(/\/bash$/);
    expect($.prefix).toBe(STRICT_PREFIX);
    expect($.postfix).toBe('');
    expect($.verbose).toBe(false);
    expect($.quiet).toBe(true);
    expect($.nothrow).toBe(true);
    expect($.detached).toBe(true);
    expect($.preferLocal).toBe(false);
    expect($.timeout).toBeUndefined();
  });

  it('ignores ZX_* variables in the environment (no injection, echo, timeout or other folder) and leaves promise hooks off', () => {
    const dir = temp();
    mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
    // ZX_PREFER_LOCAL would put this `echo` first on PATH.
    writeFileSync(path.join(dir, 'node_modules', '.bin', 'echo'), '#!/bin/sh\ntouch pwned-local\n');
    chmodSync(path.join(dir, 'node_modules', '.bin', 'echo'), 0o755);
    const code = `
      import { $ } from ${JSON.stringify(path.join(PROJECT, 'lib/process/zx.ts'))};
      import { runCommand, runShellText } from ${JSON.stringify(path.join(PROJECT, 'lib/process/helper.ts'))};
      const options = { cwd: ${JSON.stringify(dir)} };
      const value = 'a $(touch pwned-value) \`touch pwned-tick\` "q" \\'s\\'';
      const echoed = await runCommand('echo', [value], options);
      const slow = await runCommand('sleep', ['0.3'], options);
      const text = await runShellText('pwd', options);
      // Promise hooks stay off (only global $ options are used): an await continuation has no async id.
      const { executionAsyncId } = await import('node:async_hooks');
      await null;
      const asyncId = executionAsyncId();
      console.log(JSON.stringify({ shell: $.shell, prefix: $.prefix, verbose: $.verbose, quiet: $.quiet, echoed, slow, text, value, asyncId }));
    `;
    const { stdout, stderr } = runScript(dir, code, { ...process.env, ...HOSTILE_ZX_ENV });
    const seen = JSON.parse(stdout) as Record<string, any>;
    expect(seen.shell).toBe(BASH);
    expect(seen.prefix).toBe(STRICT_PREFIX);
    expect([seen.verbose, seen.quiet]).toEqual([false, true]);
    // The value arrived as one argument, byte for byte, and nothing in it ran.
    expect(seen.echoed).toMatchObject({ exitCode: 0, stdout: `${seen.value}\n`, stderr: '' });
    // ZX_TIMEOUT=50 did not cut a 300 ms command short; ZX_CWD=/ did not move it.
    expect(seen.slow).toMatchObject({ exitCode: 0, end: 'exit' });
    expect(seen.text).toMatchObject({ exitCode: 0, stdout: `${dir}\n` });
    expect(seen.asyncId).toBe(0);
    expect(readdirSync(dir).filter((name) => name.startsWith('pwned'))).toEqual([]);
    // No command echo on stderr.
    expect(stderr).toBe('');
  });
});

describe('helperEnv', () => {
  const env = { PATH: '/usr/bin', BASH_ENV: '/x', ENV: '/y', SHELLOPTS: 'xtrace', BASHOPTS: 'extglob', 'BASH_FUNC_bd%%': '() { touch x; }', KEEP: '1' };

  it("drops what makes bash run or print something of its own, and exported functions for ralph's commands", () => {
    expect(helperEnv(env, true)).toEqual({ PATH: '/usr/bin', KEEP: '1' });
  });

  it("keeps the user's exported functions for their own gate and hook text", () => {
    expect(helperEnv(env, false)).toEqual({ PATH: '/usr/bin', 'BASH_FUNC_bd%%': '() { touch x; }', KEEP: '1' });
  });

  it('does not change the environment it was given', () => {
    const before = { ...env };
    helperEnv(env, true);
    expect(env).toEqual(before);
  });
});

describe('findOnPath (zx which)', () => {
  /** A bin folder with an executable, a plain file, a folder and a symlink. */
  function binDir(): string {
    const bin = path.join(temp(), 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'tool'), '#!/bin/sh\n');
    chmodSync(path.join(bin, 'tool'), 0o755);
    writeFileSync(path.join(bin, 'plain'), 'not executable');
    mkdirSync(path.join(bin, 'folder'));
    symlinkSync(path.join(bin, 'tool'), path.join(bin, 'linked'));
    return bin;
  }

  it('finds an executable on the given PATH', () => {
    const bin = binDir();
    expect(findOnPath('tool', { PATH: `/nonexistent:${bin}` })).toBe(path.join(bin, 'tool'));
    expect(findOnPath('linked', { PATH: bin })).toBe(path.join(bin, 'linked'));
  });

  it('finds nothing that is missing, not executable, a folder, or on an empty PATH', () => {
    const bin = binDir();
    expect(findOnPath('missing', { PATH: bin })).toBeUndefined();
    expect(findOnPath('plain', { PATH: bin })).toBeUndefined();
    expect(findOnPath('folder', { PATH: bin })).toBeUndefined();
    // zx's which would fall back to ralph's own PATH here.
    expect(findOnPath('sh', {})).toBeUndefined();
    expect(findOnPath('sh', { PATH: '' })).toBeUndefined();
  });

  it('takes a path with a slash as it is', () => {
    const bin = binDir();
    expect(findOnPath(path.join(bin, 'tool'), {})).toBe(path.join(bin, 'tool'));
    expect(existsSync(path.join(bin, 'plain'))).toBe(true);
    expect(findOnPath(path.join(bin, 'plain'), {})).toBeUndefined();
  });
});
