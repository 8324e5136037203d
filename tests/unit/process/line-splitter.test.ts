import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../../lib/process/line-splitter.ts';
import { random } from '../../support/random.ts';

const split = (chunks: Buffer[], max?: number) => {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), max);
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return { lines, truncated: splitter.truncatedLines };
};

describe('LineSplitter', () => {
  it('joins lines split across chunks and keeps the last unterminated line', () => {
    expect(split([Buffer.from('ab'), Buffer.from('c\nde'), Buffer.from('f\r\ng')]).lines).toEqual(['abc', 'def', 'g']);
  });

  it('decodes a multi-byte character split across chunks', () => {
    const bytes = Buffer.from('é→\n');
    expect(split([bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)]).lines).toEqual(['é→']);
  });

  it('replaces invalid UTF-8 instead of failing', () => {
    expect(split([Buffer.from([0x61, 0xff, 0xfe, 0x0a])]).lines).toEqual(['a\uFFFD\uFFFD']);
  });

  it('bounds a huge line and counts it as truncated', () => {
    const result = split([Buffer.alloc(100, 0x78), Buffer.from('\nok\n')], 10);
    expect(result.lines).toEqual(['x'.repeat(10), 'ok']);
    expect(result.truncated).toBe(1);
  });
});

describe('LineSplitter with a reused read buffer', () => {
  /** Agent output of every kind the splitter treats apart: short lines, lines across reads, long JSON and long text lines. */
  function stream(next: () => number): Buffer {
    const words = ['word', 'é→ü', 'tests pass', '<promise>COMPLETE</promise>', '```', '\\', '"'];
    const text = (bytes: number): string => {
      let out = '';
      while (out.length < bytes) out += `${words[Math.floor(next() * words.length)]}${next() < 0.05 ? '\n' : ' '}`;
      return out;
    };
    const lines: string[] = [];
    for (let index = 0; index < 40; index += 1) {
      const kind = next();
      if (kind < 0.5) lines.push(JSON.stringify({ type: 'assistant', text: text(10 + next() * 3000) }));
      else if (kind < 0.7) lines.push(JSON.stringify({ type: 'result', result: text(40_000 + next() * 60_000), usage: { input_tokens: 12 } }));
      else if (kind < 0.85) lines.push(text(30_000 + next() * 50_000).replaceAll('\n', ' '));
      else lines.push('');
    }
    return Buffer.from(`${lines.join('\n')}\n`);
  }

  /** The lines handed on when `bytes` arrive in reads of up to `maxRead` bytes, each read into `buffer(size)`. */
  function readInto(bytes: Buffer, next: () => number, maxRead: number, reuse: boolean): string[] {
    const lines: string[] = [];
    // A small long-line threshold, so the bounded reading (LongLine, LongText, LineScan) runs on these sizes.
    const splitter = new LineSplitter((line) => lines.push(line), undefined, 20_000);
    const shared = Buffer.alloc(maxRead);
    for (let at = 0; at < bytes.length; ) {
      const size = Math.min(bytes.length - at, 1 + Math.floor(next() * maxRead));
      const chunk = reuse ? shared.subarray(0, size) : Buffer.alloc(size);
      bytes.copy(chunk, 0, at, at + size);
      splitter.push(chunk);
      // What the next read would do to a buffer that is read into again.
      if (reuse) shared.fill(0x41);
      at += size;
    }
    splitter.end();
    return lines;
  }

  it('hands on the same lines as with a fresh buffer per read: nothing of a read is kept by reference', () => {
    for (let seed = 1; seed <= 12; seed += 1) {
      const bytes = stream(random(seed));
      const maxRead = seed % 2 === 0 ? 65_536 : 700;
      const fresh = readInto(bytes, random(seed * 31), maxRead, false);
      const reused = readInto(bytes, random(seed * 31), maxRead, true);
      expect(reused.length, `seed ${seed}`).toBe(fresh.length);
      for (let index = 0; index < fresh.length; index += 1) expect(reused[index], `seed ${seed}, line ${index}`).toBe(fresh[index]);
    }
  });
});
