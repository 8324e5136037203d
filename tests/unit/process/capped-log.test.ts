import { once } from 'node:events';
import { createWriteStream, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CappedLog, foundIn, splitCap } from '../../../lib/process/capped-log.ts';
import { tempDir } from '../../support/temp.ts';

/**
 * Writes `chunks` through a CappedLog of `cap` bytes, keeping the lines `keep` names; the file's text. The
 * lines are each chunk's, or with `acrossChunks` gathered across chunks as ralph's splitter hands them on.
 */
async function capped(cap: number, chunks: string[], keep: (line: string) => boolean = () => false, acrossChunks = false): Promise<string> {
  const file = path.join(tempDir('ralph-capped-'), 'log.jsonl');
  const stream = createWriteStream(file);
  const log = new CappedLog(stream, file, () => undefined, cap, (error) => {
    throw error;
  });
  let partial = '';
  for (const chunk of chunks) {
    log.write(Buffer.from(chunk));
    const lines = (acrossChunks ? partial + chunk : chunk).split('\n');
    partial = acrossChunks ? lines.pop()! : '';
    for (const line of lines) if (line && keep(line)) log.keep(line);
  }
  await log.end();
  await new Promise((resolve) => stream.end(resolve));
  // The tail's own file is gone: the folder holds the log alone.
  expect(readdirSync(path.dirname(file))).toEqual(['log.jsonl']);
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

  it('keeps a tail of several blocks exactly, however often its ring went round', async () => {
    const lines = Array.from({ length: 12_000 }, (_, index) => `{"n":${index},"text":"${'y'.repeat(index % 97)}"}\n`);
    const all = lines.join('');
    // Chunks of uneven sizes, some bigger than the tail, as reads and a redaction's release come.
    const chunks: string[] = [];
    for (let at = 0, step = 1; at < all.length; at += step, step = (step * 7 + 13) % 90_000) chunks.push(all.slice(at, at + step));
    // Lines ralph acted on: one in the head (not kept twice), one left out, one in the tail (not written twice).
    const acted = new Set([lines[3], lines[6000], lines[11_999]].map((line) => line!.trimEnd()));
    const text = await capped(300_000, chunks, (line) => acted.has(line), true);
    expect(text.startsWith(all.slice(0, 150_000))).toBe(true);
    expect(text.endsWith(all.slice(-150_000))).toBe(true);
    expect(text).toContain(`[ralph: ${all.length - 300_000} bytes of output left out here (--log-max-bytes); 1 line(s) ralph acted on follow, then the last 150000 bytes]\n${lines[6000]}[ralph: the last 150000 bytes]\n`);
    expect(text.split(lines[11_999]!).length).toBe(2);
    expect(text.split(lines[3]!).length).toBe(2);
  });

  it('says once which log it could not write when the tail cannot be opened', async () => {
    const dir = tempDir('ralph-capped-');
    const file = path.join(dir, 'log.jsonl');
    const stream = createWriteStream(file);
    await once(stream, 'open');
    const errors: NodeJS.ErrnoException[] = [];
    const log = new CappedLog(stream, file, () => undefined, 65_536, (error) => errors.push(error));
    log.write(Buffer.alloc(32_768, 'a'));
    rmSync(dir, { recursive: true, force: true });
    log.write(Buffer.alloc(1000, 'b'));
    log.write(Buffer.alloc(1000, 'c'));
    expect(errors.map((error) => [error.code, error.path])).toEqual([['ENOENT', file]]);
    log.close();
    await new Promise((resolve) => stream.end(resolve));
  });
});

describe('foundIn', () => {
  const blocks = (...texts: string[]): Buffer[] => texts.map((text) => Buffer.from(text));
  it.each([
    ['within a block', blocks('abc', 'def'), 'de', true],
    ['across two blocks', blocks('abc', 'def'), 'cd', true],
    ['across three blocks', blocks('ab', 'c', 'de'), 'bcd', true],
    ['not there', blocks('abc', 'def'), 'ce', false],
    ['longer than all', blocks('abc'), 'abcd', false],
    ['no blocks', [], 'a', false],
  ])('%s', (_name, parts, needle, expected) => {
    expect(foundIn(parts, [Buffer.from(needle)])).toEqual([expected]);
  });

  it('reads blocks that reuse one buffer, as the tail is read', () => {
    function* reused(): Generator<Buffer> {
      const block = Buffer.alloc(3);
      for (const text of ['abc', 'def', 'ghi']) {
        block.write(text);
        yield block;
      }
    }
    expect(foundIn(reused(), [Buffer.from('cde'), Buffer.from('fgh'), Buffer.from('bcdefg'), Buffer.from('abg')])).toEqual([true, true, true, false]);
  });

  it('answers for each of several lines', () => {
    expect(foundIn(blocks('{"a":1}\n{"b"', ':2}\n'), [Buffer.from('{"b":2}'), Buffer.from('{"c":3}'), Buffer.from('{"a":1}')])).toEqual([true, false, true]);
  });
});
