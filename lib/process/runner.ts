import { spawn } from 'node:child_process';
import type { WriteStream } from 'node:fs';
import type { Redactor } from '../redact/index.ts';
import { LineSplitter, LONG_LINE_BYTES } from './line-splitter.ts';
import { CappedLog, closeLog, openLog } from './capped-log.ts';
import { openChannel, PooledLog, type OutputChannel } from './output.ts';
import { startEndWatch } from './end-watch.ts';
import { groupTree, processAlive, signalTree, stopTree } from './process-tree.ts';

/** An external command described as data; never a shell string. */
export interface Command {
  bin: string;
  args: string[];
  /** Written to the child's stdin, which is then closed; without it stdin is not connected. */
  stdin?: string;
  /** Added to (or, when undefined, removed from) the inherited environment. */
  env?: Record<string, string | undefined>;
}

export interface RunOptions {
  cwd: string;
  baseEnv: NodeJS.ProcessEnv;
  timeoutMs: number;
  idleTimeoutMs: number;
  graceMs: number;
  signal: AbortSignal;
  /** Each line of output; returning true marks a line ralph acted on, which a capped log keeps. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => unknown;
  /** Most bytes each log keeps (the head, the kept lines and the tail); 0 or absent: all of it. */
  logMaxBytes?: number;
  /** The raw stdout is copied here byte for byte. */
  stdoutLog?: string;
  stderrLog?: string;
  maxLineBytes?: number;
  /** Lines longer than this reach onLine as their bounded reading (see line-splitter.ts); 0 turns that off. */
  longLineBytes?: number;
  /** Called with the child's PID (its process group id) once it is spawned. */
  onSpawn?: (pid: number) => void;
  /** Secrets are replaced in both streams before they reach the logs, the lines and the stderr tail. */
  redactor?: Redactor;
  /** Created when the child's last process has ended, even after ralph's death (see end-watch.ts). */
  endFile?: string;
}

export type EndReason = 'exit' | 'timeout' | 'idle' | 'aborted' | 'spawn_error' | 'log_error';

/** What happened to the child: data, never an exception. */
export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  reason: EndReason;
  durationMs: number;
  spawnError?: string;
  stdoutBytes: number;
  stderrTail: string;
  truncatedLines: number;
  /** A log could not be written (a full disk): the agent was stopped. */
  logError?: NodeJS.ErrnoException;
}

const STDERR_TAIL = 8 * 1024;
const active = new Map<number, number[]>();

/** Last resort for the entry point: SIGKILL every agent group still running, synchronously. */
export function killActiveNow(): void {
  for (const [pgid, known] of active) signalTree(pgid, [...known, ...groupTree(pgid)], 'SIGKILL');
}

type Redaction = { push(chunk: Buffer): Buffer; end(): Buffer };
const PASS: Redaction = { push: (chunk) => chunk, end: () => Buffer.alloc(0) };

/**
 * One output stream of the child: read (see output.ts), redacted, copied to its log and split into lines.
 * The redaction sits first: the log, the lines and `onData` only ever see redacted bytes.
 */
interface Output {
  channel: OutputChannel;
  /** What a redaction held back at the end of the stream, written and split like the rest. */
  flush(): Buffer;
  /** The log's cap, when it has one (for keep() and end()). */
  capped?: CappedLog;
}

async function openOutput(log: { stream: WriteStream; file: string; max: number; onError: (error: NodeJS.ErrnoException) => void } | undefined, splitter: LineSplitter, redaction: Redaction, onData: (raw: number, clean: Buffer) => void, onEnd: () => void): Promise<Output> {
  let pooled: PooledLog | CappedLog | undefined;
  let capped: CappedLog | undefined;
  const channel = await openChannel((chunk) => {
    const clean = redaction.push(chunk);
    onData(chunk.length, clean);
    if (clean.length === 0) return true;
    const room = pooled ? pooled.write(clean) : true;
    splitter.push(clean);
    return room;
  }, onEnd);
  if (log && log.max > 0) pooled = capped = new CappedLog(log.stream, log.file, () => channel.resume(), log.max, log.onError);
  else if (log) pooled = new PooledLog(log.stream, () => channel.resume());
  return {
    channel,
    ...(capped ? { capped } : {}),
    flush: () => {
      const rest = redaction.end();
      if (rest.length > 0) {
        pooled?.write(rest);
        splitter.push(rest);
      }
      return rest;
    },
  };
}

