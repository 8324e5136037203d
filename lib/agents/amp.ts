import type { Command, ProcessResult } from '../process/runner.ts';
import { parseClaudeLine } from './claude.ts';
import { asString, endedWithoutResult, NESTED_SESSION_ENV, parseJsonObject } from './common.ts';
import type { Agent, AgentEvent, AgentRequest, Classification, Transcript } from './types.ts';

const LOGIN_PROMPT = /No API key found\. Starting login flow|ampcode\.com\/auth\/cli-login|paste your code here/i;

/** Reads one line of `amp -x --stream-json`: Claude's format, except that a failed result may carry `error`. */
export function parseAmpLine(line: string): AgentEvent[] {
  const events = parseClaudeLine(line);
  const result = events.find((event) => event.kind === 'result');
  if (result?.kind === 'result' && !result.text) {
    const error = asString(parseJsonObject(line)?.error);
    if (error) result.text = error;
  }
  return events;
}

export const amp: Agent = {
  name: 'amp',
  bin: 'amp',
  command(request: AgentRequest): Command {
    // `-x` with no message reads the prompt from stdin, which is then closed.
    const args = ['-x', '--dangerously-allow-all', '--stream-json'];
    if (request.model) args.push('-m', request.model);
    args.push(...(request.isolationArgs ?? []), ...request.extraArgs);
    return { bin: 'amp', args, stdin: request.prompt, env: { ...NESTED_SESSION_ENV } };
  },
  parseLine: parseAmpLine,
  isolation: {
    args: [],
    emptySettingsFlag: '--settings-file',
    covers: 'the user settings file (~/.config/amp/settings.json: MCP servers, permissions, tool settings), swapped for an empty one; the login (AMP_API_KEY or ~/.local/share/amp) still works',
    leaves: "nothing known beyond the workspace's own .amp/settings.json, which applies as it should (not verified against the real CLI)",
  },
  state: { paths: ['.config/amp', '.local/share/amp', '.cache/amp'] },
  classify(transcript: Transcript, process: ProcessResult): Classification | undefined {
    // Without AMP_API_KEY amp prints a login URL and waits for a code, whatever its exit.
    if (LOGIN_PROMPT.test([...transcript.otherText, process.stderrTail].join('\n'))) {
      return { kind: 'fatal', reason: 'amp is not logged in: it started its login flow', hint: 'set AMP_API_KEY (or run `amp login` once), then start ralph again' };
    }
    return endedWithoutResult(transcript, process);
  },
};
