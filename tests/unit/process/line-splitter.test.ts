import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../../lib/process/line-splitter.ts';

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
