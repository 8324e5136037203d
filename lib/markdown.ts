/** Which lines of a Markdown text sit inside fenced code blocks (fence lines included). */
export function fencedLines(lines: readonly string[]): { fenced: Set<number>; openFence: boolean } {
  const fenced = new Set<number>();
  let inFence = false;
  lines.forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      fenced.add(index);
    } else if (inFence) fenced.add(index);
  });
  return { fenced, openFence: inFence };
}