/**
 * Runs one command in its own process group, streaming its lines, and ends the whole group on timeout,
 * idle timeout or abort: SIGTERM first, SIGKILL after the grace period. Leftover group members die too.
 */
export async function runProcess(command: Command, options: RunOptions): Promise<ProcessResult> {
  const started = Date.now();
  const env: NodeJS.ProcessEnv = { ...options.baseEnv };
  for (const [key, value] of Object.entries(command.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  let logError: NodeJS.ErrnoException | undefined;
  let onLogError = (_error: NodeJS.ErrnoException): void => {};
  const failedLog = (error: NodeJS.ErrnoException): void => {
    logError ??= error;
    onLogError(error);
  };
  const stdoutLog = openLog(options.stdoutLog, failedLog);
  const stderrLog = openLog(options.stderrLog, failedLog);
  const logMaxBytes = options.logMaxBytes ?? 0;
  let stdoutBytes = 0;
  let stderrTail = '';
  let streamsOpen = 2;
  let streamEnded = (): void => {};
  const keepers: Partial<Record<'stdout' | 'stderr', CappedLog>> = {};
  const emit = (stream: 'stdout' | 'stderr') => (line: string) => {
    try {
      if (options.onLine?.(line, stream) === true) keepers[stream]?.keep(line);
    } catch {
      // a display problem must never stop the agent
    }
  };
  const outLines = new LineSplitter(emit('stdout'), options.maxLineBytes, options.longLineBytes ?? LONG_LINE_BYTES);
  const errLines = new LineSplitter(emit('stderr'), options.maxLineBytes, options.longLineBytes ?? LONG_LINE_BYTES);
  const addStderr = (clean: Buffer): void => {
    stderrTail = (stderrTail + clean.toString('utf8')).slice(-STDERR_TAIL);
  };
  let armIdle = (): void => {};
  const ended = (): void => {
    streamsOpen -= 1;
    streamEnded();
  };
  const [out, err] = await Promise.all([
    openOutput(stdoutLog && { stream: stdoutLog, file: options.stdoutLog!, max: logMaxBytes, onError: failedLog }, outLines, options.redactor?.stream() ?? PASS, (raw) => {
      stdoutBytes += raw;
      armIdle();
    }, ended),
    openOutput(stderrLog && { stream: stderrLog, file: options.stderrLog!, max: logMaxBytes, onError: failedLog }, errLines, options.redactor?.stream() ?? PASS, (_raw, clean) => {
      addStderr(clean);
      armIdle();
    }, ended),
  ]);

  if (out.capped) keepers.stdout = out.capped;
  if (err.capped) keepers.stderr = err.capped;

  return new Promise((resolve) => {
    let reason: EndReason = 'exit';
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const watch = options.endFile ? startEndWatch(options.endFile) : undefined;
    let child: ReturnType<typeof spawn> | undefined;
    try {
      child = spawn(command.bin, command.args, {
        cwd: options.cwd,
        env,
        detached: true,
        stdio: [command.stdin === undefined ? 'ignore' : 'pipe', out.channel.stdio, err.channel.stdio, ...(watch ? [watch.end] : [])],
      });
    } finally {
      // ralph's copies of the child's ends are closed (or its pipes read) whatever spawn did.
      out.channel.attach(child?.stdout);
      err.channel.attach(child?.stderr);
      watch?.release();
    }
    const pgid = child.pid;
    const known: number[] = [];
    if (pgid !== undefined) {
      active.set(pgid, known);
      options.onSpawn?.(pgid);
    }

    let idleTimer: NodeJS.Timeout | undefined;
    // Called for every chunk of output: refresh() re-arms the same timer instead of making a new one.
    armIdle = (): void => {
      if (settled || options.idleTimeoutMs <= 0) return;
      if (idleTimer) idleTimer.refresh();
      else idleTimer = setTimeout(() => terminate('idle'), options.idleTimeoutMs);
    };

    let terminating = false;
    let killAt = 0;
    const terminate = (why: EndReason): void => {
      if (terminating || pgid === undefined) return;
      terminating = true;
      killAt = Date.now() + options.graceMs;
      if (reason === 'exit') reason = why;
      known.push(...groupTree(pgid));
      signalTree(pgid, known, 'SIGTERM');
      timers.push(
        setTimeout(() => {
          signalTree(pgid, [...known, ...groupTree(pgid)], 'SIGKILL');
        }, options.graceMs),
      );
    };

    const finish = async (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: string): Promise<void> => {
      if (settled) return;
      settled = true;
      if (idleTimer) clearTimeout(idleTimer);
      options.signal.removeEventListener('abort', onAbort);
      // Whatever the agent left running in its group (or escaped from it) goes with it.
      if (pgid !== undefined) await stopTree(pgid, known, options.graceMs);
      // ralph saw the end itself: the watcher (kept alive only by a process that escaped the group) goes.
      await watch?.stop();
      for (const timer of timers) clearTimeout(timer);
      if (pgid !== undefined) active.delete(pgid);
      out.channel.destroy();
      err.channel.destroy();
      out.flush();
      addStderr(err.flush());
      outLines.end();
      errLines.end();
      if (!logError) await Promise.all([out.capped?.end(), err.capped?.end()]);
      out.capped?.close();
      err.capped?.close();
      await Promise.all([closeLog(stdoutLog), closeLog(stderrLog)]);
      resolve({
        exitCode,
        signal,
        reason: spawnError ? 'spawn_error' : reason,
        durationMs: Date.now() - started,
        spawnError,
        stdoutBytes,
        stderrTail,
        truncatedLines: outLines.truncatedLines + errLines.truncatedLines,
        ...(logError ? { logError } : {}),
      });
    };

    // A log that cannot be written (a full disk) ends the agent: its work could not be recorded either.
    onLogError = () => terminate('log_error');
    if (logError) queueMicrotask(() => terminate('log_error'));
    const onAbort = (): void => terminate('aborted');
    if (options.signal.aborted) queueMicrotask(onAbort);
    else options.signal.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs > 0) timers.push(setTimeout(() => terminate('timeout'), options.timeoutMs));
    armIdle();

    child.on('error', (error) => {
      void finish(null, null, error.message);
    });
    if (child.stdin) {
      child.stdin.on('error', () => {
        // the agent may exit without reading its prompt; that is reported by its exit code
      });
      child.stdin.end(command.stdin);
    }

    let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    // The end: the child has exited and both its output streams are read to their end.
    streamEnded = () => {
      if (exitInfo && streamsOpen === 0) void finish(exitInfo.code, exitInfo.signal);
    };
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      // Leftovers are found through the group's remaining members (the leader's own children are no longer
      // below it once it is reaped): an empty group, the usual end, needs no walk through /proc.
      if (pgid !== undefined && processAlive(-pgid)) known.push(...groupTree(pgid));
      streamEnded();
      // Output held open by a leftover grandchild must not keep ralph waiting for its end. While the group
      // is being stopped, though, the leader may go first (bwrap dies at SIGTERM while the agent inside
      // still ends cleanly): its last output is read until the SIGKILL, so the log stays whole.
      const wait = terminating ? Math.max(1000, killAt - Date.now() + 1000) : 1000;
      timers.push(setTimeout(() => void finish(code, signal), wait));
    });
  });
}
