import { describe, expect, it } from 'vitest';
import { finalAnswer, newTranscript, record } from '../../../lib/agents/transcript.ts';
import type { AgentEvent } from '../../../lib/agents/types.ts';

/** Characters kept of the last message, and of all the assistant's text. */
const LAST_KEPT = 64 * 1024;
const ALL_KEPT = 64 * 1024;

/** What the transcript kept before it held its texts as pieces: the whole string, cut to its last `kept` past twice that. */
function reference(events: readonly AgentEvent[]): { lastText: string; assistantText: string } {
  let lastText = '';
  let assistantText = '';
  const bounded = (text: string, kept: number): string => (text.length > 2 * kept ? text.slice(-kept) : text);
  for (const event of events) {
    if (event.kind === 'text') {
      lastText = bounded(lastText + (lastText && !event.delta ? '\n' : '') + event.text, LAST_KEPT);
      assistantText = bounded(assistantText + (assistantText && !event.delta ? '\n' : '') + event.text, ALL_KEPT);
    } else if (event.kind === 'tool_call') lastText = '';
  }
  // Read: the last `kept` characters of what is held.
  return { lastText: lastText.slice(-LAST_KEPT), assistantText: assistantText.slice(-ALL_KEPT) };
}

describe('transcript texts', () => {
  it('keep exactly what the whole string cut to its end kept, however the text comes', () => {
    let seed = 7;
    const next = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let run = 0; run < 20; run += 1) {
      const events: AgentEvent[] = [];
      for (let index = 0; index < 400; index += 1) {
        const roll = next();
        if (roll < 0.05) events.push({ kind: 'tool_call', name: 'Bash', summary: 'ls' });
        else if (roll < 0.1) events.push({ kind: 'text', text: String(index).repeat(Math.floor(next() * 300_000)) });
        else events.push({ kind: 'text', text: roll < 0.2 ? '' : `part ${index} ${'x'.repeat(Math.floor(next() * 5000))}`, ...(roll < 0.5 ? { delta: true } : {}) });
        // Latin-1 text until, in most runs, a wider character (kept as two bytes from then on) or a surrogate pair comes.
        if (run % 4 !== 0 && next() < 0.02) events.push({ kind: 'text', text: next() < 0.5 ? 'é → wider' : 'ü 𝄞 pair' });
      }
      const transcript = newTranscript();
      // Read between events too: reading joins the pieces, and appending must go on from there.
      events.forEach((event, index) => {
        record(transcript, event);
        if (index % 97 === 0) void transcript.lastText;
      });
      const expected = reference(events);
      expect(transcript.lastText === expected.lastText && transcript.assistantText === expected.assistantText).toBe(true);
      expect(finalAnswer(transcript)).toBe(expected.lastText);
    }
  });

  it('can be set and spread like the plain fields they were', () => {
    const transcript = newTranscript();
    record(transcript, { kind: 'text', text: 'one' });
    transcript.lastText = 'reset';
    record(transcript, { kind: 'text', text: 'two' });
    expect({ ...transcript }).toMatchObject({ lastText: 'reset\ntwo', assistantText: 'one\ntwo' });
  });
});
