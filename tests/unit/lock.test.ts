import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, formatLockInfo, inspectLock, parseLockInfo } from '../../lib/lock.ts';
import { tempDir } from '../support/temp.ts';

const temp = () => tempDir('ralph-lock-');
const options = (root: string, warnings: string[] = []) => ({ root, branch: '001-x', now: new Date('2026-11-22T02:00:00Z'), warn: (m: string) => warnings.push(m), onCompromised: () => undefined });

describe('lock file format', () => {
  it('round-trips the three lines of .ralph.lock.example', () => {
    const example = readFileSync(path.join(__dirname, '..', '..', '.ralph.lock.example'), 'utf8');
    const info = parseLockInfo(example);
    expect(info).toBeDefined();
    expect(formatLockInfo(info!)).toBe(example);
    expect(parseLockInfo('not a pid\n')).toBeUndefined();
  });
});

describe('acquireLock', () => {
  it('writes PID, ISO time and branch and removes them on release', async () => {
    const root = temp();
    const lock = await acquireLock(options(root));
    expect(readFileSync(path.join(root, '.ralph.lock'), 'utf8')).toBe(`${process.pid}\n2026-11-22T02:00:00.000Z\n001-x\n`);
    await lock.release();
    expect(existsSync(path.join(root, '.ralph.lock'))).toBe(false);
    expect(inspectLock(root)).toEqual({ held: false, stale: false });
  });

  it('refuses a second holder, naming the first', async () => {
    const root = temp();
    // A live process that is not this one: the parent (vitest's main process or the shell).
    writeFileSync(path.join(root, '.ralph.lock'), `${process.ppid}\n2026-11-22T01:00:00.000Z\nmain\n`);
    await expect(acquireLock(options(root))).rejects.toThrow(`another ralph holds ${root}/.ralph.lock (PID ${process.ppid}, started 2026-11-22T01:00:00.000Z, branch main)`);
  });

  it('reclaims a lock whose process is gone, with a warning', async () => {
    const root = temp();
    writeFileSync(path.join(root, '.ralph.lock'), '999999\n2026-11-22T01:00:00.000Z\nold\n');
    const warnings: string[] = [];
    const lock = await acquireLock(options(root, warnings));
    expect(warnings[0]).toMatch(/reclaiming a stale lock .*PID 999999/);
    expect(parseLockInfo(readFileSync(path.join(root, '.ralph.lock'), 'utf8'))?.pid).toBe(process.pid);
    await lock.release();
  });

  it('refuses while the lock directory of another run is held', async () => {
    const root = temp();
    const first = await acquireLock(options(root));
    // Same process cannot detect itself through the PID; the lock directory still excludes it.
    await expect(acquireLock(options(root))).rejects.toThrow(/another ralph holds/);
    await first.release();
  });
});
