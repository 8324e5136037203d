// Phase and user-story headings of tasks.md as task groups. Pure.

/** A user story named by a phase heading such as `Phase 3: User Story 1 - Sign in (Priority: P1) 🎯 MVP`. */
export interface StoryInfo {
  id: string;
  title: string;
  /** `P1`, `P2`, … when the heading gives one. */
  priority?: string;
  mvp: boolean;
}

/** One `##` section that holds tasks: a phase, a user story or any other non-prose heading. */
export interface TaskGroup {
  index: number;
  heading: string;
  /** `1`, `2`, `N`, … from `Phase 1:`. */
  phase?: string;
  story?: StoryInfo;
  line: number;
}

/** The group a heading opens: its phase number and user story (id, title, priority, MVP) when it names them. */
export function newGroup(index: number, heading: string, line: number): TaskGroup {
  const group: TaskGroup = { index, heading, line };
  const phase = /^Phase\s*([0-9A-Z]+)\b/i.exec(heading);
  if (phase) group.phase = phase[1];
  const story = /\bUser\s*Story\s*(\d+)\b\s*(?:[-–—:]\s*)?(.*)$/i.exec(heading);
  if (story) {
    const rest = story[2] ?? '';
    const priority = /\(Priority:\s*(P\d+)\s*\)/i.exec(rest)?.[1]?.toUpperCase();
    const title = rest
      .replace(/\(Priority:[^)]*\)/i, '')
      .replace(/🎯.*$/u, '')
      .replace(/\bMVP\b/, '')
      .trim()
      .replace(/[-–—:]\s*$/, '')
      .trim();
    group.story = { id: `US${story[1]}`, title, priority, mvp: /\bMVP\b/.test(rest) };
  }
  return group;
}

/** `P2` → 2; undefined when there is no priority. */
export function priorityNumber(priority: string | undefined): number | undefined {
  if (priority === undefined) return undefined;
  // Asked once per task of a snapshot, with a handful of distinct values.
  let known = priorities.get(priority);
  if (known === undefined) {
    const match = /^P(\d+)$/i.exec(priority);
    known = match ? Number(match[1]) : null;
    if (priorities.size < 100) priorities.set(priority, known);
  }
  return known ?? undefined;
}

const priorities = new Map<string, number | null>();

