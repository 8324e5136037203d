// ralph's own stdout and stderr. A write that fails means nobody reads ralph any more: the reader of a pipe
// went away (`ralph … | head -3`, a `tee` that died, an ssh session dropped without SIGHUP: EPIPE), the
// terminal is gone (EIO), a redirect's disk is full (ENOSPC). Unguarded, Node raises that as an uncaught
// error and ralph dies with exit 1, its state left "running". Guarded, the first failure is reported once
// (the entry point ends the run like a hang-up) and the failed stream swallows what comes after.
// SIGPIPE itself is ignored, as Node does by default: a process-wide signal says no more than "some pipe
// closed", and the agent's stdin or a webhook's socket closing is not ralph's output closing; the EPIPE of
// the failed write says which stream it was.
import type { Output } from '../deps.ts';

export type StreamName = 'stdout' | 'stderr';

/** What the guard wraps: a stream that may fail by throwing or by emitting 'error'. */
export interface WritableOutput {
  write(text: string): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface GuardedOutputs {
  stdout: Output;
  stderr: Output;
  /** The stream that failed first and why, once one has. */
  lost(): { stream: StreamName; code: string } | undefined;
}

/** Wraps both streams; `onLost` is called once, for the first write that fails on either. */
export function guardOutputs(streams: Record<StreamName, WritableOutput>, onLost: (stream: StreamName, code: string) => void): GuardedOutputs {
  let first: { stream: StreamName; code: string } | undefined;
  const guard = (name: StreamName): Output => {
    const stream = streams[name];
    let dead = false;
    const fail = (error: unknown): void => {
      if (dead) return;
      dead = true;
      const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'EIO';
      if (first) return;
      first = { stream: name, code };
      onLost(name, code);
    };
    stream.on('error', fail);
    return {
      write(text: string): boolean {
        if (dead) return true;
        try {
          stream.write(text);
        } catch (error) {
          fail(error);
        }
        return true;
      },
      get isTTY() {
        return stream.isTTY;
      },
      get columns() {
        return stream.columns;
      },
    };
  };
  return { stdout: guard('stdout'), stderr: guard('stderr'), lost: () => first };
}
