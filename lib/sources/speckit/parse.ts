// Reads a Spec Kit tasks.md into tasks and the phases that hold them. Pure: text in, data out.

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

export interface SpeckitTask {
  id: string;
  /** The description after the markers, e.g. `Create User model in src/models/user.py`. */
  title: string;
  /** The task as written after the checkbox, markers included: `T012 [P] [US1] Create …`. */
  text: string;
  done: boolean;
  parallel: boolean;
  /** `US1` from the `[US1]` marker, else the story of the group. */
  story?: string;
  /** Index into `ParsedTasks.groups`. */
  group: number;
  /** The `###` heading above the task, e.g. `Implementation for User Story 1`. */
  section?: string;
  dependsOn: string[];
  /** 1-based line number in tasks.md. */
  line: number;
}

export interface ParsedTasks {
  /** The `# Tasks: …` title. */
  title?: string;
  groups: TaskGroup[];
  tasks: SpeckitTask[];
  /** Things worth a warning (duplicate ids, dependencies on unknown ids). */
  warnings: string[];
}

const TASK_LINE = /^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s+\**(T\d{3,})\b\**\s*(.*)$/;
const MARKER = /^\[(P|US\d+)\]\s*/i;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s*(`{3,}|~{3,})/;
const GROUP_HEADING = /^(?:Phase\s+[0-9A-Z]+\b|User Story\s+\d+\b)/i;
/** Sections of the tasks template that explain rather than list work; their checkboxes are examples. */
const PROSE_HEADING =
  /^(?:format\b|path conventions|table of contents|contents\b|dependencies\b|parallel (?:example|opportunities|execution)|implementation strategy|execution (?:order|strategy)|notes?\b|summary\b|task summary|validation checklist|suggested mvp|mvp scope|references?\b)/i;
const DEPENDS = /\b(?:depends?\s+on|blocked\s+by)\b:?([^)\n;]*)/gi;
/** A cheap pre-check for DEPENDS (same words, no captures, not global). */
const MAY_DEPEND = /\b(?:depends?\s+on|blocked\s+by)\b/i;
const DEP_ID = /T(\d{3,})(?:\s*(?:-|–|—|\.\.|to)\s*T(\d{3,}))?/g;
const MAX_RANGE = 200;

/** Parses tasks.md (LF or CRLF). Checkbox-looking lines in code fences, HTML comments, front matter and prose sections are not tasks. */
export function parseTasksMd(text: string): ParsedTasks {
  const lines = text.split(/\r?\n/);
  const result: ParsedTasks = { groups: [], tasks: [], warnings: [] };
  const firstLine = new Map<string, number>();
  let fence: string | undefined;
  let inComment = false;
  let prose = false;
  let group: TaskGroup | undefined;
  let section: string | undefined;

  let start = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((line, index) => index > 0 && line.trim() === '---');
    if (end > 0) start = end + 1;
  }

  for (let index = start; index < lines.length; index += 1) {
    const line = lines[index]!;
    const lineNumber = index + 1;
    if (fence) {
      const close = FENCE.exec(line);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length && line.trim() === close[1]) fence = undefined;
      continue;
    }
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      continue;
    }
    const open = FENCE.exec(line);
    if (open) {
      fence = open[1];
      continue;
    }
    if (/^\s*<!--/.test(line) && !line.includes('-->')) {
      inComment = true;
      continue;
    }

    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const title = heading[2]!;
      if (level === 1) {
        result.title ??= title.replace(/^Tasks:\s*/i, '');
        prose = false;
        group = undefined;
        section = undefined;
      } else if (PROSE_HEADING.test(title)) {
        if (level <= 2 || !group || prose) prose = true;
        else section = title;
      } else if (level === 2 || (!prose && GROUP_HEADING.test(title))) {
        prose = false;
        group = newGroup(result.groups.length, title, lineNumber);
        result.groups.push(group);
        section = undefined;
      } else if (!prose) {
        section = title;
      }
      continue;
    }
    if (prose) continue;

    const match = TASK_LINE.exec(line);
    if (!match) continue;
    const id = match[2]!;
    const seen = firstLine.get(id);
    if (seen !== undefined) {
      result.warnings.push(`${id} appears twice in tasks.md (lines ${seen} and ${lineNumber}): only the first counts`);
      continue;
    }
    firstLine.set(id, lineNumber);
    if (!group) {
      group = newGroup(result.groups.length, '(tasks without a phase)', lineNumber);
      result.groups.push(group);
    }
    result.tasks.push(readTask(id, match[1] !== ' ', match[3]!, group, section, lineNumber));
  }

  const known = new Set(result.tasks.map((task) => task.id));
  for (const task of result.tasks) {
    const unknown = task.dependsOn.filter((dep) => !known.has(dep));
    if (unknown.length > 0) result.warnings.push(`${task.id} depends on ${unknown.join(', ')}, not found in tasks.md: that dependency is ignored`);
    task.dependsOn = task.dependsOn.filter((dep) => known.has(dep));
  }
  return result;
}

function readTask(id: string, done: boolean, rawRest: string, group: TaskGroup, section: string | undefined, line: number): SpeckitTask {
  let rest = rawRest.trim().replace(/^[:.\-–—]\s*/, '');
  let parallel = false;
  let story: string | undefined;
  for (let marker = MARKER.exec(rest); marker; marker = MARKER.exec(rest)) {
    const word = marker[1]!.toUpperCase();
    if (word === 'P') parallel = true;
    else story ??= word;
    rest = rest.slice(marker[0].length).replace(/^[:\-–—]\s*/, '');
  }
  const title = rest.trim();
  const text = `${id} ${rawRest.trim().replace(/^[:.]\s*/, '')}`.trim();
  return { id, title, text, done, parallel, story: story ?? group.story?.id, group: group.index, section, dependsOn: dependenciesOf(title, id), line };
}

/** Task ids named by `depends on …` / `blocked by …` text, ranges like `T010-T012` expanded. */
export function dependenciesOf(text: string, self?: string): string[] {
  const ids: string[] = [];
  // Most tasks have no dependency note: skip the clause scan (matchAll clones its regex) for them.
  if (!MAY_DEPEND.test(text)) return ids;
  for (const clause of text.matchAll(DEPENDS)) {
    for (const ref of clause[1]!.matchAll(DEP_ID)) {
      const from = ref[1]!;
      const to = ref[2];
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

function newGroup(index: number, heading: string, line: number): TaskGroup {
  const group: TaskGroup = { index, heading, line };
  const phase = /^Phase\s+([0-9A-Z]+)\b/i.exec(heading);
  if (phase) group.phase = phase[1];
  const story = /\bUser Story\s+(\d+)\b\s*(?:[-–—:]\s*)?(.*)$/i.exec(heading);
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
  const match = /^P(\d+)$/i.exec(priority ?? '');
  return match ? Number(match[1]) : undefined;
}

/** Unchecked `- [ ]` items outside code fences (for checklists/*.md). */
export function countUnchecked(text: string): number {
  let fence = false;
  let count = 0;
  for (const line of text.split(/\r?\n/)) {
    if (FENCE.test(line)) {
      fence = !fence;
      continue;
    }
    if (!fence && /^\s*(?:[-*+]|\d+[.)])\s+\[ \]\s/.test(line)) count += 1;
  }
  return count;
}
