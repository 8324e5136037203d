import type { AgentEvent, Transcript } from './types.ts';

const OTHER_TEXT_KEPT = 50;
/** Characters kept of the last message (the final answer: the completion token, a question). */
const LAST_TEXT_KEPT = 64 * 1024;
/**
 * Characters kept of all the assistant's text (what the sources read the agent's report and learnings
 * from, at its end). Smaller: it outlives the run of the agent, through gates, commits and records, and
 * four workers ending together with 512K characters each made V8 double its young generation (+20 MB).
 */
const ALL_TEXT_KEPT = 64 * 1024;
const LF = 0x0a;

/** Keeps the last `kept` characters, trimming only past twice that so a flood costs O(1) per byte. */
function bounded(text: string, kept: number): string {
  return text.length > 2 * kept ? detached(text.slice(-kept)) : text;
}

/** A copy that does not keep its (possibly huge) parent string alive, as a V8 slice would. */
function detached(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** A character that Latin-1 cannot hold. */
const WIDE = /[^\x00-\xff]/;

/**
 * The end of a growing text (bounded() held, its last `kept` characters read), outside the JavaScript heap as code units, one
 * byte each (Latin-1) until a wider character comes, then two (UTF-16): an append costs a copy of the piece,
 * never of all kept so far, and nothing the agent prints outlives the next garbage collection (a flood of
 * 100,000 lines would otherwise keep 512K characters of strings alive, which makes V8 grow its young
 * generation). Decoded when read, character for character.
 */
class TextTail {
  private units = Buffer.alloc(0);
  /** Bytes per code unit. */
  private width: 1 | 2 = 1;
  private length = 0;
  private joined: string | undefined = '';

  /** `kept`: the characters bounded() keeps of it. */
  constructor(private readonly kept: number) {}

  /**
   * Appends `text`, after a line break when `newLine` and something is kept already. The break is written
   * on its own: `\n${text}` would be a new string, copied whole (flattened) by the write.
   */
  append(text: string, newLine = false): void {
    const lead = newLine && this.length > 0 ? 1 : 0;
    if (text.length === 0 && lead === 0) return;
    this.joined = undefined;
    if (this.width === 1 && WIDE.test(text)) this.widen();
    const total = this.length + lead + text.length;
    if (total <= 2 * this.kept) {
      this.reserve(total);
      if (lead) this.writeBreak(this.length);
      this.units.write(text, (this.length + lead) * this.width, this.encoding());
      this.length = total;
      return;
    }
    // Past twice the limit: the last `kept` characters of what was kept, the break and the new text.
    this.reserve(this.kept);
    const fromText = Math.min(text.length, this.kept);
    const fromLead = Math.min(lead, this.kept - fromText);
    const fromKept = this.kept - fromText - fromLead;
    if (fromKept > 0) this.units.copy(this.units, 0, (this.length - fromKept) * this.width, this.length * this.width);
    if (fromLead) this.writeBreak(fromKept);
    this.units.write(fromText === text.length ? text : text.slice(-fromText), (fromKept + fromLead) * this.width, this.encoding());
    this.length = this.kept;
  }

  set(text: string): void {
    this.length = 0;
    this.append(text);
  }

  toString(): string {
    // The last `kept` characters, however many past it are held until the next trim.
    if (this.joined === undefined) this.joined = this.units.toString(this.encoding(), Math.max(0, this.length - this.kept) * this.width, this.length * this.width);
    return this.joined;
  }

  private encoding(): 'latin1' | 'utf16le' {
    return this.width === 1 ? 'latin1' : 'utf16le';
  }

  private writeBreak(at: number): void {
    if (this.width === 1) this.units[at] = LF;
    else this.units.writeUInt16LE(LF, at * 2);
  }

  /** From one byte per code unit to two, the units kept as they were. */
  private widen(): void {
    const wide = Buffer.allocUnsafe(Math.max(this.units.length, 1024) * 2);
    wide.write(this.units.toString('latin1', 0, this.length), 0, 'utf16le');
    this.units = wide;
    this.width = 2;
  }

  /** Room for `units` code units (grown by doubling, at most to twice the limit). */
  private reserve(units: number): void {
    if (this.units.length >= units * this.width) return;
    // Twice the room there is now (in code units), at least what is asked for.
    const capacity = Math.min(2 * this.kept, Math.max(units, (2 * this.units.length) / this.width, 1024));
    const bigger = Buffer.allocUnsafe(capacity * this.width);
    this.units.copy(bigger, 0, 0, this.length * this.width);
    this.units = bigger;
  }
}

const TAILS = new WeakMap<Transcript, { last: TextTail; all: TextTail }>();

export function newTranscript(): Transcript {
  const last = new TextTail(LAST_TEXT_KEPT);
  const all = new TextTail(ALL_TEXT_KEPT);
  const transcript: Transcript = {
    get lastText() {
      return last.toString();
    },
    set lastText(text: string) {
      last.set(text);
    },
    get assistantText() {
      return all.toString();
    },
    set assistantText(text: string) {
      all.set(text);
    },
    errors: [],
    retries: 0,
    toolCalls: 0,
    otherText: [],
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
  };
  TAILS.set(transcript, { last, all });
  return transcript;
}

/** Appends assistant text to both texts of the transcript (a line break between messages, none before a delta). */
function appendText(transcript: Transcript, text: string, delta: boolean | undefined): void {
  const tails = TAILS.get(transcript);
  if (!tails) {
    transcript.lastText = bounded(transcript.lastText + (transcript.lastText && !delta ? '\n' : '') + text, LAST_TEXT_KEPT);
    transcript.assistantText = bounded(transcript.assistantText + (transcript.assistantText && !delta ? '\n' : '') + text, ALL_TEXT_KEPT);
    return;
  }
  tails.last.append(text, !delta);
  tails.all.append(text, !delta);
}

/** Folds one event into the transcript. */
export function record(transcript: Transcript, event: AgentEvent): void {
  switch (event.kind) {
    case 'text':
      appendText(transcript, event.text, event.delta);
      break;
    case 'tool_call':
      transcript.toolCalls += 1;
      transcript.lastText = '';
      break;
    case 'retry':
      transcript.retries += 1;
      break;
    case 'rate_limit':
      if (event.status === 'rejected' || !transcript.rateLimit) transcript.rateLimit = event;
      break;
    case 'result':
      // Copilot, Gemini, Codex and opencode end with a result that carries no text: their answer is the last
      // words, and a failure is described by the last error.
      transcript.result = event.text ? event : { ...event, text: event.isError ? (transcript.errors.at(-1)?.message ?? '') : transcript.lastText };
      transcript.inputTokens += event.inputTokens ?? 0;
      transcript.outputTokens += event.outputTokens ?? 0;
      transcript.costUsd += event.costUsd ?? 0;
      break;
    case 'error':
      transcript.errors.push(event);
      break;
    case 'other':
      if (event.text.trim()) {
        transcript.otherText.push(event.text.length > 2000 ? detached(event.text.slice(0, 2000)) : event.text);
        if (transcript.otherText.length > OTHER_TEXT_KEPT) transcript.otherText.shift();
      }
      break;
    default:
      break;
  }
}

/** The agent's final answer: the result text when there is one, else its last words. */
export function finalAnswer(transcript: Transcript): string {
  return transcript.result?.text ?? transcript.lastText;
}

/** All the text a failure could be described by, for the classifiers' patterns. */
export function failureText(transcript: Transcript, stderrTail: string): string {
  return [
    transcript.result?.text ?? '',
    ...transcript.errors.map((error) => error.message),
    transcript.lastText,
    ...transcript.otherText,
    stderrTail,
  ].join('\n');
}
