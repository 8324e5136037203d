import { describe, expect, it } from 'vitest';
import { parseClaudeLine } from '../../../lib/agents/claude.ts';
import { parseCodexLine } from '../../../lib/agents/codex.ts';
import { claimsCompletion, COMPLETION_TOKEN } from '../../../lib/completion.ts';
import { LineSplitter } from '../../../lib/process/line-splitter.ts';
import { LongLine } from '../../../lib/process/long-line.ts';

const MiB = 1024 * 1024;

/** Runs `text` through a LineSplitter that reads lines over `longLine` bytes by the bounded scan, in `chunk`-byte pieces. */
function lines(text: string | Buffer, longLine = 64 * 1024, chunk = 65_536): { lines: string[]; long: number } {
  const out: string[] = [];
  const splitter = new LineSplitter((line) => out.push(line), undefined, longLine);
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  for (let at = 0; at < bytes.length; at += chunk) splitter.push(bytes.subarray(at, at + chunk));
  splitter.end();
  return { lines: out, long: splitter.longLines };
}

/** The final line of `claude -p --output-format stream-json`, with `answer` as its result. */
function resultLine(answer: string): string {
  return JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    duration_ms: 61234,
    num_turns: 17,
    result: answer,
    session_id: 'c0ffee',
    total_cost_usd: 1.2345,
    usage: { input_tokens: 1200, cache_read_input_tokens: 30000, cache_creation_input_tokens: 500, output_tokens: 45000 },
    permission_denials: [],
  });
}

const filler = (lineCount: number): string => Array.from({ length: lineCount }, (_, index) => `line ${index}: some "quoted" text, a \\ backslash, é and 𝄞`).join('\n');

describe('LongLine', () => {
  it('reads the final answer and the completion token of a huge result line like the whole line', () => {
    const answers = [
      `${filler(60_000)}\n\nAll stories pass.\n${COMPLETION_TOKEN}`,
      `${filler(30_000)}\n${COMPLETION_TOKEN}\n${filler(30_000)}`,
      `${filler(30_000)}\n\`\`\`\n${COMPLETION_TOKEN}\n\`\`\`\n${filler(30_000)}`,
      `${filler(60_000)}\nI cannot say ${COMPLETION_TOKEN}`,
      `${filler(60_000)}\nDone. ${COMPLETION_TOKEN}`,
    ];
    for (const answer of answers) {
      const whole = resultLine(answer);
      expect(whole.length).toBeGreaterThan(3 * MiB);
      const read = lines(`{"type":"system","subtype":"init","model":"m"}\n${whole}\n`);
      expect(read.long).toBe(1);
      expect(read.lines[1]!.length).toBeLessThan(MiB);
      const [full] = parseClaudeLine(whole);
      const [bounded] = parseClaudeLine(read.lines[1]!);
      expect(bounded).toEqual({ ...full, text: expect.any(String) });
      if (bounded?.kind !== 'result' || full?.kind !== 'result') throw new Error('no result event');
      expect(claimsCompletion(bounded.text)).toBe(claimsCompletion(full.text));
      // The answer's end is there as written; its start too.
      expect(full.text.endsWith(bounded.text.slice(bounded.text.lastIndexOf('\n', bounded.text.length - 2000)))).toBe(true);
      expect(full.text.startsWith(bounded.text.slice(0, 1000))).toBe(true);
    }
    expect(answers.map((answer) => claimsCompletion(answer))).toEqual([true, true, false, false, true]);
  });

  it('keeps every short field, in order, around long strings; an escaped quote split across reads does not end a string', () => {
    const big = `${'\\"'.repeat(300_000)}"x\\\\`;
    const event = { type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: big, extra: [1, 2.5e-3, true, null, { deep: 'yes' }] }, after: 'kept' };
    const whole = JSON.stringify(event);
    for (const chunk of [1 + 4096, 65_536, 333_333]) {
      const [line] = lines(`${whole}\n`, 100_000, chunk).lines;
      const read = JSON.parse(line!) as typeof event;
      expect({ ...read, item: { ...read.item, text: '' } }).toEqual({ ...event, item: { ...event.item, text: '' } });
      expect(read.item.text).toContain('bytes left out here');
      expect(big.startsWith(read.item.text.slice(0, 1000))).toBe(true);
      expect(big.endsWith(read.item.text.slice(-1000))).toBe(true);
      expect(parseCodexLine(line!)).toEqual([expect.objectContaining({ kind: 'text' })]);
    }
  });

  it('keeps the line small however many long strings it holds, and valid JSON', () => {
    const event = { type: 'user', message: { content: Array.from({ length: 400 }, (_, index) => ({ type: 'tool_result', tool_use_id: `t${index}`, content: 'x'.repeat(50_000) })) } };
    const whole = JSON.stringify(event);
    expect(whole.length).toBeGreaterThan(19 * MiB);
    const [line] = lines(`${whole}\n`).lines;
    expect(line!.length).toBeLessThan(3 * MiB);
    const read = JSON.parse(line!) as typeof event;
    expect(read.type).toBe('user');
    expect(read.message.content[0]!.content).toBe('x'.repeat(50_000));
    expect(read.message.content.length).toBeLessThan(400);
    expect(read.message.content.at(-1)!.content).toMatch(/^x+ \[ralph: \d+ bytes left out here; the iteration log has them all\] x+$/);
  });

  it('hands on a long line that is not a JSON object, or stops being one, as its head and tail', () => {
    const text = `${'words '.repeat(400_000)}the end`;
    const [plain] = lines(`${text}\r\n`).lines;
    expect(plain).toMatch(/^words words .* \[ralph: \d+ bytes left out here; the iteration log has them all\] .*words the end$/);
    expect(plain!.length).toBeLessThan(MiB);
    const cut = resultLine(filler(60_000)).slice(0, -40);
    const [broken] = lines(`${cut}\nnext\n`).lines;
    expect(broken!.startsWith('{"type":"result"')).toBe(true);
    expect(cut.endsWith(broken!.slice(broken!.indexOf('all] ') + 5))).toBe(true);
    expect(parseClaudeLine(broken!)).toEqual([{ kind: 'other', text: broken }]);
  });

  it('leaves the lines around a long one as they are, and reads lines up to the limit whole', () => {
    const big = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'y'.repeat(300_000) }] } });
    const exact = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'z'.repeat(100_000 - 100) }] } });
    const padded = exact + ' '.repeat(100_000 - exact.length);
    const read = lines(`a\r\n${big}\nb\n${padded}\nc`, 100_000, 7_000);
    expect(read.long).toBe(1);
    expect(read.lines.map((line) => (line.length > 80 ? line.slice(0, 20) : line))).toEqual(['a', '{"type":"assistant",', 'b', '{"type":"assistant",', 'c']);
    expect(read.lines[3]).toBe(padded);
  });

  it('never holds the line: a LongLine keeps a bounded amount whatever it is fed', () => {
    const long = new LongLine();
    long.push(Buffer.from('{"type":"assistant","message":{"content":[{"type":"text","text":"'));
    const piece = Buffer.alloc(MiB, 'a');
    for (let index = 0; index < 64; index += 1) long.push(piece);
    long.push(Buffer.from('"}]}}'));
    const line = long.end();
    expect(line.length).toBeLessThan(600 * 1024);
    expect(JSON.parse(line)).toEqual({ type: 'assistant', message: { content: [{ type: 'text', text: expect.stringMatching(/^a+ \[ralph: 66\d{6} bytes left out here/) }] } });
  });
});
