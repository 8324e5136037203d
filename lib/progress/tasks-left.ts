// What is left of the work, in words: remaining and skipped tasks named separately, so a summary never
// says "2 remaining" while four tasks are still open.

/** `2 remaining`, `2 remaining, 2 skipped (T002, T003)`; at most `shown` ids before an ellipsis. */
export function describeTasksLeft(remaining: number, skippedIds: readonly string[] = [], shown = 6): string {
  if (skippedIds.length === 0) return `${remaining} remaining`;
  const ids = skippedIds.slice(0, shown).join(', ') + (skippedIds.length > shown ? `, … ${skippedIds.length - shown} more` : '');
  return `${remaining} remaining, ${skippedIds.length} skipped (${ids})`;
}

/** `1 iteration`, `3 iterations`: a count with its noun in the right number. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
