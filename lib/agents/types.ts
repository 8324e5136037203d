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
  /** --isolate: the flags that start the CLI without the user's own hooks, plugins and MCP servers (see Isolation). */
  isolationArgs?: readonly string[];
}

/**
 * How a CLI starts without the user-level configuration (hooks, plugins, MCP servers) while the project's
 * own settings still apply: the flags, and what they cover. ralph turns this data into arguments
 * (lib/agents/isolation.ts); an adapter only decides where in its command line they go.
 */
export interface Isolation {
  args: readonly string[];
  /** A project file the flags above would drop too, handed back with `flag` when it exists (Claude's .mcp.json). */
  keepProjectFile?: { file: string; flag: string };
  /**
   * The CLI has no switch for all user-level MCP servers: each one named in `file` (its `mcpServers`
   * keys) is turned off with `flag`. The file is in `dir` under HOME, or in the folder `dirEnv` names.
   */
  disableUserServers?: { dir: string; dirEnv?: string; file: string; flag: string };
  /** The user settings file is swapped for an empty one with this flag (Amp). */
  emptySettingsFlag?: string;
  /** What --isolate turns off for this CLI. */
  covers: string;
  /** What still comes from the user's own configuration. */
  leaves: string;
}

/** Where a CLI keeps its login, settings and sessions: writable inside the sandbox. */
export interface AgentState {
  /** Paths relative to HOME (folders or files). */
  paths: readonly string[];
  /** Variables that move that state elsewhere (their value is a folder). */
  env?: readonly string[];
}

/** How a finished run is to be treated by the loop. */
export type Classification =
  | { kind: 'ok' }
  | { kind: 'transient'; reason: string }
  | { kind: 'usage_limit'; reason: string; resetAt?: number }
  /** `spent`: an account with nothing left (no credit): no wait helps, another agent (--fallback) may. */
  | { kind: 'fatal'; reason: string; hint: string; spent?: true }
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
  /** How --isolate keeps the user's own configuration out; undefined when the CLI has no way to. */
  readonly isolation?: Isolation;
  /** The CLI's own state (login, sessions), writable under --sandbox bwrap. */
  readonly state?: AgentState;
  /** What the CLI would refuse at once, before any work (claude skipping permissions as root): a one-line reason. */
  refuses?(command: Command, context: { uid?: number; env: NodeJS.ProcessEnv }): string | undefined;
}
