// The durable record of an agent's end, whoever its parent is by then. A run killed with SIGKILL leaves its
// agent running as an orphan, which may finish its task in the tree; nothing of ralph is left to see when.
// A tiny watcher (`sh`, builtins only, its own session like the agent) holds the read end of a socket whose
// write end only the agent has (its fd 3, passed on to what it starts): when the last of them has ended or
// closed it, the watcher reads EOF and creates `file`. Its ctime, from the kernel's clock like the ctimes of
// the files the agent wrote, is the end: a file changed later is not the agent's work. The agent itself is
// started exactly as without it (its exit code, signal, spawn errors and process group are its own).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/** `read` until EOF (whatever the agent may write there), then the record. Builtins only: no PATH, no other process. */
const SCRIPT = 'while read -r line; do :; done; : > "$1"';

/** How long a watcher gets to end on its own once the agent's group is gone. */
const SETTLE_MS = 200;

export interface EndWatch {
  /** The write end, for the agent's stdio[3]. */
  readonly end: Writable;
  /** Closes ralph's copy once the agent holds its own (never a shutdown: that would end the agent's too). */
  release(): void;
  /** Ends the watcher (the agent is over: ralph, alive, clears the records itself) and waits for it. */
  stop(): Promise<void>;
}

/** Starts the watcher of an agent about to start; undefined when it cannot (the run goes on without the record). */
export function startEndWatch(file: string): EndWatch | undefined {
  let watcher: ChildProcess;
  try {
    watcher = spawn('/bin/sh', ['-c', SCRIPT, 'ralph-agent-end', file], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: {} });
  } catch {
    return undefined;
  }
  const exited = new Promise<void>((resolve) => {
    watcher.once('exit', () => resolve());
    watcher.once('error', () => resolve());
  });
  watcher.unref();
  const end = watcher.stdin;
  if (!end || watcher.pid === undefined) {
    watcher.kill('SIGKILL');
    return undefined;
  }
  end.on('error', () => {
    // the watcher gone: only the record is lost
  });
  return {
    end,
    release: () => void end.destroy(),
    stop: async () => {
      end.destroy();
      // The agent's group is gone: the watcher ends at once on its own (its record written); only one held
      // open by a process that escaped the group is killed.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_MS)))]);
      clearTimeout(timer);
      if (watcher.exitCode === null && watcher.signalCode === null) watcher.kill('SIGKILL');
      await exited;
    },
  };
}
