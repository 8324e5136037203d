import type { AgentEvent, Transcript } from './types.ts';

const OTHER_TEXT_KEPT = 50;
const TEXT_KEPT = 256 * 1024;

/** Keeps the last TEXT_KEPT characters, trimming only past twice that so a flood costs O(1) per byte. */
function bounded(text: string): string {
  return text.length > 2 * TEXT_KEPT ? detached(text.slice(-TEXT_KEPT)) : text;
}

/** A copy that does not keep its (possibly huge) parent string alive, as a V8 slice would. */
function detached(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

export function newTranscript(): Transcript {
  return { lastText: '', assistantText: '', errors: [], retries: 0, toolCalls: 0, otherText: [], inputTokens: 0, outputTokens: 0, costUsd: 0 };
}

/** Folds one event into the transcript. */
export function record(transcript: Transcript, event: AgentEvent): void {
  switch (event.kind) {
    case 'text':
      transcript.lastText = bounded(transcript.lastText + (transcript.lastText && !event.delta ? '\n' : '') + event.text);
      transcript.assistantText = bounded(transcript.assistantText + (transcript.assistantText && !event.delta ? '\n' : '') + event.text);
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
