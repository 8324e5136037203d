// Reads a Spec Kit tasks.md into tasks and the phases that hold them. Pure: text in, data out.
//
// Every line that looks like a task checkbox outside fenced code is accounted for: it is a task, or a
// "stray" line the feature cannot complete past while it is open (an id ralph cannot read, a mark it
// cannot interpret, a task written outside the phases), or a copy of a task (the same id and description
// written again, as a summary does) that follows its task. Repeated ids follow the rule in repeats.ts.
import { dependenciesOf } from './dependencies.ts';
import { newGroup } from './groups.ts';
import { assembleTasks, type Candidate } from './repeats.ts';
import { readCheckbox, readTaskLine } from './task-line.ts';

export { dependenciesOf } from './dependencies.ts';
export { newGroup, priorityNumber } from './groups.ts';

export type { StoryInfo, TaskGroup } from './groups.ts';
import type { TaskGroup } from './groups.ts';

export type { CopyLine, ParsedTasks, SpeckitTask, StrayLine } from './model.ts';
import type { CopyLine, ParsedTasks, SpeckitTask } from './model.ts';

/** One `[P]`/`[US1]` marker at `lastIndex`, with the spaces and one `:`/dash after it. */
const MARKER = /\[(P|US\d+)\]\s*(?:[:\-–—]\s*)?/iy;
// Regex literals inside the loops would be a new RegExp object per line: they live here.
const BEFORE_MARKERS = /^[:.\-–—]\s*/;
const BEFORE_TEXT = /^[:.]\s*/;
const COMMENT_OPEN = /^\s*<!--/;
// `## Phase 1` and, as squeezed files write it, `##Phase1`.
const HEADING = /^(#{1,6})(?:\s+|(?=[A-Za-z]))(.*?)\s*#*\s*$/;
const FENCE = /^\s*(`{3,}|~{3,})/;
const GROUP_HEADING = /^(?:Phase\s*[0-9A-Z]+\b|User\s*Story\s*\d+\b)/i;
/** Sections of the tasks template that explain rather than list work; their checkboxes are examples. */
const PROSE_HEADING =
  /^(?:format\b|path conventions|table of contents|contents\b|dependencies\b|parallel (?:example|opportunities|execution)|implementation strategy|execution (?:order|strategy)|notes?\b|summary\b|task summary|validation checklist|suggested mvp|mvp scope|references?\b)/i;
/** A summary's heading, wherever the word stands (`Task Checklist Summary`, `Recap`), unless it names a phase. */
const SUMMARY_HEADING = /\b(?:summary|recap|at a glance|quick reference)\b/i;

/** Whether a heading explains rather than lists work, and whether it is a summary's. */
function proseKind(title: string): { prose: boolean; summary: boolean } {
  const summary = SUMMARY_HEADING.test(title) && !GROUP_HEADING.test(title);
  return { prose: summary || PROSE_HEADING.test(title), summary };
}

/** Parses tasks.md (LF or CRLF, with or without a BOM). Fenced code, HTML comments and front matter hold no tasks. */
export function parseTasksMd(input: string): ParsedTasks {
  const lines = input.replace(/^\uFEFF/, '').split(/\r?\n/);
  const result: ParsedTasks = { groups: [], tasks: [], strays: [], copies: [], checkboxes: { count: 0, openWithoutId: 0 }, warnings: [] };
  const candidates: Candidate[] = [];
  let fence: string | undefined;
  let inComment = false;
  let prose: string | undefined;
  let summary = false;
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
    // Most lines start with a bullet or a word: a fence or a comment can only open after white space or
    // with its own character, a heading only with `#`. The patterns run where they can match.
    const first = line.charCodeAt(0);
    const printable = first > 0x20 && first < 0x7f;
    const open = !printable || first === 0x60 || first === 0x7e ? FENCE.exec(line) : null;
    if (open) {
      fence = open[1];
      continue;
    }
    if ((!printable || first === 0x3c) && COMMENT_OPEN.test(line) && !line.includes('-->')) {
      inComment = true;
      continue;
    }

    const heading = first === 0x23 ? HEADING.exec(line) : null;
    if (heading) {
      const level = heading[1]!.length;
      const title = heading[2]!;
      if (level === 1) {
        result.title ??= title.replace(/^Tasks:\s*/i, '');
        prose = undefined;
        group = undefined;
        section = undefined;
      } else if (proseKind(title).prose) {
        if (level <= 2 || !group || prose !== undefined) {
          // A summary's own subheadings (`### Phase 2: Foundational (4 tasks)`) stay in the summary.
          if (prose === undefined || level <= 2) summary = proseKind(title).summary;
          prose = title;
        } else section = title;
      } else if (level === 2 || (prose === undefined && GROUP_HEADING.test(title))) {
        prose = undefined;
        group = newGroup(result.groups.length, title, lineNumber);
        result.groups.push(group);
        section = undefined;
      } else if (prose === undefined) {
        section = title;
      }
      continue;
    }

    const checkbox = readCheckbox(line);
    if (!checkbox) continue;
    const counts = result.checkboxes;
    counts.count += 1;
    counts.first ??= { line: lineNumber, text: line.trim() };
    const found = readTaskLine(line, checkbox);
    if (!found) {
      if (checkbox.state === 'open' && prose === undefined) {
        counts.openWithoutId += 1;
        counts.firstOpenWithoutId ??= { line: lineNumber, text: line.trim() };
      }
      continue;
    }
    const text = line.trim();
    if (found.kind === 'malformed') {
      result.strays.push({ line: lineNumber, text, state: found.state, why: `${found.why} (ralph reads ids like T001, T002a, T102.1)` });
    } else if (found.quoted) {
      result.strays.push({ line: lineNumber, text, state: found.state, why: 'it is quoted (a > block), not a task list item' });
    } else if (found.state === 'unknown') {
      result.strays.push({ line: lineNumber, text, state: 'unknown', why: `ralph cannot tell whether [${found.box}] means done: write [x] or [ ]` });
    } else if (prose !== undefined) {
      candidates.push({ id: found.id, done: found.state === 'done', after: found.after, line: lineNumber, text, prose, summary });
    } else {
      if (!group) {
        group = newGroup(result.groups.length, '(tasks without a phase)', lineNumber);
        result.groups.push(group);
      }
      candidates.push({ id: found.id, done: found.state === 'done', after: found.after, line: lineNumber, text, group: group.index, section });
    }
  }

  const assembled = assembleTasks(candidates, result.groups, (candidate, id, group) => readTask(candidate, id, group));
  result.tasks = assembled.tasks;
  result.copies = assembled.copies;
  result.strays.push(...assembled.strays);
  result.strays.sort((a, b) => a.line - b.line);
  result.warnings.push(...assembled.warnings);

  const known = assembled.byId ?? new Map(result.tasks.map((task) => [task.id, task]));
  byIdOf.set(result, known);
  for (const task of result.tasks) {
    if (task.dependsOn.length === 0) continue;
    const unknown = task.dependsOn.filter((dep) => !known.has(dep));
    if (unknown.length > 0) result.warnings.push(`${task.id} depends on ${unknown.join(', ')}, not found in tasks.md: that dependency is ignored`);
    task.dependsOn = task.dependsOn.filter((dep) => known.has(dep));
  }
  return result;
}

