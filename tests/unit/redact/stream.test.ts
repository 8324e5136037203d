import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../lib/redact/index.ts';
import { MAX_SHAPE_LENGTH } from '../../../lib/redact/shapes.ts';

const KEY = 'sk-ant-test-0123456789abcdefABCDEF';
const TOKEN = 'svc-token-value-42';
const redactor = new Redactor({ env: { ANTHROPIC_API_KEY: KEY, MY_SERVICE_TOKEN: TOKEN } });

/**
 * Feeds `bytes` cut at the given offsets; returns the concatenated output. Each output is copied at once
 * (it is valid until the next push). With `reuse`, every piece is read into the same buffer, overwritten
 * after each push, as the runner's read buffer is by the next read.
 */
function streamed(bytes: Buffer, cuts: number[], reuse = false): Buffer {
  const stream = redactor.stream();
  const out: Buffer[] = [];
  const shared = Buffer.alloc(bytes.length);
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    const piece = bytes.subarray(at, cut);
    const input = reuse ? shared.subarray(0, piece.copy(shared)) : piece;
    out.push(Buffer.from(stream.push(input)));
    if (reuse) shared.fill(0x2d);
    at = cut;
  }
  out.push(Buffer.from(stream.end()));
  return Buffer.concat(out);
}

// A small deterministic generator, so a failure names its seed.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const TEXT = [
  '{"type":"assistant","message":{"content":[{"type":"text","text":"the key is ',
  KEY,
  ' and\\n',
  'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
  ' then"}]}}\n',
  '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"curl -H \'Authorization: ',
  TOKEN,
  '\' https://x"}}]}}\n',
  'plain stderr line AKIAIOSFODNN7EXAMPLE end\n',
].join('');

describe('StreamRedactor', () => {
  it('catches a secret split at every possible point across two reads', () => {
    const bytes = Buffer.from(TEXT);
    const whole = Buffer.from(redactor.text(TEXT));
    expect(whole.toString()).not.toContain(KEY);
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      expect(streamed(bytes, [cut]).toString(), `cut at ${cut}`).toBe(whole.toString());
    }
  });

  it('gives the same bytes as redacting the whole text, for random chunkings, read into fresh or reused buffers', () => {
    const bytes = Buffer.from(TEXT.repeat(5));
    const whole = redactor.text(TEXT.repeat(5));
    for (let seed = 1; seed <= 200; seed += 1) {
      const next = random(seed);
      const cuts: number[] = [];
      for (let at = Math.floor(next() * 40); at < bytes.length; at += 1 + Math.floor(next() * 60)) cuts.push(at);
      expect(streamed(bytes, cuts).toString(), `seed ${seed}`).toBe(whole);
      // It keeps no view of its input: a buffer read into again after each push gives the same bytes.
      expect(streamed(bytes, cuts, true).toString(), `seed ${seed}, reused buffer`).toBe(whole);
    }
  });

  it('passes bytes without secrets through exactly, invalid UTF-8 included', () => {
    const next = random(7);
    const bytes = Buffer.alloc(200_000);
    // Every byte value except the anchors of token shapes ('-', '_', 'I'), so no secret can be in there.
    const values = [...Array(256).keys()].filter((value) => ![45, 95, 73].includes(value));
    for (let index = 0; index < bytes.length; index += 1) bytes[index] = values[Math.floor(next() * values.length)]!;
    expect(streamed(bytes, [1, 2, 3, 5000, 5001, 65_536, 131_072, 199_999]).equals(bytes)).toBe(true);
    expect(streamed(bytes, []).equals(bytes)).toBe(true);
  });

  it('keeps a 10 MiB line of token characters byte-exact while holding back only a bounded tail', () => {
    const stream = redactor.stream();
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let total = 0;
    for (let index = 0; index < 160; index += 1) {
      total += stream.push(chunk).length;
      expect((stream as unknown as { held: number }).held).toBeLessThanOrEqual(2 * Math.max(KEY.length, MAX_SHAPE_LENGTH + 1));
    }
    total += stream.end().length;
    expect(total).toBe(160 * chunk.length);
  });

  it('holds nothing back after a line ends, so the live view is never late', () => {
    const stream = redactor.stream();
    const line = Buffer.from(`{"type":"result","result":"done"}\n`);
    expect(stream.push(line).equals(line)).toBe(true);
    expect(stream.push(Buffer.from('partial text, then a space ')).toString()).toBe('partial text, then a space ');
  });

  it('holds the start of a possible secret until the next read decides', () => {
    const stream = redactor.stream();
    expect(stream.push(Buffer.from('value: sk-ant-te')).toString()).toBe('value: ');
    expect(stream.push(Buffer.from('st-0123456789abcdefABCDEF done\n')).toString()).toBe('sk-ant-test-0123456789abcdefABCDEF done\n'.replace(KEY, '[redacted:ANTHROPIC_API_KEY]'));
    expect(stream.push(Buffer.from('then svc-tok')).toString()).toBe('then ');
    expect(stream.end().toString()).toBe('svc-tok');
  });
});
