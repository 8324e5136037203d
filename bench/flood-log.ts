// What the flood's iteration logs must hold. Up to --log-max-bytes (64M by default) a log is the agent's
// stream byte for byte; past it, what the cap promises (README, "Logs, state and reports"): the head, a note
// of how much was left out, every line ralph acted on that the tail does not hold, then the last 4 MB. Each
// part is checked exactly: the head and the tail by sha256 against the generator's own stream, the note's
// counts, and the kept lines against the lines the generator wrote that ralph acts on.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { runTimed, sha256Of } from './process.ts';
import { AGENTS } from './sandbox.ts';

const MiB = 1024 * 1024;
/** --log-max-bytes by default, and the tail it keeps (the README's "last 4 MB"). */
export const LOG_CAP = 64 * MiB;
export const LOG_TAIL = 4 * MiB;
const GENERATOR = path.join(AGENTS, 'flood-agent.mjs');
/** More than a note and a few kept lines between the head and the tail is not what the cap promises. */
const MOST_BETWEEN = 2 * MiB;

/** The generator's stream, as flood-agent.mjs --sha256 describes it. */
export interface FloodStream {
  sha256: string;
  bytes: number;
  head: { bytes: number; sha256: string };
  tail: { bytes: number; sha256: string };
  /** The lines ralph acts on (their kind is in agent-run.ts's DECISIVE), where they start in the stream. */
  acted: Array<{ line: string; at: number }>;
}

/** Describes the stream of `bytes` the generator writes, without writing it. */
export async function expectedStream(bytes: number): Promise<FloodStream> {
  const run = await runTimed(process.execPath, [GENERATOR, '--sha256', String(LOG_CAP - LOG_TAIL), String(LOG_TAIL)], { cwd: AGENTS, env: { ...process.env, BENCH_FLOOD_BYTES: String(bytes) }, timeoutMs: 60_000 });
  return JSON.parse(run.stdout) as FloodStream;
}

function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(bytes % MiB === 0 ? 0 : 1)} MiB`;
}

/** Bytes [start, end) of a file. */
function readRange(file: string, start: number, end: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.max(0, end - start));
    readSync(fd, buffer, 0, buffer.length, start);
    return buffer;
  } finally {
    closeSync(fd);
  }
}

/** Whether `file` holds what the default cap promises for `stream`; `result` says what it holds, or the first thing wrong. */
export async function checkLog(file: string, stream: FloodStream): Promise<{ ok: boolean; result: string }> {
  const size = statSync(file, { throwIfNoEntry: false })?.size ?? -1;
  if (size < 0) return { ok: false, result: 'no log' };
  if (stream.bytes <= LOG_CAP) {
    const same = size === stream.bytes && (await sha256Of(file)) === stream.sha256;
    return { ok: same, result: `${size} of ${stream.bytes} bytes${same ? ', sha256 equal' : size === stream.bytes ? ', sha256 DIFFERS' : ''}` };
  }
  const head = stream.head.bytes;
  const tail = stream.tail.bytes;
  if (size < head + tail || size > head + tail + MOST_BETWEEN) return { ok: false, result: `${size} bytes, not the ${mib(head)} head, a note and the ${mib(tail)} tail` };
  if ((await sha256Of(file, { start: 0, end: head })) !== stream.head.sha256) return { ok: false, result: `the first ${mib(head)} differ from the agent's` };
  if ((await sha256Of(file, { start: size - tail, end: size })) !== stream.tail.sha256) return { ok: false, result: `the last ${mib(tail)} differ from the agent's` };
  const between = readRange(file, head, size - tail).toString('utf8');
  const lines = between.startsWith('\n') && between.endsWith('\n') ? between.slice(1, -1).split('\n') : [];
  const note = /^\[ralph: (\d+) bytes of output left out.*?(\d+) line\(s\) ralph acted on.*?the last (\d+) bytes\]$/.exec(lines[0] ?? '');
  const last = /^\[ralph: the last (\d+) bytes\]$/.exec(lines.at(-1) ?? '');
  if (!note || !last || lines.length < 2) return { ok: false, result: `no note between the head and the tail: ${JSON.stringify(between.slice(0, 200))}` };
  const left = stream.bytes - head - tail;
  const kept = lines.slice(1, -1);
  // A line ralph acted on is kept unless the head or the tail already holds it whole.
  const expected = stream.acted.filter(({ line, at }) => at + Buffer.byteLength(line) + 1 > head && at < stream.bytes - tail).map(({ line }) => line);
  const wrong = [
    Number(note[1]) !== left && `the note says ${note[1]} bytes left out, not ${left}`,
    (Number(note[3]) !== tail || Number(last[1]) !== tail) && `the note says a tail of ${note[3]}/${last[1]} bytes, not ${tail}`,
    Number(note[2]) !== expected.length && `the note counts ${note[2]} kept line(s), not ${expected.length}`,
    JSON.stringify(kept) !== JSON.stringify(expected) && `kept lines ${JSON.stringify(kept.map((line) => line.slice(0, 60)))}, not ${JSON.stringify(expected.map((line) => line.slice(0, 60)))}`,
  ].filter(Boolean);
  if (wrong.length > 0) return { ok: false, result: wrong.join('; ') };
  return { ok: true, result: `${size} bytes: the first ${mib(head)} and the last ${mib(tail)} equal (sha256), ${mib(left)} left out as noted, ${kept.length} line(s) ralph acted on kept between` };
}
