import type { Command, ProcessResult } from '../process/runner.ts';

/** The one event stream every adapter produces; the loop, view and logs see only these. */
export type AgentEvent =
  | { kind: 'init'; model?: string; sessionId?: string }
  /** `delta`: a fragment of a streamed message (Gemini), joined to the previous text without a line break. */
  | { kind: 'text'; text: string; delta?: boolean }
  | { kind: 'tool_call'; name: string; summary: string }
  | { kind: 'tool_result'; text: string; isError: boolean }
  | { kind: 'retry'; attempt?: number; delayMs?: number; status?: number; message?: string }
  | { kind: 'rate_limit'; status: 'allowed' | 'rejected'; resetsAt?: number; limitType?: string }
  | {
      kind: 'result';
      text: string;
      isError: boolean;
      subtype?: string;
      turns?: number;
      inputTokens?: number;
      outputTokens?: number;
      costUsd?: number;
      apiErrorStatus?: number;
      apiError?: string;
    }
  | { kind: 'error'; message: string; status?: number; errorType?: string }
  /** A line the adapter could not read as an event (plain text, banners, garbage). */
  | { kind: 'other'; text: string };

export interface AgentRequest {
  prompt: string;
  model?: string;
  profile?: string;
  extraArgs: readonly string[];
  cwd: string;
}

/** How a finished run is to be treated by the loop. */
export type Classification =
  | { kind: 'ok' }
  | { kind: 'transient'; reason: string }
  | { kind: 'usage_limit'; reason: string; resetAt?: number }
  | { kind: 'fatal'; reason: string; hint: string }
  | { kind: 'timeout'; reason: string };

/** Everything read from one run's output, gathered event by event. */
export interface Transcript {
  result?: Extract<AgentEvent, { kind: 'result' }>;
  /** Assistant text since the last tool call: the final answer when there is no result event. */
  lastText: string;
  /** All assistant text of the run (its last 256K characters or more), for parsers that read the agent's report. */
  assistantText: string;
  errors: Extract<AgentEvent, { kind: 'error' }>[];
  rateLimit?: Extract<AgentEvent, { kind: 'rate_limit' }>;
  retries: number;
  toolCalls: number;
  otherText: string[];
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** One agent CLI: how to call it headless and how to read what it prints. Pure. */
export interface Agent {
  readonly name: string;
  /** Executable looked up on PATH. */
  readonly bin: string;
  command(request: AgentRequest): Command;
  parseLine(line: string): AgentEvent[];
  /** Agent-specific verdicts checked before the generic rules (fatal setup texts and the like). */
  classify?(transcript: Transcript, process: ProcessResult, now: number): Classification | undefined;
}
