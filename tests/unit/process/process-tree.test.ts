import { chmodSync, copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processStart } from '../../../lib/process/process-tree.ts';
import { stopProcess, unrelatedProcess } from '../../support/processes.ts';
import { tempDir } from '../../support/temp.ts';

describe('processStart', () => {
  it('reads when this process started, never late', () => {
    const start = processStart(process.pid)!;
    const fromUptime = Date.now() - process.uptime() * 1000;
    // Node's uptime starts a moment after the exec; btime's rounding makes /proc's reading early, never late.
    expect(start.startedAtMs).toBeLessThanOrEqual(fromUptime + 50);
    expect(start.startedAtMs).toBeGreaterThan(fromUptime - 3000);
    expect(start.state).toBe('R');
    expect(processStart(999_999)).toBeUndefined();
  });

  it('parses a command name holding spaces and parentheses, and sees a stopped process', async () => {
    const odd = path.join(tempDir('ralph-process-tree-'), 'a) b (c');
    copyFileSync('/bin/sleep', odd);
    chmodSync(odd, 0o755);
    const before = Date.now();
    const pid = unrelatedProcess([odd, '30']);
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toContain('(a) b (c)');
    const start = processStart(pid)!;
    expect(start).toMatchObject({ state: expect.stringMatching(/^[RS]$/) });
    expect(start.startedAtMs).toBeGreaterThan(before - 1500);
    expect(start.startedAtMs).toBeLessThanOrEqual(Date.now());
    await stopProcess(pid);
    expect(processStart(pid)).toEqual({ ...start, state: 'T' });
  });
});
