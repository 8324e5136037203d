// Merging a task-state file both sides changed, when a landing cut short is replayed on the remote's head
// (unpushed.ts): the other hosts' version (`ours`, the remote's head) and this host's commit of one task
// (`theirs`), from `base` (undefined when both added the file). Only files ralph alone writes get here, and
// each landing changes the state of its own task: the rules follow from that, and anything else is refused
// (undefined: the commit is kept on a branch, nothing is guessed).

/**
 * A task list both sides ticked boxes of (tasks.md): line by line, a line only one side changed takes that
 * change; lines both changed that differ in their box alone (`- [ ]`, `- [X]`) take the ticked one.
 */
export function mergeTicks(base: string | undefined, ours: string, theirs: string): string | undefined {
  const [o, t] = [ours.split('\n'), theirs.split('\n')];
  const b = base?.split('\n');
  if (o.length !== t.length || (b && b.length !== o.length)) return undefined;
  const merged: string[] = [];
  for (let at = 0; at < o.length; at += 1) {
    const [mine, other] = [o[at]!, t[at]!];
    if (mine === other || (b && b[at] === other)) merged.push(mine);
    else if (b && b[at] === mine) merged.push(other);
    else {
      const ticked = tickedOf(mine, other);
      if (ticked === undefined) return undefined;
      merged.push(ticked);
    }
  }
  return merged.join('\n');
}

const BOX = /^(\s*[-*] \[)([ xX])(\] .*)$/;

/** Of two lines that differ in their checkbox alone, the ticked one. */
function tickedOf(a: string, b: string): string | undefined {
  const [ma, mb] = [BOX.exec(a), BOX.exec(b)];
  if (!ma || !mb || ma[1] !== mb[1] || ma[3] !== mb[3]) return undefined;
  return ma[2] === ' ' ? b : a;
}

/** This host's iteration `from`, numbered `to` on the remote's head (the other hosts used `from` meanwhile). */
export interface Renumbered {
  from: number;
  to: number;
}

// An entry's heading in a progress log: Spec Kit's `## Iteration N - <time>`, PRD's `## <time> - <task> - iteration N: <status>`.
const HEADINGS = [/^(## Iteration )(\d+)(?=\s|$)/gm, /^(## .* - iteration )(\d+)(?=:)/gm];

/** The iteration numbers a progress log's entry headings carry. */
export function entryNumbers(log: string): number[] {
  return HEADINGS.flatMap((heading) => [...log.matchAll(heading)].map((match) => Number(match[2])));
}

/** `appended` (this host's lines of a log) with the headings of iteration `from` numbered `to`. */
export function renumberEntries(appended: string, { from, to }: Renumbered): string {
  return HEADINGS.reduce((text, heading) => text.replace(heading, (whole, lead: string, number: string) => (Number(number) === from ? `${lead}${to}` : whole)), appended);
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A JSON record both sides wrote (ralph-tasks.json, prd.json): merged key by key; a list of items with an
 * `id` item by item, the item of `task` (the replayed commit's) as this host left it, every other as the
 * remote has it; a number both changed takes the larger (counters and iteration numbers only grow), a
 * timestamp the later. Formatted as `ours` is (its indent). Undefined when it cannot be merged.
 */
export function mergeRecord(base: string | undefined, ours: string, theirs: string, task: string, renumbered?: Renumbered): string | undefined {
  let parsed: [Json | undefined, Json, Json];
  try {
    parsed = [base === undefined ? undefined : (JSON.parse(base) as Json), JSON.parse(ours) as Json, JSON.parse(theirs) as Json];
  } catch {
    return undefined;
  }
  const merged = mergeValue(parsed[0], parsed[1], parsed[2], task);
  if (merged === CONFLICT || merged === undefined) return undefined;
  if (isObject(merged)) {
    if (renumbered) renumberRecord(merged, task, renumbered);
    recount(merged);
  }
  const indent = /^[{[]\n([ \t]+)/.exec(ours)?.[1] ?? '';
  return `${JSON.stringify(merged, null, indent)}${ours.endsWith('\n') ? '\n' : ''}`;
}

const same = (a: Json | undefined, b: Json | undefined): boolean => JSON.stringify(a) === JSON.stringify(b);
const isObject = (value: Json | undefined): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const idOf = (item: Json): string | undefined => (isObject(item) && typeof item.id === 'string' ? item.id : undefined);

/** Both sides changed a value in ways that do not merge. */
const CONFLICT = Symbol('conflict');
type Merged = Json | undefined | typeof CONFLICT;

function mergeValue(base: Json | undefined, ours: Json | undefined, theirs: Json | undefined, task: string): Merged {
  if (same(ours, theirs)) return ours;
  if (base !== undefined && same(base, ours)) return theirs;
  if (base !== undefined && same(base, theirs)) return ours;
  // Present on one side only: added there (no base), or removed on the other side while this one changed it.
  if (ours === undefined) return base === undefined ? theirs : CONFLICT;
  if (theirs === undefined) return base === undefined ? ours : CONFLICT;
  if (isObject(ours) && isObject(theirs)) {
    const out: { [key: string]: Json } = {};
    const from = isObject(base) ? base : {};
    for (const key of new Set([...Object.keys(ours), ...Object.keys(theirs)])) {
      const value = mergeValue(from[key], ours[key], theirs[key], task);
      if (value === CONFLICT) return CONFLICT;
      if (value !== undefined) out[key] = value;
    }
    return out;
  }
  if (Array.isArray(ours) && Array.isArray(theirs) && [...ours, ...theirs].every((item) => idOf(item) !== undefined)) {
    const byId = (list: Json[]): Map<string, Json> => new Map(list.map((item) => [idOf(item)!, item]));
    const [o, t] = [byId(ours), byId(theirs)];
    // The replayed commit's own task as this host left it; every other as the remote has it (an item only
    // this host has is kept).
    return [...o.keys(), ...[...t.keys()].filter((id) => !o.has(id))].map((id) => (id === task ? (t.get(id) ?? o.get(id)!) : (o.get(id) ?? t.get(id)!)));
  }
  if (typeof ours === 'number' && typeof theirs === 'number') return Math.max(ours, theirs);
  if (typeof ours === 'string' && typeof theirs === 'string' && ISO.test(ours) && ISO.test(theirs)) return ours > theirs ? ours : theirs;
  return CONFLICT;
}

/** The replayed task's record of its iteration, and the record's last iteration, take the new number. */
function renumberRecord(merged: { [key: string]: Json }, task: string, { from, to }: Renumbered): void {
  if (typeof merged.lastIteration === 'number') merged.lastIteration = Math.max(merged.lastIteration, to);
  if (!Array.isArray(merged.tasks)) return;
  for (const item of merged.tasks) if (isObject(item) && item.id === task && item.lastIteration === from) item.lastIteration = to;
}

/**
 * A summary that counts a list's statuses (ralph-tasks.json: `summary` {total, done, open, skipped} of
 * `tasks`) is counted again: each side counted only its own task done, and the larger of two counts is
 * neither's.
 */
function recount(merged: { [key: string]: Json }): void {
  const { summary, tasks } = merged;
  if (!isObject(summary) || !Array.isArray(tasks) || typeof summary.total !== 'number') return;
  if (!tasks.every((item) => isObject(item) && typeof item.status === 'string')) return;
  const statuses = tasks.map((item) => (item as { status: string }).status);
  const counted: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(summary)) {
    counted[key] = key === 'total' ? statuses.length : typeof value === 'number' ? statuses.filter((status) => status === key).length : value;
  }
  merged.summary = counted;
}
