import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEndWatch } from '../../../lib/process/end-watch.ts';
import { tempDir } from '../../support/temp.ts';

const until = async (check: () => boolean): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('startEndWatch', () => {
  it('records the end once the last of the agent’s processes is gone, with no parent watching: a grandchild that writes after the leader counts', async () => {
    const dir = tempDir('ralph-end-watch-');
    const endFile = path.join(dir, 'end');
    const late = path.join(dir, 'late.txt');
    const watch = startEndWatch(endFile)!;
    // The leader exits at once; the grandchild it leaves (with the agent's fd 3, not its stdout) writes last.
    const agent = spawn('sh', ['-c', `(sleep 0.3; echo late > "${late}") >/dev/null 2>&1 & exit 0`], { stdio: ['ignore', 'ignore', 'ignore', watch.end], detached: true });
    watch.release();
    await new Promise((resolve) => agent.once('exit', resolve));
    expect(existsSync(endFile)).toBe(false);
    await until(() => existsSync(endFile));
    expect(existsSync(late)).toBe(true);
    expect(statSync(endFile, { bigint: true }).ctimeNs >= statSync(late, { bigint: true }).ctimeNs).toBe(true);
    await watch.stop();
  });

  it('stop() ends a watcher an escaped process holds open, at once', async () => {
    const dir = tempDir('ralph-end-watch-');
    const watch = startEndWatch(path.join(dir, 'end'))!;
    const agent = spawn('sleep', ['30'], { stdio: ['ignore', 'ignore', 'ignore', watch.end], detached: true });
    watch.release();
    const started = Date.now();
    await watch.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(existsSync(path.join(dir, 'end'))).toBe(false);
    agent.kill('SIGKILL');
  });
});
