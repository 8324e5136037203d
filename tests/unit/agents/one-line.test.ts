import { describe, expect, it } from 'vitest';
import { oneLine } from '../../../lib/agents/common.ts';

/** What oneLine gave when it was written with a regular expression. */
function reference(text: string, max = 160): string {
  const head = text.length > max * 4 ? text.slice(0, max * 4) : text;
  const flat = head.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

describe('oneLine', () => {
  it('gives what the regular expression gave, for any mix of white space, words and lengths', () => {
    const pieces = [' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2028', '\u3000', '\ufeff', 'a', 'word', 'é', '𝄞', 'x'.repeat(30), '…'];
    let seed = 11;
    const next = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let run = 0; run < 20_000; run += 1) {
      let text = '';
      for (let count = Math.floor(next() * 40); count > 0; count -= 1) text += pieces[Math.floor(next() * pieces.length)];
      const max = 1 + Math.floor(next() * 40);
      expect({ text, max, line: oneLine(text, max) }).toEqual({ text, max, line: reference(text, max) });
    }
    expect(oneLine(`${'word '.repeat(2_000_000)}end`, 200)).toBe(reference(`${'word '.repeat(2_000_000)}end`, 200));
  });
});
