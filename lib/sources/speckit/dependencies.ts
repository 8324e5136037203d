// `depends on T010` / `blocked by T003-T005` notes in a task's description. Pure.

const DEPENDS = /\b(?:depends?\s+on|blocked\s+by)\b:?([^)\n;]*)/gi;
/** A cheap pre-check for DEPENDS (same words, no captures, not global). */
const MAY_DEPEND = /\b(?:depends?\s+on|blocked\s+by)\b/i;
// A plain id may open a range (`T010-T012`, `T010..T012`, `T010 to T012`); suffixed ids stand alone.
const DEP_ID = /T(\d{3,})((?:\.\d+)+[A-Za-z]?|[A-Za-z](?![A-Za-z]))?(?:\s*(?:-|–|—|\.\.|to)\s*T(\d{3,})(?![\dA-Za-z]|\.\d))?/g;
const MAX_RANGE = 200;

/** Task ids named by `depends on …` / `blocked by …` text, ranges like `T010-T012` expanded. */
export function dependenciesOf(text: string, self?: string): string[] {
  // Most tasks have no dependency note: skip the clause scan for them. The scans run exec on the shared
  // regexes (matchAll would clone each one per call; a big tasks.md has thousands of notes).
  if (!MAY_DEPEND.test(text)) return [];
  const ids: string[] = [];
  DEPENDS.lastIndex = 0;
  for (let clause = DEPENDS.exec(text); clause; clause = DEPENDS.exec(text)) {
    const list = clause[1]!;
    DEP_ID.lastIndex = 0;
    for (let ref = DEP_ID.exec(list); ref; ref = DEP_ID.exec(list)) {
      const from = ref[1]!;
      const suffix = ref[2];
      const to = ref[3];
      if (suffix !== undefined) {
        ids.push(`T${from}${suffix}`);
        if (to !== undefined) ids.push(`T${to}`);
        continue;
      }
      if (to === undefined) {
        ids.push(`T${from}`);
        continue;
      }
      const first = Number(from);
      const last = Number(to);
      const width = from.length;
      if (last < first || last - first > MAX_RANGE) {
        ids.push(`T${from}`, `T${to}`);
        continue;
      }
      for (let n = first; n <= last; n += 1) ids.push(`T${String(n).padStart(width, '0')}`);
    }
  }
  return [...new Set(ids)].filter((id) => id !== self);
}
