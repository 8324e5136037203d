/** Variables that make an agent CLI behave differently when ralph itself runs inside an agent session. */
export const NESTED_SESSION_ENV: Record<string, undefined> = {
  CLAUDECODE: undefined,
  CLAUDE_CODE_ENTRYPOINT: undefined,
  CLAUDE_CODE_SSE_PORT: undefined,
  CLAUDE_CODE: undefined,
  BD_AGENT_MODE: undefined,
};

/** Parses one JSON line; undefined for anything that is not a JSON object. */
export function parseJsonObject(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A one-line description of a tool call's input for the live view. */
export function summarizeInput(input: unknown): string {
  const record = asRecord(input);
  if (!record) return '';
  const preferred = ['command', 'file_path', 'path', 'pattern', 'url', 'description', 'prompt'];
  for (const key of preferred) {
    const value = asString(record[key]);
    if (value) return oneLine(value);
  }
  return oneLine(JSON.stringify(record));
}

export function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
