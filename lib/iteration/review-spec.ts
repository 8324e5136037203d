// What --review and --fallback name: its own module, read at start-up without loading the reviewer's machinery.

/** `--review codex`, `--fallback claude:opus` → agent and model; undefined for off (`none`, empty). Pure. */
export function parseReviewSpec(value: string | undefined): { agent: string; model?: string } | undefined {
  const text = value?.trim();
  if (!text || text.toLowerCase() === 'none' || text.toLowerCase() === 'off') return undefined;
  // Model names may hold colons themselves (`openrouter/x:free`): split at the first one only.
  const colon = text.indexOf(':');
  if (colon === -1) return { agent: text };
  const model = text.slice(colon + 1).trim();
  return { agent: text.slice(0, colon).trim(), ...(model ? { model } : {}) };
}
