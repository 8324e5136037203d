// Running the programs under test: wall time, a hard time limit on the whole process group, and
// ralph's own node process found under tsx (for its memory).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

export interface TimedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  wallMs: number;
  /** stdout when it was not sent to a file (at most 1 MiB kept). */
  stdout: string;
  /** The last 16 KiB of stderr. */
  stderrTail: string;
  timedOut: boolean;
}

export interface TimedOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The whole process group is SIGKILLed after this long. */
  timeoutMs: number;
  stdoutFile?: string;
  stderrFile?: string;
  onStart?: (pid: number) => void;
}

const KEEP_STDOUT = 1024 * 1024;
const KEEP_STDERR = 16 * 1024;
/** Process groups started by runTimed and still running, for killRunning(). */
const running = new Set<number>();

/** SIGKILLs every process group runTimed started that is still running (bench interrupted or out of time). */
export function killRunning(): void {
  for (const pid of running) killGroup(pid);
  running.clear();
}

/** The last `bytes` of a file as text ('' when it cannot be read). */
function tailOf(file: string, bytes: number): string {
  try {
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.min(bytes, size));
      readSync(fd, buffer, 0, buffer.length, size - buffer.length);
      return buffer.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

/**
 * Runs a command in its own process group and measures its wall time; never throws for a failed child.
 * Output sent to a file goes there directly (the child's fd), so this process never slows the child down.
 */
export function runTimed(bin: string, args: readonly string[], options: TimedOptions): Promise<TimedRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const outFd = options.stdoutFile ? openSync(options.stdoutFile, 'w') : undefined;
    const errFd = options.stderrFile ? openSync(options.stderrFile, 'w') : undefined;
    const child = spawn(bin, [...args], { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', outFd ?? 'pipe', errFd ?? 'pipe'] });
    for (const fd of [outFd, errFd]) if (fd !== undefined) closeSync(fd);
    let stdout = '';
    let stderrTail = '';
    let timedOut = false;
    child.stdout?.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString('utf8')).slice(0, KEEP_STDOUT)));
    child.stderr?.on('data', (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString('utf8')).slice(-KEEP_STDERR)));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    if (child.pid !== undefined) {
      running.add(child.pid);
      options.onStart?.(child.pid);
    }
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (child.pid !== undefined) running.delete(child.pid);
      // Anything the program left behind in its group goes too: a benchmark must not leak processes.
      killGroup(child.pid);
      if (options.stderrFile) stderrTail = tailOf(options.stderrFile, KEEP_STDERR);
      resolve({ code, signal, wallMs: performance.now() - started, stdout, stderrTail, timedOut });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Pids of the processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProc(Number(name), 'stat');
    if (!stat) continue;
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent === pid) found.push(Number(name));
  }
  return found;
}

/**
 * ralph's own node process: node_modules/.bin/tsx starts a child node that loads ralph.ts. Looks for the
 * process in `root`'s subtree whose command line names ralph.ts and is not tsx's cli.
 */
export function findRalphProcess(root: number): number | undefined {
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const cmdline = readProc(pid, 'cmdline')?.split('\0') ?? [];
    if (cmdline.some((arg) => arg.endsWith('ralph.ts')) && !cmdline.some((arg) => arg.endsWith('tsx/dist/cli.mjs') || arg.endsWith('.bin/tsx'))) return pid;
    queue.push(...childrenOf(pid));
  }
  return undefined;
}

/** A field of /proc/<pid>/status in bytes (VmHWM, VmRSS); undefined when the process is gone. */
function procStatusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readProc(pid, 'status') ?? '');
  return match ? Number(match[1]) * 1024 : undefined;
}

/** CPU time (user + system) a process has used so far, in ms; undefined when it is gone. Assumes 100 ticks/s. */
function procCpuMs(pid: number): number | undefined {
  const stat = readProc(pid, 'stat');
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Polls a process's peak RSS (VmHWM, which only grows) and its CPU time until it ends; `stop()` returns
 * the last readings (the CPU time of the last poll, up to `everyMs` before the end).
 */
export function watchPeakRss(findPid: () => number | undefined, everyMs = 50): { stop(): { peak: number; pid?: number; cpuMs?: number } } {
  let pid: number | undefined;
  let peak = 0;
  let cpuMs: number | undefined;
  const timer = setInterval(() => {
    pid ??= findPid();
    if (pid === undefined) return;
    const hwm = procStatusBytes(pid, 'VmHWM');
    if (hwm !== undefined) peak = Math.max(peak, hwm);
    cpuMs = procCpuMs(pid) ?? cpuMs;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { peak, pid, cpuMs };
    },
  };
}

/** The sha256 of a file, or of its bytes [start, end), read in 4 MiB pieces (a 1 GiB log is never held). */
export function sha256Of(file: string, range: { start: number; end: number } = { start: 0, end: Number.POSITIVE_INFINITY }): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    if (range.end <= range.start) return resolve(hash.digest('hex'));
    createReadStream(file, { highWaterMark: 4 * 1024 * 1024, start: range.start, ...(Number.isFinite(range.end) ? { end: range.end - 1 } : {}) })
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Runs ralph (`command args`, through tsx) while watching its own node process, the child whose command
 * line names ralph.ts: the run, that process's peak RSS (VmHWM) and CPU time.
 */
export async function runWatched(command: string, args: readonly string[], options: TimedOptions): Promise<{ run: TimedRun; peak: number; pid?: number; cpuMs?: number }> {
  let tsxPid: number | undefined;
  const watch = watchPeakRss(() => (tsxPid === undefined ? undefined : findRalphProcess(tsxPid)));
  const run = await runTimed(command, [...args], { ...options, onStart: (pid) => (tsxPid = pid) });
  return { run, ...watch.stop() };
}
