// The runner's promises hold through bubblewrap: exit codes pass through, a timeout or an abort ends the
// whole tree (an escaped grandchild included) and the log keeps everything the agent wrote, even what it
// wrote while ending after SIGTERM.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess, type Command, type RunOptions } from '../../../lib/process/runner.ts';
import { wrapCommand, type BwrapPlan } from '../../../lib/sandbox/bwrap.ts';
import { needsTool } from '../../support/needs-tool.ts';
import { tempDir } from '../../support/temp.ts';
import { processesWith } from '../../support/processes.ts';

const bwrap = needsTool('bwrap', { apt: 'bubblewrap' });


async function settle(token: string): Promise<number[]> {
  for (let tries = 0; tries < 40; tries += 1) {
    if (processesWith(token).length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return processesWith(token);
}

// An agent that prints, starts a grandchild in its own session ignoring SIGTERM (escaping the group), and
// on SIGTERM takes 1.5 s before its last words: longer than the 1 s ralph waits for pipes after an exit.
const STUBBORN = `
const { spawn } = require('node:child_process');
spawn(process.execPath, ['-e', "process.on('SIGTERM',()=>{}); setInterval(()=>{},1000)"], { stdio: 'ignore', detached: true });
process.on('SIGTERM', () => setTimeout(() => { process.stdout.write('last words after SIGTERM\\n'); process.exit(0); }, 1500));
console.log('ready');
setInterval(() => {}, 1000);
`;

function sandboxed(cwd: string, script: string, token: string): Command {
  const plan: BwrapPlan = { network: false, underTmp: [], writable: [cwd], readOnly: [], writableAfter: [], hidden: [] };
  return wrapCommand(plan, cwd, { bin: process.execPath, args: ['-e', script], env: { RALPH_TEST_TOKEN: token } }, bwrap.bin());
}

function options(cwd: string, extra: Partial<RunOptions>): RunOptions {
  return { cwd, baseEnv: process.env, timeoutMs: 20_000, idleTimeoutMs: 0, graceMs: 4000, signal: new AbortController().signal, stdoutLog: path.join(cwd, 'out.log'), ...extra };
}

describe('runProcess under bwrap', () => {
  it.skipIf(bwrap.skip)(bwrap.title('passes the exit code through and leaves nothing behind, escaped grandchildren included'), async () => {
    const dir = tempDir('ralph-bwrap-');
    const token = randomUUID();
    const script = `require('node:child_process').spawn(process.execPath, ['-e', "setInterval(()=>{},1000)"], { stdio: 'ignore', detached: true }); console.log('done'); process.exit(7)`;
    const result = await runProcess(sandboxed(dir, script, token), options(dir, {}));
    expect(result).toMatchObject({ exitCode: 7, reason: 'exit' });
    expect(readFileSync(path.join(dir, 'out.log'), 'utf8')).toBe('done\n');
    expect(await settle(token)).toEqual([]);
  });

  it.skipIf(bwrap.skip)(bwrap.title('on timeout ends the whole tree after the grace period, keeping the last words in the log'), async () => {
    const dir = tempDir('ralph-bwrap-');
    const token = randomUUID();
    const lines: string[] = [];
    const result = await runProcess(sandboxed(dir, STUBBORN, token), options(dir, { timeoutMs: 1500, onLine: (line) => lines.push(line) }));
    expect(result.reason).toBe('timeout');
    expect(readFileSync(path.join(dir, 'out.log'), 'utf8')).toBe('ready\nlast words after SIGTERM\n');
    expect(lines).toEqual(['ready', 'last words after SIGTERM']);
    expect(await settle(token)).toEqual([]);
  });

  it.skipIf(bwrap.skip)(bwrap.title('on abort (Ctrl+C) does the same'), async () => {
    const dir = tempDir('ralph-bwrap-');
    const token = randomUUID();
    const controller = new AbortController();
    const running = runProcess(sandboxed(dir, STUBBORN, token), options(dir, { signal: controller.signal, onLine: (line) => line === 'ready' && controller.abort() }));
    const result = await running;
    expect(result.reason).toBe('aborted');
    expect(readFileSync(path.join(dir, 'out.log'), 'utf8')).toBe('ready\nlast words after SIGTERM\n');
    expect(await settle(token)).toEqual([]);
  });

  it.skipIf(bwrap.skip)(bwrap.title('SIGKILLs an agent that ignores SIGTERM once the grace period is over'), async () => {
    const dir = tempDir('ralph-bwrap-');
    const token = randomUUID();
    const script = `process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);`;
    const started = Date.now();
    const result = await runProcess(sandboxed(dir, script, token), options(dir, { timeoutMs: 500, graceMs: 1000 }));
    expect(result.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await settle(token)).toEqual([]);
  });
});
