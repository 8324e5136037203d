// The Spec Kit prerequisites checked before a run: tasks.md, spec.md, plan.md, a given template, and
// open checklist items (warned about, never refused).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { countUnchecked, parseTasksMd, type ParsedTasks } from './parse.ts';
import { TASK_ID_FORMAT } from './task-line.ts';
import { pathsOf, readText, unreadable } from './paths.ts';
import type { ResolvedFeature } from './resolve.ts';

export interface CheckInput {
  root: string;
  feature: ResolvedFeature;
  /** The --template option, when given. */
  template: string | undefined;
  warn: (message: string) => void;
}

/** Warns about every checklist with unchecked items: /speckit.implement would stop there, ralph does not. */
function warnChecklists(dir: string, relDir: string, warn: (message: string) => void): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.md')).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const open = countUnchecked(readText(path.join(dir, name)) ?? '');
    if (open > 0) {
      warn(`${relDir}/checklists/${name} has ${open} unchecked item${open === 1 ? '' : 's'}: /speckit.implement would stop to ask about them; ralph goes on without asking`);
    }
  }
}

const MAX_STRAY_WARNINGS = 10;

function quote(text: string): string {
  return `"${text.length > 100 ? `${text.slice(0, 97)}...` : text}"`;
}

/** Why a tasks.md without tasks is refused: what ralph found in it and what it expected. */
export function noTasksProblem(parsed: ParsedTasks, rel: string): string {
  const expected = `ralph reads lines like "- [ ] T001 [P] [US1] Description" (ids: ${TASK_ID_FORMAT})`;
  const { count, first } = parsed.checkboxes;
  if (count === 0) return `${rel} lists no tasks: it has no checkbox lines at all; ${expected}: run /speckit.tasks first`;
  const stray = parsed.strays[0];
  if (stray) {
    return `${rel} lists no tasks ralph can read: ${count} checkbox line${count === 1 ? '' : 's'}, ${parsed.strays.length} of them with a task id ralph cannot use (line ${stray.line}: ${quote(stray.text)}: ${stray.why}); ${expected}`;
  }
  return `${rel} lists no tasks: it has ${count} checkbox line${count === 1 ? '' : 's'} but none starts with a task id (line ${first!.line}: ${quote(first!.text)}); ${expected}: give each task such an id or run /speckit.tasks to generate the list`;
}

/** Warnings for lines that look like tasks ralph will not work on: each open one, and a count of ticked ones. */
export function strayWarnings(parsed: ParsedTasks, rel: string): string[] {
  const open = parsed.strays.filter((stray) => stray.state !== 'done');
  const warnings = open.slice(0, MAX_STRAY_WARNINGS).map((stray) => `${rel}:${stray.line}: ${quote(stray.text)} is not a task ralph works on (${stray.why}); while it stays open the feature is not complete`);
  if (open.length > MAX_STRAY_WARNINGS) warnings.push(`${rel}: ${open.length - MAX_STRAY_WARNINGS} more such lines`);
  const { openWithoutId, firstOpenWithoutId } = parsed.checkboxes;
  if (parsed.tasks.length > 0 && firstOpenWithoutId) {
    warnings.push(`${rel}: ${openWithoutId} open checkbox${openWithoutId === 1 ? ' has' : 'es have'} no task id (line ${firstOpenWithoutId.line}: ${quote(firstOpenWithoutId.text)}): not tasks, so ralph neither works on them nor waits for them`);
  }
  const ticked = parsed.strays.filter((stray) => stray.state === 'done');
  if (ticked.length > 0) {
    const one = ticked.length === 1;
    warnings.push(`${rel}: ${ticked.length} ticked line${one ? ' looks like a task' : 's look like tasks'} ralph cannot read (line ${ticked[0]!.line}: ${ticked[0]!.why}); ticked, ${one ? 'it does' : 'they do'} not hold the feature back`);
  }
  return warnings;
}

/** Every problem that keeps the feature from running, one line each; tasks.md warnings go to `warn`. */
export function checkFeature({ root, feature, template, warn }: CheckInput): string[] {
  const p = pathsOf(feature);
  const problems: string[] = [];
  const text = readText(p.tasks);
  const why = text === undefined ? unreadable(p.tasks) : undefined;
  if (why) {
    problems.push(`${p.rel.tasks} cannot be read: ${why}; put the task list from /speckit.tasks there`);
  } else if (text === undefined) {
    problems.push(`${p.rel.tasks} not found: run /speckit.tasks first to generate the task list`);
  } else if (!text.trim()) {
    problems.push(`${p.rel.tasks} is empty: run /speckit.tasks first to generate the task list`);
  } else {
    const parsed = parseTasksMd(text);
    if (parsed.tasks.length === 0) problems.push(noTasksProblem(parsed, p.rel.tasks));
    for (const warning of parsed.warnings) warn(`${p.rel.tasks}: ${warning}`);
    for (const warning of strayWarnings(parsed, p.rel.tasks)) warn(warning);
  }
  if (!existsSync(p.spec)) problems.push(`${p.rel.spec} not found: run /speckit.specify first`);
  if (!existsSync(p.plan)) problems.push(`${p.rel.plan} not found: run /speckit.plan first`);
  if (template && readText(path.resolve(root, template)) === undefined) {
    problems.push(`prompt template ${template} (from --template) cannot be read: give the path of a file, relative to ${root}`);
  }
  warnChecklists(p.checklists, feature.rel, warn);
  return problems;
}