const byIdOf = new WeakMap<ParsedTasks, ReadonlyMap<string, SpeckitTask>>();

/** The tasks of a parse by id (built once per parse: a big tasks.md is looked up several times an iteration). */
export function tasksById(parsed: ParsedTasks): ReadonlyMap<string, SpeckitTask> {
  let byId = byIdOf.get(parsed);
  if (!byId) {
    byId = new Map(parsed.tasks.map((task) => [task.id, task]));
    byIdOf.set(parsed, byId);
  }
  return byId;
}

const copiesByTaskOf = new WeakMap<ParsedTasks, ReadonlyMap<string, CopyLine[]>>();

/** The lines that repeat each task, by task id (only tasks that have some). */
export function copiesByTask(parsed: ParsedTasks): ReadonlyMap<string, readonly CopyLine[]> {
  let byTask = copiesByTaskOf.get(parsed);
  if (!byTask) {
    const map = new Map<string, CopyLine[]>();
    for (const copy of parsed.copies) {
      const list = map.get(copy.of);
      if (list) list.push(copy);
      else map.set(copy.of, [copy]);
    }
    byTask = map;
    copiesByTaskOf.set(parsed, byTask);
  }
  return byTask;
}

/** The text after the id without the bold marks closing it (`**T001**: …`), trimmed. */
function afterId(after: string): string {
  const trimmed = after.trim();
  return trimmed.charCodeAt(0) === 42 ? trimmed.replace(/^\**/, '').trim() : trimmed;
}

function readTask(candidate: Candidate, id: string, group: TaskGroup): SpeckitTask {
  const after = afterId(candidate.after);
  // The regexes run only where they can match (most lines start with a marker or a word): a big tasks.md
  // has tens of thousands of lines, and each call allocates.
  const first = after.charCodeAt(0);
  const punctuated = first === 0x3a || first === 0x2e;
  const rest = punctuated || first === 0x2d || first === 0x2013 || first === 0x2014 ? after.replace(BEFORE_MARKERS, '') : after;
  let parallel = false;
  let story: string | undefined;
  // test() makes no match object; a failed sticky test resets lastIndex to 0, so the end is kept apart.
  let end = 0;
  MARKER.lastIndex = 0;
  for (let start = 0; MARKER.test(rest); start = end) {
    end = MARKER.lastIndex;
    // rest[start] is the `[` of `[P]` or `[US12]`.
    if (rest.charCodeAt(start + 2) === 0x5d) parallel = true;
    else story ??= rest.slice(start + 1, rest.indexOf(']', start)).toUpperCase();
  }
  const title = rest.slice(end).trim();
  // `after` is trimmed: only an empty description needs the space left out.
  const body = punctuated ? after.replace(BEFORE_TEXT, '') : after;
  const text = body ? `${candidate.id} ${body}` : candidate.id;
  return {
    id,
    writtenId: candidate.id,
    title,
    text,
    done: candidate.done,
    parallel,
    story: story ?? group.story?.id,
    group: group.index,
    section: candidate.section,
    dependsOn: dependenciesOf(title, candidate.id),
    line: candidate.line,
  };
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
