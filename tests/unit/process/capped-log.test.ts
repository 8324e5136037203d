import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CappedLog, splitCap } from '../../../lib/process/capped-log.ts';
import { tempDir } from '../../support/temp.ts';

/** Writes `chunks` through a CappedLog of `cap` bytes, keeping the lines `keep` names; the file's text. */
async function capped(cap: number, chunks: string[], keep: (line: string) => boolean = () => false): Promise<string> {
  const file = path.join(tempDir('ralph-capped-'), 'log.jsonl');
  const stream = createWriteStream(file);
  const log = new CappedLog(stream, () => undefined, cap);
  for (const chunk of chunks) {
    log.write(Buffer.from(chunk));
    for (const line of chunk.split('\n')) if (line && keep(line)) log.keep(line);
  }
  log.end();
  await new Promise((resolve) => stream.end(resolve));
  return readFileSync(file, 'utf8');
}

describe('CappedLog', () => {
  it('splits the cap into a head and a tail of at most 4 MB', () => {
    expect(splitCap(64 * 1024 * 1024)).toEqual({ head: 60 * 1024 * 1024, tail: 4 * 1024 * 1024 });
    expect(splitCap(100_000)).toEqual({ head: 50_000, tail: 50_000 });
  });

  it('keeps a log under the cap whole, byte for byte', async () => {
    const chunks = Array.from({ length: 20 }, (_, index) => `line ${index}\n`);
    expect(await capped(65_536, chunks)).toBe(chunks.join(''));
  });

  it('keeps a log between head and head + tail whole too', async () => {
    const chunks = Array.from({ length: 100 }, (_, index) => `${String(index).padStart(3, '0')}${'x'.repeat(96)}\n`);
    expect(await capped(12_000, chunks)).toBe(chunks.join(''));
  });

  it('past the cap: the head, a note of what was left out, the lines ralph acted on, then the tail', async () => {
    const filler = (index: number) => `{"type":"assistant","n":${String(index).padStart(5, '0')},"text":"${'x'.repeat(70)}"}\n`;
    const chunks = [...Array.from({ length: 500 }, (_, index) => filler(index)), '{"type":"system","subtype":"init"}\n', ...Array.from({ length: 500 }, (_, index) => filler(500 + index)), '{"type":"result","result":"done"}\n'];
    const text = await capped(20_000, chunks, (line) => !line.includes('"assistant"'));
    const total = chunks.join('').length;
    // Not much over the cap: the note and the kept lines.
    expect(text.length).toBeLessThan(20_000 + 400);
    expect(text.startsWith(chunks.join('').slice(0, 10_000))).toBe(true);
    expect(text.endsWith(chunks.join('').slice(-10_000))).toBe(true);
    expect(text).toContain(`[ralph: ${total - 20_000} bytes of output left out here (--log-max-bytes); 1 line(s) ralph acted on follow, then the last 10000 bytes]\n{"type":"system","subtype":"init"}\n[ralph: the last 10000 bytes]\n`);
    // The result line is in the tail already: not written twice.
    expect(text.split('{"type":"result"').length).toBe(2);
  });

  it('a line ralph acted on inside the head is written there once, not kept again for the note', async () => {
    const filler = (index: number) => `{"type":"assistant","n":${String(index).padStart(5, '0')},"text":"${'x'.repeat(70)}"}\n`;
    const chunks = ['{"type":"system","subtype":"init"}\n', ...Array.from({ length: 1000 }, (_, index) => filler(index))];
    const text = await capped(20_000, chunks, (line) => !line.includes('"assistant"'));
    expect(text.startsWith('{"type":"system","subtype":"init"}\n')).toBe(true);
    expect(text.split('"subtype":"init"').length).toBe(2);
    expect(text).toContain('; 0 line(s) ralph acted on follow, then the last 10000 bytes]\n[ralph: the last 10000 bytes]\n');
  });

  it('kept lines are bounded (1 MB): the note counts the ones it could not keep', async () => {
    // 3000 result lines of 1 KB (with their line break) past a small head: the first 1024 fill the kept
    // lines' megabyte exactly, the rest are counted.
    const line = (index: number) => `{"type":"result","n":${String(index).padStart(5, '0')},"result":"${'r'.repeat(984)}"}`;
    const chunks = ['x'.repeat(20_000), ...Array.from({ length: 3000 }, (_, index) => `${line(index)}\n`), 'y'.repeat(20_000)];
    const text = await capped(20_000, chunks, (candidate) => candidate.startsWith('{"type":"result"'));
    expect(line(0).length + 1).toBe(1024);
    const fit = 1024;
    expect(text).toContain(`; ${fit} line(s) ralph acted on follow (${3000 - fit} more not kept), then the last 10000 bytes]\n`);
    // The cap, the kept megabyte and the notes: nothing more.
    expect(text.length).toBeLessThanOrEqual(20_000 + 1024 * 1024 + 400);
    expect(text).toContain(`${line(fit - 1)}\n`);
    expect(text).not.toContain(line(fit));
  });

  it('one chunk bigger than the whole cap: its first bytes as the head, its last bytes as the tail', async () => {
    const chunk = Array.from({ length: 3000 }, (_, index) => `${String(index).padStart(9, '0')}\n`).join('');
    const text = await capped(20_000, [chunk]);
    expect(text.startsWith(chunk.slice(0, 10_000))).toBe(true);
    expect(text.endsWith(`[ralph: the last 10000 bytes]\n${chunk.slice(-10_000)}`)).toBe(true);
    // The same after the tail has begun to fill: the ring keeps the newest bytes wherever it stands.
    const lines = (from: number, count: number) => Array.from({ length: count }, (_, index) => `${String(from + index).padStart(9, '0')}\n`).join('');
    const after = await capped(20_000, [lines(0, 1000), lines(1000, 300), lines(1300, 2500)]);
    expect(after.endsWith(`[ralph: the last 10000 bytes]\n${lines(2800, 1000)}`)).toBe(true);
  });
});
