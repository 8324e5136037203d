import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockHeldError, RalphError } from '../../../lib/errors.ts';
import { acquireLock, formatLockInfo, inspectLock, parseLockInfo, readLockInfo, refuseIfHeld } from '../../../lib/repo/lock.ts';
import { judgeLock, type LockEvidence, type LockVerdict } from '../../../lib/repo/lock-verdict.ts';
import { processStart } from '../../../lib/process/process-tree.ts';
import { stopProcess, unrelatedProcess } from '../../support/processes.ts';
import { tempDir } from '../../support/temp.ts';

const temp = () => tempDir('ralph-lock-');
const options = (root: string, warnings: string[] = [], now = new Date()) => ({ root, branch: '001-x', now, warn: (m: string) => warnings.push(m), onCompromised: () => undefined });
const lockFile = (root: string) => path.join(root, '.ralph.lock');
const lockDir = (root: string) => path.join(root, '.ralph.lock.d');
const writeLock = (root: string, pid: number, startedAt: string) => writeFileSync(lockFile(root), formatLockInfo({ pid, startedAt, branch: 'main' }));
/** The lock directory as a run leaves it, its heartbeat `ageMs` old. */
function heartbeat(root: string, ageMs: number): void {
  mkdirSync(lockDir(root), { recursive: true });
  const at = new Date(Date.now() - ageMs);
  utimesSync(lockDir(root), at, at);
}

/** The RalphError an acquire that must fail throws. */
async function refusal(acquiring: Promise<unknown>): Promise<RalphError> {
  const error = await acquiring.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RalphError);
  return error as RalphError;
}

describe('judgeLock', () => {
  const T = Date.parse('2026-11-22T02:00:00.000Z');
  const info = { pid: 4242, startedAt: new Date(T).toISOString(), branch: 'main' };
  const running = { alive: true, startedAtMs: T - 1500, state: 'S' };
  const reused = 'PID 4242 now belongs to a process started 2026-11-22T03:00:00.000Z, after the lock was taken';
  const cases: Array<[string, LockEvidence, LockVerdict]> = [
    ['no lock', { file: false }, { held: false, stale: false }],
    ['holder not known yet: a fresh directory, .ralph.lock not written', { file: false, heartbeatAgeMs: 2000 }, { held: true, stale: false, reason: 'its holder is starting up' }],
    ['a directory nobody refreshes, no holder named', { file: false, heartbeatAgeMs: 300_000 }, { held: false, stale: true, reason: 'the lock names no process and has not been refreshed for 5m 00s' }],
    ['a .ralph.lock naming no PID, no directory', { file: true }, { held: false, stale: true, reason: 'the lock names no process' }],
    ['the holder is gone', { file: true, info, heartbeatAgeMs: 2000, holder: { alive: false } }, { held: false, stale: true, reason: 'PID 4242 is gone' }],
    ['the holder exited, a zombie not yet reaped', { file: true, info, heartbeatAgeMs: 2000, holder: { ...running, state: 'Z' } }, { held: false, stale: true, reason: 'PID 4242 is gone' }],
    ['the holder started before the lock, heartbeat fresh', { file: true, info, heartbeatAgeMs: 2000, holder: running }, { held: true, stale: false, verified: true }],
    ['the holder started before the lock, no directory (a lock written by ralph.sh)', { file: true, info, holder: running }, { held: true, stale: false, verified: true }],
    ['the holder started within the tolerance after the lock time', { file: true, info, holder: { ...running, startedAtMs: T + 1900 } }, { held: true, stale: false, verified: true }],
    ['the PID was reused: started after the lock, no directory', { file: true, info, holder: { ...running, startedAtMs: T + 3_600_000 } }, { held: false, stale: true, reason: reused }],
    ['the PID was reused: started after the lock, heartbeat old', { file: true, info, heartbeatAgeMs: 90_000, holder: { ...running, startedAtMs: T + 3_600_000 } }, { held: false, stale: true, reason: reused }],
    ['the PID was reused by a stopped process', { file: true, info, holder: { ...running, startedAtMs: T + 3_600_000, state: 'T' } }, { held: false, stale: true, reason: reused }],
    ['started after the lock, but the heartbeat is fresh (a clock step?): watch it', { file: true, info, heartbeatAgeMs: 2000, holder: { ...running, startedAtMs: T + 3_600_000 } }, { held: true, stale: false, reason: `${reused}, but its heartbeat is fresh`, watch: true }],
    ['started after the lock, and the fresh heartbeat stood still while watched', { file: true, info, heartbeatAgeMs: 9000, still: true, holder: { ...running, startedAtMs: T + 3_600_000 } }, { held: false, stale: true, reason: `${reused}, and its heartbeat did not move in 7s` }],
    ['a running holder whose heartbeat stopped: watch it', { file: true, info, heartbeatAgeMs: 180_000, holder: running }, { held: false, stale: true, reason: 'PID 4242 has not refreshed its heartbeat for 3m 00s', watch: true }],
    ['a running holder whose heartbeat stood still while watched', { file: true, info, heartbeatAgeMs: 187_000, still: true, holder: running }, { held: false, stale: true, reason: 'PID 4242 has not refreshed its heartbeat for 3m 07s, nor while watched for 7s' }],
    ['a stopped holder (Ctrl+Z) keeps its lock, heartbeat or not', { file: true, info, heartbeatAgeMs: 3_600_000, holder: { ...running, state: 'T' } }, { held: true, stale: false, verified: true, reason: 'PID 4242 is stopped (Ctrl+Z?), and a suspended run keeps its lock' }],
    ['a holder stopped by a debugger keeps its lock', { file: true, info, heartbeatAgeMs: 3_600_000, holder: { ...running, state: 't' } }, { held: true, stale: false, verified: true, reason: 'PID 4242 is stopped (Ctrl+Z?), and a suspended run keeps its lock' }],
    ['no /proc (macOS): alive is held, even with an old heartbeat', { file: true, info, heartbeatAgeMs: 3_600_000, holder: { alive: true } }, { held: true, stale: false, verified: false }],
    ['a lock time that is not a time: alive is held, unverified', { file: true, info: { ...info, startedAt: 'yesterday' }, heartbeatAgeMs: 2000, holder: running }, { held: true, stale: false, verified: false }],
  ];
  it.each(cases)('%s', (_name, evidence, verdict) => {
    expect(judgeLock(evidence)).toEqual(verdict);
  });
});

