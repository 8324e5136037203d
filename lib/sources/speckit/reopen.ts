// Undoing a finished task when the reviewer rejects it: the checkbox on its line goes back to `[ ]`. Pure.

/** tasks.md text with the checkbox of line `line` (1-based) opened; undefined when that line has none ticked. */
export function uncheckLine(text: string, line: number): string | undefined {
  const lines = text.split('\n');
  const at = line - 1;
  const current = lines[at];
  if (current === undefined) return undefined;
  // The first bracket pair after the bullet is the box (a `>` quote prefix has none).
  const match = /^(\s*(?:>\s*)*(?:[-*+]|\d{1,3}[.)])\s*)\[([^[\]]{0,3})\]/u.exec(current);
  if (!match || !match[2]!.trim()) return undefined;
  lines[at] = `${match[1]}[ ]${current.slice(match[0].length)}`;
  return lines.join('\n');
}
