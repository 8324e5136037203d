import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openChannel, PooledLog } from '../../../lib/process/output.ts';

const node = process.execPath;
// Writes 40 MiB of a counting pattern as fast as the reader takes it, then its descriptor flags on stderr.
const WRITER = `
const block = Buffer.alloc(1 << 20);
let n = 0;
const next = () => { for (let i = 0; i < block.length; i += 4) block.writeUInt32LE(n++, i); return block; };
const flags = require('node:fs').readFileSync('/proc/self/fdinfo/1', 'utf8').match(/flags:\\s+(\\d+)/)[1];
let left = 40;
const write = () => { while (left > 0) { left -= 1; if (!process.stdout.write(Buffer.from(next()))) return process.stdout.once('drain', write); } process.stderr.write(flags); };
write();
`;

function expected(): string {
  const hash = createHash('sha256');
  const block = Buffer.alloc(1 << 20);
  let n = 0;
  for (let round = 0; round < 40; round += 1) {
    for (let i = 0; i < block.length; i += 4) block.writeUInt32LE(n++, i);
    hash.update(block);
  }
  return hash.digest('hex');
}

/** Runs the writer with its stdout read through a channel; pauses reading now and then, as a slow log would. */
async function readThrough(pair: boolean): Promise<{ sha256: string; bytes: number; flags: number; pauses: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let pauses = 0;
  let chunks = 0;
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  const channel = await openChannel(
    (chunk) => {
      hash.update(chunk);
      bytes += chunk.length;
      // The chunk is only valid now: scribble over it, as the next read would.
      chunk.fill(0);
      if ((chunks += 1) % 10 !== 0) return true;
      pauses += 1;
      setTimeout(() => channel.resume(), 1);
      return false;
    },
    () => ended(),
    pair,
  );
  let child;
  try {
    child = spawn(node, ['-e', WRITER], { stdio: ['ignore', channel.stdio, 'pipe'] });
  } finally {
    channel.attach(child?.stdout);
  }
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await done;
  expect(await exit).toBe(0);
  return { sha256: hash.digest('hex'), bytes, flags: Number.parseInt(stderr, 8), pauses };
}

describe('openChannel', () => {
  const sha256 = expected();
  /** Every byte, in order, with pauses; the agent's stdout blocks when full, as a pipe from Node's own 'pipe' does (O_NONBLOCK is 04000). */
  const readsWhole = async (pair: boolean): Promise<void> => {
    const result = await readThrough(pair);
    expect(result.bytes).toBe(40 << 20);
    expect(result.sha256).toBe(sha256);
    expect(result.pauses).toBeGreaterThan(10);
    expect(result.flags & 0o4000).toBe(0);
  };

  it.runIf(process.platform === 'linux')('reads a socket pair of its own into one buffer: every byte, in order, with pauses; the agent writes blocking', () => readsWhole(true));

  it("falls back to Node's pipe with the same contract", () => readsWhole(false));

  it('ends when the child cannot be started', async () => {
    for (const pair of [true, false]) {
      let ended = false;
      const channel = await openChannel(() => true, () => (ended = true), pair);
      const child = spawn('definitely-not-a-real-binary', [], { stdio: ['ignore', channel.stdio, 'ignore'] });
      channel.attach(child.stdout);
      await new Promise((resolve) => child.on('error', resolve));
      for (let wait = 0; wait < 100 && !ended; wait += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(ended, `pair ${pair}`).toBe(true);
    }
  });
});

/** A log whose writes complete only when the test says so. */
function slowLog(): { stream: WriteStream; written: Buffer[]; complete: () => void } {
  const written: Buffer[] = [];
  const pending: Array<() => void> = [];
  const stream = {
    write: (chunk: Buffer, callback: () => void) => {
      written.push(chunk);
      pending.push(callback);
      return true;
    },
  } as unknown as WriteStream;
  return { stream, written, complete: () => pending.splice(0).forEach((callback) => callback()) };
}

describe('PooledLog', () => {
  it('copies each chunk into a pooled buffer, says when the pool is spent, and reuses the buffers once written', () => {
    const log = slowLog();
    let rooms = 0;
    const pooled = new PooledLog(log.stream, () => (rooms += 1));
    const read = Buffer.alloc(64 * 1024);
    const results: boolean[] = [];
    for (let index = 0; index < 5; index += 1) {
      read.fill(0x61 + index);
      results.push(pooled.write(read.subarray(0, 1000 * (index + 1))));
    }
    // Four pooled buffers: the fourth write spends the pool, the fifth gets a copy of its own.
    expect(results).toEqual([true, true, true, false, false]);
    read.fill(0);
    expect(log.written.map((chunk) => [chunk.length, chunk[0], chunk.at(-1)])).toEqual([1, 2, 3, 4, 5].map((n) => [1000 * n, 0x60 + n, 0x60 + n]));
    const buffers = new Set(log.written.slice(0, 4).map((chunk) => chunk.buffer));
    log.complete();
    expect(rooms).toBe(1);
    pooled.write(Buffer.from('again'));
    expect(buffers.has(log.written.at(-1)!.buffer)).toBe(true);
  });

  it('splits a chunk bigger than a read over two pooled buffers', () => {
    const log = slowLog();
    const pooled = new PooledLog(log.stream, () => {});
    const big = Buffer.alloc(64 * 1024 + 10, 0x7a);
    expect(pooled.write(big)).toBe(true);
    expect(log.written.map((chunk) => chunk.length)).toEqual([64 * 1024, 10]);
    expect(Buffer.concat(log.written).equals(big)).toBe(true);
  });
});
