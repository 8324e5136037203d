// The Spec Kit prerequisites checked before a run: tasks.md, spec.md, plan.md, a given template, and
// open checklist items (warned about, never refused).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { countUnchecked, parseTasksMd } from './parse.ts';
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
    if (parsed.tasks.length === 0) problems.push(`${p.rel.tasks} lists no tasks (lines like "- [ ] T001 Description"): run /speckit.tasks first`);
    for (const warning of parsed.warnings) warn(`${p.rel.tasks}: ${warning}`);
  }
  if (!existsSync(p.spec)) problems.push(`${p.rel.spec} not found: run /speckit.specify first`);
  if (!existsSync(p.plan)) problems.push(`${p.rel.plan} not found: run /speckit.plan first`);
  if (template && readText(path.resolve(root, template)) === undefined) {
    problems.push(`prompt template ${template} (from --template) cannot be read: give the path of a file, relative to ${root}`);
  }
  warnChecklists(p.checklists, feature.rel, warn);
  return problems;
}
