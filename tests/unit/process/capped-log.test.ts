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
});