describe('inspectLock and acquireLock, with the OS as the witness', () => {
  it('a PID reused by a process started after the lock was taken: stale whatever its command line, and reclaimed', async () => {
    const root = temp();
    const taken = new Date(Date.now() - 60_000).toISOString();
    // A node process: the command line check ralph used to make (ralph|tsx|node|bash|sh) took it for a run.
    const pid = unrelatedProcess([process.execPath, '-e', 'setTimeout(() => {}, 30_000)']);
    writeLock(root, pid, taken);
    const state = inspectLock(root);
    expect(state).toMatchObject({ held: false, stale: true, info: { pid, startedAt: taken } });
    expect(state.reason).toMatch(new RegExp(`^PID ${pid} now belongs to a process started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, after the lock was taken$`));

    const warnings: string[] = [];
    const lock = await acquireLock(options(root, warnings));
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^reclaiming a stale lock ${lockFile(root)} \\(PID ${pid}, started ${taken}, branch main\\): PID ${pid} now belongs to a process started [\\d:.TZ-]+, after the lock was taken$`))]);
    expect(readLockInfo(root)?.pid).toBe(process.pid);
    // Reclaiming takes the lock; it never touches the process that now has the PID.
    expect(processStart(pid)).toBeDefined();
    await lock.release();
  });

  it('a lock taken after its holder started is held, and the refusal says which PID to kill', async () => {
    const root = temp();
    const pid = unrelatedProcess();
    const taken = new Date().toISOString();
    writeLock(root, pid, taken);
    heartbeat(root, 1000);
    expect(inspectLock(root)).toEqual({ held: true, stale: false, verified: true, info: { pid, startedAt: taken, branch: 'main' }, heartbeatAgeMs: expect.any(Number) });
    const error = await refusal(acquireLock(options(root)));
    expect(error.message).toBe(`another ralph holds ${lockFile(root)} (PID ${pid}, started ${taken}, branch main)`);
    expect(error.hint).toBe(`wait for it to finish, or stop it (kill ${pid}); 'ralph status' shows what it is doing`);
    expect(readLockInfo(root)?.pid).toBe(pid);
  });

  it('a stopped holder (Ctrl+Z) keeps its lock though its heartbeat is old', async () => {
    const root = temp();
    const pid = unrelatedProcess();
    writeLock(root, pid, new Date().toISOString());
    heartbeat(root, 10 * 60_000);
    await stopProcess(pid);
    expect(inspectLock(root)).toMatchObject({ held: true, stale: false, reason: `PID ${pid} is stopped (Ctrl+Z?), and a suspended run keeps its lock` });
    const sleeps: number[] = [];
    await expect(acquireLock({ ...options(root), sleep: async (ms) => void sleeps.push(ms) })).rejects.toThrow(`another ralph holds ${lockFile(root)} (PID ${pid}`);
    expect(sleeps).toEqual([]);
    expect(existsSync(lockDir(root))).toBe(true);
  });

  it('a running holder whose heartbeat stopped: the lock is stale, reclaimed once the heartbeat stood still for a beat', async () => {
    const root = temp();
    const pid = unrelatedProcess();
    writeLock(root, pid, new Date().toISOString());
    heartbeat(root, 5 * 60_000);
    expect(inspectLock(root)).toMatchObject({ held: false, stale: true, watch: true, reason: `PID ${pid} has not refreshed its heartbeat for 5m 00s` });
    const warnings: string[] = [];
    const sleeps: number[] = [];
    const lock = await acquireLock({ ...options(root, warnings), sleep: async (ms) => void sleeps.push(ms) });
    expect(sleeps).toEqual([7000]);
    expect(warnings[0]).toBe(`${lockFile(root)}: PID ${pid} has not refreshed its heartbeat for 5m 00s; watching the heartbeat for 7s`);
    expect(warnings[1]).toMatch(new RegExp(`^reclaiming a stale lock .*: PID ${pid} has not refreshed its heartbeat for 5m 0\\ds, nor while watched for 7s$`));
    expect(readLockInfo(root)?.pid).toBe(process.pid);
    await lock.release();
  });

  it('a heartbeat that moves while it is watched keeps the lock', async () => {
    const root = temp();
    const pid = unrelatedProcess();
    writeLock(root, pid, new Date().toISOString());
    heartbeat(root, 5 * 60_000);
    // The holder's machine slept: its next beat comes within one update interval of waking.
    await expect(acquireLock({ ...options(root), sleep: async () => heartbeat(root, 0) })).rejects.toThrow(`another ralph holds ${lockFile(root)} (PID ${pid}`);
    expect(readLockInfo(root)?.pid).toBe(pid);
  });

  it('a fresh heartbeat outweighs a late start until it stands still; the refusal then never says kill', async () => {
    const root = temp();
    const pid = unrelatedProcess();
    const taken = new Date(Date.now() - 60_000).toISOString();
    writeLock(root, pid, taken);
    heartbeat(root, 1000);
    expect(inspectLock(root)).toMatchObject({ held: true, stale: false, watch: true, reason: expect.stringMatching(/, but its heartbeat is fresh$/) });
    const error = await refusal(acquireLock({ ...options(root), sleep: async () => heartbeat(root, 0) }));
    expect(error.message).toBe(`another ralph holds ${lockFile(root)} (PID ${pid}, started ${taken}, branch main)`);
    expect(error.hint).toMatch(/, but its heartbeat is fresh; wait for it to finish, or stop it with 'ralph stop'; 'ralph status' shows what it is doing$/);
    expect(error.hint).not.toContain('kill');

    const warnings: string[] = [];
    const lock = await acquireLock({ ...options(root, warnings), sleep: async () => undefined });
    expect(warnings[1]).toMatch(/, and its heartbeat did not move in 7s$/);
    await lock.release();
  });

  it('holder not known yet (a fresh lock directory, .ralph.lock not written): held; the refusal names the holder once it writes', async () => {
    const root = temp();
    heartbeat(root, 0);
    expect(inspectLock(root)).toMatchObject({ held: true, stale: false, reason: 'its holder is starting up' });
    const pid = unrelatedProcess();
    const refused = acquireLock(options(root));
    // The holder writes who it is a moment after taking the directory; the refusal waits for it.
    writeLock(root, pid, new Date().toISOString());
    await expect(refused).rejects.toThrow(`another ralph holds ${lockFile(root)} (PID ${pid}, started `);
    expect(existsSync(lockDir(root))).toBe(true);
  });

  it('a fresh lock directory whose run died before writing .ralph.lock (kill -9 in between): its heartbeat stands still while watched, and the lock is reclaimed', async () => {
    const root = temp();
    heartbeat(root, 0);
    const warnings: string[] = [];
    const lock = await acquireLock({ ...options(root, warnings), sleep: async () => undefined });
    expect(warnings[0]).toMatch(/the lock names no process yet; watching the heartbeat for 7s$/);
    expect(warnings[1]).toMatch(/^reclaiming a stale lock .*: the lock names no process and has not been refreshed for .*, nor while watched for 7s$/);
    expect(readFileSync(lockFile(root), 'utf8').split('\n')[0]).toBe(String(process.pid));
    await lock.release();
  });
});

describe('acquireLock', () => {
  it('writes PID, ISO time and branch, holds the lock directory, and removes both on release', async () => {
    const root = temp();
    const lock = await acquireLock(options(root, [], new Date('2026-11-22T02:00:00Z')));
    expect(readFileSync(lockFile(root), 'utf8')).toBe(`${process.pid}\n2026-11-22T02:00:00.000Z\n001-x\n`);
    expect(existsSync(lockDir(root))).toBe(true);
    await lock.release();
    expect(existsSync(lockFile(root))).toBe(false);
    expect(existsSync(lockDir(root))).toBe(false);
    expect(inspectLock(root)).toEqual({ held: false, stale: false });
  });

  it('refuses a second holder, naming the first', async () => {
    const root = temp();
    // A live process that is not this one and started before the lock: the parent (vitest's main process or the shell).
    const taken = new Date().toISOString();
    writeLock(root, process.ppid, taken);
    await expect(acquireLock(options(root))).rejects.toThrow(`another ralph holds ${root}/.ralph.lock (PID ${process.ppid}, started ${taken}, branch main)`);
  });

  it('reclaims a lock whose process is gone, with a warning', async () => {
    const root = temp();
    writeFileSync(lockFile(root), '999999\n2026-11-22T01:00:00.000Z\nold\n');
    heartbeat(root, 1000);
    const warnings: string[] = [];
    const lock = await acquireLock(options(root, warnings));
    expect(warnings).toEqual([`reclaiming a stale lock ${lockFile(root)} (PID 999999, started 2026-11-22T01:00:00.000Z, branch old): PID 999999 is gone`]);
    expect(parseLockInfo(readFileSync(lockFile(root), 'utf8'))?.pid).toBe(process.pid);
    await lock.release();
  });

  it.each([
    ['with its lock directory', true],
    ['a .ralph.lock alone', false],
  ])('another run that reclaimed the same stale lock (%s) first keeps it: this one is refused by the lock directory', async (_name, withDir) => {
    const root = temp();
    writeLock(root, 999_999, '2026-11-22T01:00:00.000Z');
    if (withDir) heartbeat(root, 10 * 60_000);
    const other = unrelatedProcess();
    const otherTaken = new Date().toISOString();
    // Both judged the lock stale; the other run reclaims it and takes the lock between this run's verdict
    // and its reclaim (the warning comes at that moment): a fresh directory and its own .ralph.lock.
    const warn = (): void => {
      rmSync(lockDir(root), { recursive: true, force: true });
      heartbeat(root, 0);
      writeLock(root, other, otherTaken);
    };
    await expect(acquireLock({ ...options(root), warn })).rejects.toThrow(`another ralph holds ${lockFile(root)} (PID ${other}, started ${otherTaken}, branch main)`);
    expect(existsSync(lockDir(root))).toBe(true);
    expect(readLockInfo(root)?.pid).toBe(other);
    expect(inspectLock(root)).toMatchObject({ held: true, verified: true });
  });
});

describe("the lock's own exits", () => {
  // Another run took the lock over (this one was judged stale while it hung): its three lines are not ours to remove.
  it.each(['release', 'releaseSync'] as const)('%s() leaves a .ralph.lock another run wrote in place', async (how) => {
    const root = temp();
    const lock = await acquireLock(options(root));
    const other = formatLockInfo({ pid: process.ppid, startedAt: new Date().toISOString(), branch: 'other' });
    writeFileSync(lockFile(root), other);
    if (how === 'release') await lock.release();
    else lock.releaseSync();
    expect(readFileSync(lockFile(root), 'utf8')).toBe(other);
  });

  it.each(['release', 'releaseSync'] as const)('%s() leaves the lock directory of a run that reclaimed the lock in place, and its .ralph.lock', async (how) => {
    const root = temp();
    const lock = await acquireLock(options(root));
    // The other run judged this one stale (it hung past the heartbeat), moved its directory aside and took the lock.
    renameSync(lockDir(root), `${lockDir(root)}.aside`);
    mkdirSync(lockDir(root));
    const theirs = statSync(lockDir(root)).ino;
    rmSync(`${lockDir(root)}.aside`, { recursive: true });
    const other = formatLockInfo({ pid: process.ppid, startedAt: new Date().toISOString(), branch: 'other' });
    writeFileSync(lockFile(root), other);
    if (how === 'release') await lock.release();
    else lock.releaseSync();
    expect(statSync(lockDir(root), { throwIfNoEntry: false })?.ino).toBe(theirs);
    expect(readFileSync(lockFile(root), 'utf8')).toBe(other);
  });

  it.each(['release', 'releaseSync'] as const)('%s() removes its own .ralph.lock and lock directory, and a second call does nothing', async (how) => {
    const root = temp();
    const lock = await acquireLock(options(root));
    if (how === 'release') await lock.release();
    else lock.releaseSync();
    expect(existsSync(lockFile(root))).toBe(false);
    expect(existsSync(lockDir(root))).toBe(false);
    // A later run takes the lock; a second release of the first one must not touch it.
    const next = await acquireLock(options(root));
    if (how === 'release') await lock.release();
    else lock.releaseSync();
    expect(readLockInfo(root)?.pid).toBe(process.pid);
    expect(existsSync(lockDir(root))).toBe(true);
    await next.release();
  });

  it('.ralph.lock cannot be written (a folder stands there): the lock directory goes too, so the next run is not refused', async () => {
    const root = temp();
    mkdirSync(path.join(lockFile(root), 'in-the-way'), { recursive: true });
    const error = await acquireLock(options(root)).then(() => undefined, (caught: unknown) => caught);
    // One line naming .ralph.lock (not the temp file beside it that could not be renamed).
    expect(error).toBeInstanceOf(RalphError);
    expect((error as RalphError).message).toMatch(new RegExp(`^(a folder stands where a file should be: cannot replace ${lockFile(root)} \\(EISDIR\\)|cannot write the lock ${lockFile(root)}: .*)$`));
    expect(existsSync(lockDir(root))).toBe(false);
    // Once the folder is moved away, the next run takes the lock without a stale lock to reclaim.
    rmSync(lockFile(root), { recursive: true });
    const warnings: string[] = [];
    const lock = await acquireLock(options(root, warnings));
    expect(warnings).toEqual([]);
    await lock.release();
  });
});

describe('refuseIfHeld (before a run prepares anything)', () => {
  it('refuses a live holder with the same words as acquireLock, and lets a free, stale or doubtful lock through', () => {
    const root = temp();
    refuseIfHeld(root);
    const pid = unrelatedProcess();
    const taken = new Date().toISOString();
    writeLock(root, pid, taken);
    heartbeat(root, 1000);
    expect(() => refuseIfHeld(root)).toThrow(LockHeldError);
    expect(() => refuseIfHeld(root)).toThrow(`another ralph holds ${lockFile(root)} (PID ${pid}, started ${taken}, branch main)`);
    // A late start against a fresh heartbeat: acquireLock watches it first, so this does not decide.
    writeLock(root, pid, new Date(Date.now() - 60_000).toISOString());
    refuseIfHeld(root);
    writeLock(root, 999_999, taken);
    refuseIfHeld(root);
  });

  it('lets a fresh lock directory with no .ralph.lock through (a run killed before writing it): acquireLock watches its heartbeat', () => {
    const root = temp();
    heartbeat(root, 0);
    expect(inspectLock(root)).toMatchObject({ held: true, stale: false, reason: 'its holder is starting up' });
    expect(() => refuseIfHeld(root)).not.toThrow();
  });
});

describe('lock file format', () => {
  it('round-trips the three lines of .ralph.lock.example', () => {
    const example = readFileSync(path.join(__dirname, '..', '..', '..', '.ralph.lock.example'), 'utf8');
    const info = parseLockInfo(example);
    expect(info).toBeDefined();
    expect(formatLockInfo(info!)).toBe(example);
    expect(parseLockInfo('not a pid\n')).toBeUndefined();
  });
});
