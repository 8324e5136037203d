import { describe, expect, it } from 'vitest';
import { claimsCompletion, COMPLETION_TOKEN } from '../../../lib/completion.ts';
import { LongText, type LongTextLimits } from '../../../lib/process/long-text.ts';
import { random } from '../../support/random.ts';

/**
 * Feeds `bytes` in pieces of random sizes; returns the kept form. With `reuse`, every piece is copied into
 * the same buffer, which is overwritten after each push (as the runner's read buffer is by the next read).
 */
function reduce(bytes: Buffer, limits: LongTextLimits, escaped: boolean, next: () => number, reuse = false): Buffer {
  const text = new LongText(limits, escaped);
  const shared = Buffer.alloc(300);
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(next() * 300);
    const piece = bytes.subarray(at, at + size);
    if (reuse) {
      piece.copy(shared);
      text.push(shared.subarray(0, piece.length));
      shared.fill(0x41);
    } else text.push(piece);
    at += size;
  }
  return text.end();
}

/** The JSON string content of `text` (what sits between the quotes). */
const escapedBytes = (text: string): Buffer => Buffer.from(JSON.stringify(text).slice(1, -1), 'utf8');
/** The same content as an encoder that escapes `<`, `>`, line breaks and every non-ASCII character would write it. */
const asciiEscaped = (text: string, next: () => number): Buffer =>
  Buffer.from(
    JSON.stringify(text)
      .slice(1, -1)
      .replace(/[<>]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .replace(/\\n/g, () => (next() < 0.5 ? '\\u000a' : '\\n'))
      .replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
const decoded = (bytes: Buffer): string => JSON.parse(`"${bytes.toString('utf8')}"`) as string;

const LINES = [
  'Some words of the answer.',
  'Another sentence; nothing to claim here.',
  '- a list item',
  '## A heading',
  'Checked the tests: all green.',
  'Some words of the answer.',
  'More text: "quoted", a back\\slash and a tab\there.',
  '',
  '   ',
  COMPLETION_TOKEN,
  `  ${COMPLETION_TOKEN}  `,
  `Done. ${COMPLETION_TOKEN}`,
  `I will not say ${COMPLETION_TOKEN}`,
  '```',
  '~~~',
  '```ts',
  'é→ und ünïcödé 𝄞 text',
  '<promise>COMPLETE',
  'x'.repeat(200),
];

describe('LongText', () => {
  it('keeps a text within its limits whole', () => {
    const bytes = escapedBytes('short\nanswer');
    expect(reduce(bytes, { head: 64, tail: 64 }, true, random(1)).equals(bytes)).toBe(true);
  });

  it('keeps head and tail of a long plain text around a marker, cutting no UTF-8 character', () => {
    const bytes = Buffer.from(`${'é'.repeat(5000)} the end`, 'utf8');
    for (let seed = 1; seed <= 20; seed += 1) {
      const kept = reduce(bytes, { head: 101, tail: 203 }, false, random(seed)).toString('utf8');
      expect(kept).not.toContain('\uFFFD');
      expect(kept).toMatch(/^é+ \[ralph: \d+ bytes left out here; the iteration log has them all\] é+ the end$/);
      const left = Number(/\[ralph: (\d+) bytes/.exec(kept)![1]);
      expect(Buffer.byteLength(kept.replace(/ \[ralph: .*?\] /, ''), 'utf8') + left).toBe(bytes.length);
    }
  });

  it('keeps valid JSON string content whatever escape or character the cuts fall on', () => {
    const text = Array.from({ length: 400 }, (_, index) => `${index} "q" \\ \u0001 é 𝄞 \t`).join('');
    const bytes = escapedBytes(text);
    for (let seed = 1; seed <= 40; seed += 1) {
      for (const limits of [{ head: 7, tail: 11 }, { head: 50, tail: 97 }, { head: 301, tail: 173 }]) {
        const kept = decoded(reduce(bytes, limits, true, random(seed)));
        expect(kept).toContain('bytes left out here');
        expect(text.startsWith(kept.slice(0, kept.indexOf(' [ralph:')))).toBe(true);
        expect(text.endsWith(kept.slice(kept.lastIndexOf('all] ') + 5))).toBe(true);
      }
    }
  });

  it('cuts on line breaks, so the kept head and tail are whole lines', () => {
    const text = Array.from({ length: 2000 }, (_, index) => `line ${index}`).join('\n');
    const kept = decoded(reduce(escapedBytes(text), { head: 100, tail: 100 }, true, random(3))).split('\n');
    expect(kept[0]).toBe('line 0');
    expect(kept.at(-1)).toBe('line 1999');
    // The marker stands in a fence of its own (never the answer's last words), followed by the last line left out.
    const marker = kept.findIndex((line) => line.startsWith('[ralph:'));
    expect(kept.slice(marker - 1, marker + 2)).toEqual(['```', expect.stringMatching(/^\[ralph: \d+ bytes left out here/), '```']);
    expect(kept.slice(0, marker - 1).every((line) => /^line \d+$/.test(line))).toBe(true);
    expect(kept.slice(marker + 2).every((line) => /^line \d+$/.test(line))).toBe(true);
    const numbers = kept.filter((line) => line.startsWith('line ')).map((line) => Number(line.slice(5)));
    expect(numbers.slice(0, -1).every((number, index) => numbers[index + 1]! > number)).toBe(true);
  });

  it('reads a completion claim the same as the whole text would, wherever the token stands', () => {
    let claimed = 0;
    let cut = 0;
    for (let seed = 1; seed <= 1500; seed += 1) {
      const next = random(seed);
      const count = 3 + Math.floor(next() * 40);
      const lines = Array.from({ length: count }, () => LINES[Math.floor(next() * LINES.length)]!);
      const text = lines.join(next() < 0.2 ? '\r\n' : '\n');
      const limits = { head: 10 + Math.floor(next() * 100), tail: 10 + Math.floor(next() * 200) };
      const bytes = seed % 3 === 0 ? asciiEscaped(text, next) : escapedBytes(text);
      const kept = decoded(reduce(bytes, limits, true, next));
      const expected = claimsCompletion(text);
      if (expected) claimed += 1;
      if (kept.includes('bytes left out here')) cut += 1;
      expect({ seed, claims: claimsCompletion(kept) }).toEqual({ seed, claims: expected });
    }
    // Both answers occur often enough for the comparison to mean something.
    expect(claimed).toBeGreaterThan(300);
    expect(claimed).toBeLessThan(1200);
    expect(cut).toBeGreaterThan(1200);
  });

  it('keeps no view of what it was pushed: a reused buffer gives the same kept form as fresh ones', () => {
    let lastLineKept = 0;
    for (let seed = 1; seed <= 400; seed += 1) {
      const next = random(seed);
      const count = 3 + Math.floor(next() * 40);
      // Lines longer than what the scan keeps of a line's end (4096 bytes) too.
      const lines = Array.from({ length: count }, () => (next() < 0.1 ? `${'long line '.repeat(300 + Math.floor(next() * 600))}end` : LINES[Math.floor(next() * LINES.length)]!));
      const text = lines.join('\n');
      const limits = { head: 10 + Math.floor(next() * 100), tail: 10 + Math.floor(next() * 2000) };
      const escaped = seed % 2 === 0;
      const bytes = escaped ? escapedBytes(text) : Buffer.from(text);
      const fresh = reduce(bytes, limits, escaped, random(seed * 7));
      const reused = reduce(bytes, limits, escaped, random(seed * 7), true);
      expect({ seed, kept: reused.toString('utf8') }).toEqual({ seed, kept: fresh.toString('utf8') });
      // The last content line left out is written back in: the scan's kept bytes are compared too.
      const marker = fresh.toString('utf8').split(/\\n|\n/).findIndex((line) => line.startsWith('[ralph:'));
      if (marker !== -1 && fresh.toString('utf8').split(/\\n|\n/).slice(marker + 1).some((line) => line.startsWith('```') === false && line.length > 0)) lastLineKept += 1;
    }
    expect(lastLineKept).toBeGreaterThan(100);
  });
});
