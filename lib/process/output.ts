// How an agent's output streams are read. Node's 'pipe' stdio hands out a fresh 64 KiB buffer for every
// read; at hundreds of MB/s those dead buffers pile up as ArrayBuffer garbage until V8's external-memory
// trigger collects them (tens of MB per flooding agent). So on Linux each stream is a Unix socket pair made
// here, as Node's own 'pipe' is one (the agent sees the same kind of descriptor, blocking as usual), and
// ralph's end reads every chunk into one buffer of its own (net's `onread`). A chunk is then valid only
// during the callback: what the redaction, the line splitter and the log keep of it, they copy, the log
// into a small pool of buffers reused once written. Elsewhere, or if the pair cannot be made, Node's pipe
// is used with the same callback.
import type { WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';

const READ_BYTES = 64 * 1024;
/** Chunks copied for the log while their write is pending: room for a few reads, so reading and writing overlap. */
const LOG_POOL = 4;

/** What reads one output stream: the child's end to pass as its stdio, and ralph's end. */
export interface OutputChannel {
  /** For spawn's stdio: this socket, or 'pipe' (then attach() the child's stream). */
  stdio: Socket | 'pipe';
  /** After spawn (or its failure): closes ralph's copy of the child's end, or reads the child's pipe. */
  attach(childStream: Readable | null | undefined): void;
  /** Reading again after onChunk returned false. */
  resume(): void;
  destroy(): void;
}

/** Takes a chunk that is valid only during the call; false pauses reading until resume(). */
export type OnChunk = (chunk: Buffer) => boolean;

/**
 * A channel that hands every chunk to `onChunk` and calls `onEnd` once the stream is over (its end, an
 * error, or destroy()). `pair`: read through a socket pair of ralph's own (Linux), else Node's pipe.
 */
export async function openChannel(onChunk: OnChunk, onEnd: () => void, pair = process.platform === 'linux'): Promise<OutputChannel> {
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  const sockets = pair ? await socketPair(onChunk) : undefined;
  if (sockets) {
    const { childEnd, reader } = sockets;
    reader.on('error', () => reader.destroy());
    reader.on('close', end);
    return {
      stdio: childEnd,
      attach: () => childEnd.destroy(),
      resume: () => reader.resume(),
      destroy: () => {
        childEnd.destroy();
        reader.destroy();
      },
    };
  }
  let stream: Readable | null | undefined = null;
  return {
    stdio: 'pipe',
    attach: (childStream) => {
      stream = childStream;
      if (!stream) return end();
      const source = stream;
      source.on('data', (chunk: Buffer) => {
        if (!onChunk(chunk)) source.pause();
      });
      source.on('error', () => source.destroy());
      source.on('close', end);
    },
    resume: () => stream?.resume(),
    destroy: () => {
      if (stream) stream.destroy();
      else end();
    },
  };
}

/**
 * A connected pair through a Unix socket in a private folder (0700, so no other user can connect first),
 * removed once the two ends are connected: the child's end, and a reader into one buffer.
 */
async function socketPair(onChunk: OnChunk): Promise<{ childEnd: Socket; reader: Socket } | undefined> {
  let dir: string;
  try {
    // The PID in the name: a folder a kill -9 left in the moment before it goes is known dead (lib/recovery/).
    dir = await mkdtemp(path.join(os.tmpdir(), `ralph-out-${process.pid}-`));
  } catch {
    return undefined;
  }
  const file = path.join(dir, 's');
  const removed = (): Promise<void> => rm(dir, { recursive: true, force: true }).catch(() => {});
  // A socket path longer than sun_path holds (108 bytes on Linux) cannot be bound.
  if (Buffer.byteLength(file) > 100) return removed().then(() => undefined);
  const pair = await new Promise<{ childEnd: Socket; reader: Socket } | undefined>((resolve) => {
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    let reader: Socket | undefined;
    const fail = (): void => {
      server.close();
      reader?.destroy();
      resolve(undefined);
    };
    // pauseOnConnect: ralph never reads from the child's end; it only hands it over.
    const server = createServer({ pauseOnConnect: true }, (childEnd) => {
      server.close();
      resolve({ childEnd, reader: reader! });
    });
    server.on('error', fail);
    server.listen(file, () => {
      reader = connect({ path: file, onread: { buffer, callback: (bytes) => onChunk(buffer.subarray(0, bytes)) } });
      reader.once('error', fail);
      reader.once('connect', () => reader!.removeListener('error', fail));
    });
  });
  await removed();
  return pair;
}

/**
 * An iteration log fed chunks that are only valid during the call: each is copied into a pooled buffer,
 * reused once its write is done. write() says whether there is room for more; `onRoom` says when there is again.
 */
export class PooledLog {
  private readonly free: Buffer[] = [];
  private made = 0;
  private waiting = false;

  constructor(
    private readonly stream: WriteStream,
    private readonly onRoom: () => void,
  ) {}

  write(chunk: Buffer): boolean {
    // A chunk bigger than a read (a redaction released held bytes with it) takes two pooled buffers.
    for (let at = 0; at < chunk.length; ) {
      const slab = this.take();
      // The pool spent (the log is behind): the rest gets a copy of its own, and reading pauses.
      const copy = slab ? slab.subarray(0, chunk.copy(slab, 0, at)) : Buffer.from(chunk.subarray(at));
      at += copy.length;
      this.stream.write(copy, () => {
        if (slab) this.free.push(slab);
        if (this.waiting) {
          this.waiting = false;
          this.onRoom();
        }
      });
    }
    if (this.free.length > 0 || this.made < LOG_POOL) return true;
    this.waiting = true;
    return false;
  }

  private take(): Buffer | undefined {
    const slab = this.free.pop();
    if (slab || this.made === LOG_POOL) return slab;
    this.made += 1;
    return Buffer.allocUnsafe(READ_BYTES);
  }
}
