const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|sec|min|s|m|h|d)/gy;

/** Parses `250ms`, `30s`, `5m`, `2h`, `1h30m` (and `0`) into milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const input = text.trim().toLowerCase();
  if (input === '0') return 0;
  if (input === '') return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let match = PART.exec(input); match; match = PART.exec(input)) {
    total += Number(match[1]) * (UNIT_MS[match[2]!] ?? NaN);
    consumed = PART.lastIndex;
  }
  if (consumed !== input.length || !Number.isFinite(total)) return undefined;
  return Math.round(total);
}

/** Renders milliseconds for people: `850ms`, `4.2s`, `3m 05s`, `2h 10m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  return `${minutes}m ${String(seconds).padStart(2, '0')}s`;
}
