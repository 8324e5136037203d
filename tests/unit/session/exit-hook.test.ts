import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Output } from '../../../lib/deps.ts';
import { runOnExitHook, type ExitHookEnv } from '../../../lib/session/exit-hook.ts';
import { processAliveNotZombie } from '../../../lib/process/process-tree.ts';
import { tempDir } from '../../support/temp.ts';

const temp = () => tempDir('ralph-hook-');
const collect = (): Output & { text: string } => {
  const out = { text: '', write: (chunk: string) => (out.text += chunk) };
  return out;
};
const vars: ExitHookEnv = { RALPH_STATUS: 'completed', RALPH_EXIT_CODE: '0', RALPH_REPORT: '/repo/.ralph/reports/x.md', RALPH_SESSION: '20261122-020000' };
const node = JSON.stringify(process.execPath);

describe('runOnExitHook', () => {
  it('gives the hook the RALPH_* variables, through a shell, in the given folder', async () => {
    const dir = temp();
    const probe = "const k=['RALPH_STATUS','RALPH_EXIT_CODE','RALPH_REPORT','RALPH_SESSION','KEEP'];require('fs').writeFileSync('env.json',JSON.stringify(Object.fromEntries(k.map((n)=>[n,process.env[n]]))))";
    const stderr = collect();
    const result = await runOnExitHook(`${node} -e "${probe}" && echo "hook saw $RALPH_STATUS"`, vars, dir, 10_000, { baseEnv: { ...process.env, KEEP: 'yes' }, stderr });
    expect(result).toMatchObject({ ok: true, exitCode: 0, timedOut: false });
    expect(JSON.parse(readFileSync(path.join(dir, 'env.json'), 'utf8'))).toEqual({ ...vars, KEEP: 'yes' });
    // The hook's stdout goes to ralph's stderr (stdout is for results).
    expect(stderr.text).toBe('hook saw completed\n');
  });

  it('never throws: a failing hook is one warning line', async () => {
    const stderr = collect();
    const result = await runOnExitHook('echo oops >&2; exit 3', vars, temp(), 10_000, { stderr });
    expect(result).toMatchObject({ ok: false, exitCode: 3, timedOut: false });
    expect(stderr.text).toBe('oops\nralph: warning: on-exit hook "echo oops >&2; exit 3" exited with 3\n');
  });

  it('stops a hook that outlives its timeout', async () => {
    const stderr = collect();
    const started = Date.now();
    const result = await runOnExitHook('sleep 30', vars, temp(), 300, { stderr });
    expect(result).toMatchObject({ ok: false, timedOut: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(stderr.text).toMatch(/on-exit hook "sleep 30" timed out/);
  });

  it('ends a timed-out hook with its whole tree, a SIGTERM-ignoring grandchild included', async () => {
    const dir = temp();
    const pidFile = path.join(dir, 'pids');
    const stubborn = path.join(path.dirname(new URL(import.meta.url).pathname), '../../fixtures/process/stubborn-tree.mjs');
    const result = await runOnExitHook(`${node} ${JSON.stringify(stubborn)} ${JSON.stringify(pidFile)} --ignore-term`, vars, dir, 3000, { stderr: collect() });
    expect(result).toMatchObject({ ok: false, timedOut: true });
    const pids = readFileSync(pidFile, 'utf8').split(' ').map(Number);
    expect(pids.filter((pid) => processAliveNotZombie(pid))).toEqual([]);
  });

  it('runs the hook without sourcing BASH_ENV', async () => {
    const dir = temp();
    writeFileSync(path.join(dir, 'startup.sh'), 'echo sourced; touch bash-env-ran\n');
    const stderr = collect();
    const result = await runOnExitHook('echo "status $RALPH_STATUS"', vars, dir, 10_000, { baseEnv: { ...process.env, BASH_ENV: path.join(dir, 'startup.sh'), ENV: path.join(dir, 'startup.sh') }, stderr });
    expect(result.ok).toBe(true);
    expect(stderr.text).toBe('status completed\n');
    expect(existsSync(path.join(dir, 'bash-env-ran'))).toBe(false);
  });

  it('reports a folder that does not exist instead of throwing', async () => {
    const stderr = collect();
    const result = await runOnExitHook('true', vars, path.join(temp(), 'missing'), 10_000, { stderr });
    expect(result.ok).toBe(false);
    expect(stderr.text).toMatch(/^ralph: warning: on-exit hook "true" could not start/);
  });
});
