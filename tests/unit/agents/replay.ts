import { readFileSync } from 'node:fs';
import { classifyRun } from '../../../lib/agents/classify.ts';
import { finalAnswer, newTranscript, record } from '../../../lib/agents/transcript.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from '../../../lib/agents/types.ts';
import type { ProcessResult } from '../../../lib/process/runner.ts';

const RECORDINGS = new URL('../../fixtures/recordings/', import.meta.url);

/** 2026-11-22 00:30 UTC, the day the recordings were made. */
export const NOW = Date.UTC(2026, 10, 22, 0, 30);

export function recording(name: string): string {
  return readFileSync(new URL(name, RECORDINGS), 'utf8');
}

export function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return { prompt: 'Say done', extraArgs: [], cwd: '/home/dev/project', ...overrides };
}

export function exited(exitCode: number | null, overrides: Partial<ProcessResult> = {}): ProcessResult {
  return { exitCode, signal: null, reason: 'exit', durationMs: 1000, stdoutBytes: 100, stderrTail: '', truncatedLines: 0, ...overrides };
}

export interface Replay {
  events: AgentEvent[];
  transcript: Transcript;
  answer: string;
  classify(process: ProcessResult, now?: number): Classification;
}

/** Feeds a recorded stdout (and stderr) through the adapter the way the loop does. */
export function replay(agent: Agent, stdoutFile?: string, stderrFile?: string): Replay {
  return feed(agent, stdoutFile ? recording(stdoutFile).split('\n') : [], stderrFile ? recording(stderrFile) : '');
}

/** Feeds stdout lines and a stderr text through the adapter the way the loop does. */
export function feed(agent: Agent, stdoutLines: readonly string[], stderr = ''): Replay {
  const transcript = newTranscript();
  const events: AgentEvent[] = [];
  for (const line of stdoutLines) {
    for (const event of agent.parseLine(line)) {
      events.push(event);
      record(transcript, event);
    }
  }
  for (const line of stderr.split('\n')) record(transcript, { kind: 'other', text: line });
  return {
    events,
    transcript,
    answer: finalAnswer(transcript),
    classify: (process, now = NOW) => classifyRun(agent, transcript, { ...process, stderrTail: process.stderrTail || stderr }, now),
  };
}

export function kinds(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.kind);
}

/** A prompt bigger than the argv limit (100 KiB). */
export const BIG_PROMPT = `# Task\n${'x'.repeat(110 * 1024)}`;
