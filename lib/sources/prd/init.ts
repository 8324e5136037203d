// `ralph init`: turns rulebook task folders into .rulebook-ralph/prd.json (rulebook shape) and starts
// progress.txt. Earlier state is archived, never silently lost.
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import dayjs from 'dayjs';
import { RalphError } from '../../errors.ts';
import { writeFileAtomic } from '../../fs-atomic.ts';
import { historyDir, lastHistoryIteration, STATE_DIR } from './history.ts';
import { lastLoggedIteration, progressHeader, progressPath, readProgress } from './progress.ts';
import { readPrd, type PrdStatus } from './schema.ts';

/** Where rulebook keeps task folders: current layout first, then the older one. */
export const RULEBOOK_TASK_DIRS = ['.rulebook/tasks', 'rulebook/tasks'] as const;
export const INIT_PRD = path.join(STATE_DIR, 'prd.json');

export interface InitOptions {
  force: boolean;
  now: number;
  warn?: (message: string) => void;
}

export interface InitResult {
  success: boolean;
  taskCount: number;
  /** Absolute path of the written prd.json. */
  prdPath: string;
}

export interface RulebookTask {
  id: string;
  /** Folder relative to the root, with forward slashes. */
  sourcePath: string;
  title: string;
  description: string;
  status: PrdStatus;
  createdAt?: string;
  priority?: number;
  openItems: string[];
  doneItems: string[];
  requirements: string[];
}

/** Unchecked and checked `- [ ] 1.1 …` items of a tasks.md, code blocks excluded. */
export function parseTasksMd(text: string): { open: string[]; done: string[] } {
  const open: string[] = [];
  const done: string[] = [];
  let inFence = false;
  for (const line of text.replace(/\r/g, '').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const match = /^\s*[-*+]\s+\[([ xX])\]\s+(.+?)\s*$/.exec(line);
    if (!match) continue;
    (match[1] === ' ' ? open : done).push(match[2]!);
  }
  return { open, done };
}

/** `# Proposal: Title` and the `## What Changes` section of a proposal.md. */
export function parseProposal(text: string): { title?: string; whatChanges?: string } {
  const lines = text.replace(/\r/g, '').split('\n');
  const heading = lines.find((line) => /^#\s+\S/.test(line));
  const title = heading?.replace(/^#\s+/, '').replace(/^proposal:\s*/i, '').trim();
  const start = lines.findIndex((line) => /^##\s+what changes\s*$/i.test(line));
  let whatChanges: string | undefined;
  if (start !== -1) {
    let end = start + 1;
    while (end < lines.length && !/^#{1,2}\s/.test(lines[end]!)) end += 1;
    whatChanges = lines.slice(start + 1, end).join('\n').trim() || undefined;
  }
  return { ...(title ? { title } : {}), ...(whatChanges ? { whatChanges } : {}) };
}

/** SHALL/MUST lines of a spec.md, with markdown bullets, emphasis and code ticks removed. */
export function specRequirements(text: string): string[] {
  const found: string[] = [];
  let inFence = false;
  for (const line of text.replace(/\r/g, '').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence || /^\s*#/.test(line) || !/\b(SHALL|MUST)\b/.test(line)) continue;
    const cleaned = line
      .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '')
      .replace(/\*\*|__/g, '')
      .replace(/`([^`]*)`/g, '$1')
      .trim();
    if (cleaned.length >= 10 && !found.includes(cleaned)) found.push(cleaned);
  }
  return found;
}

/**
 * Complexity from the number of open tasks.md items: 0–3 → low, 4–8 → medium, 9 or more → high.
 * Spec requirements are not counted: they restate what the items deliver.
 */
export function estimateComplexity(openItems: number): 'low' | 'medium' | 'high' {
  if (openItems <= 3) return 'low';
  if (openItems <= 8) return 'medium';
  return 'high';
}

/** rulebook metadata status → prd status: pending and in-progress → pending (ralph claims work itself). */
export function mapRulebookStatus(value: unknown): PrdStatus | undefined {
  switch (typeof value === 'string' ? value.toLowerCase() : value) {
    case 'pending':
    case 'in-progress':
    case 'in_progress':
      return 'pending';
    case 'completed':
    case 'done':
      return 'completed';
    case 'blocked':
      return 'blocked';
    default:
      return undefined;
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function isDir(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

// rulebook moves finished tasks to archive/ or names them YYYY-MM-DD-<id>.
const ARCHIVED = /^(archive|archived|\d{4}-\d{2}-\d{2}-.+)$/;

function readTask(root: string, folder: string, id: string, warn: (message: string) => void): RulebookTask | undefined {
  const metadataText = readText(path.join(folder, '.metadata.json'));
  const proposalText = readText(path.join(folder, 'proposal.md'));
  const tasksText = readText(path.join(folder, 'tasks.md'));
  if (metadataText === undefined && proposalText === undefined && tasksText === undefined) return undefined;
  const sourcePath = path.relative(root, folder).split(path.sep).join('/');

  let metadata: Record<string, unknown> = {};
  if (metadataText !== undefined) {
    try {
      const parsed: unknown = JSON.parse(metadataText);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) metadata = parsed as Record<string, unknown>;
      else warn(`${sourcePath}/.metadata.json: expected a JSON object; treating the task as pending`);
    } catch (error) {
      warn(`${sourcePath}/.metadata.json: not valid JSON (${(error as Error).message}); treating the task as pending`);
    }
  }
  let status = mapRulebookStatus(metadata.status);
  if (status === undefined) {
    if (metadata.status !== undefined) warn(`${sourcePath}: unknown status ${JSON.stringify(metadata.status)}; treating the task as pending`);
    status = 'pending';
  }

  const proposal = parseProposal(proposalText ?? '');
  const items = parseTasksMd(tasksText ?? '');
  const requirements: string[] = [];
  const specsDir = path.join(folder, 'specs');
  if (isDir(specsDir)) {
    for (const module of readdirSync(specsDir).sort()) {
      const spec = readText(path.join(specsDir, module, 'spec.md'));
      for (const line of spec === undefined ? [] : specRequirements(spec)) if (!requirements.includes(line)) requirements.push(line);
    }
  }
  return {
    id,
    sourcePath,
    title: proposal.title ?? id,
    description: proposal.whatChanges ?? '',
    status,
    ...(typeof metadata.createdAt === 'string' ? { createdAt: metadata.createdAt } : {}),
    ...(typeof metadata.priority === 'number' && Number.isFinite(metadata.priority) ? { priority: metadata.priority } : {}),
    openItems: items.open,
    doneItems: items.done,
    requirements,
  };
}

/**
 * Every rulebook task under .rulebook/tasks/ and rulebook/tasks/ (archives skipped; an id found in both
 * is taken from .rulebook/tasks/), in work order: metadata `priority` when numeric, then `createdAt`,
 * then id.
 */
export function scanRulebookTasks(root: string, warn: (message: string) => void = () => {}): RulebookTask[] {
  const tasks = new Map<string, RulebookTask>();
  for (const dir of RULEBOOK_TASK_DIRS) {
    const base = path.join(root, dir);
    if (!isDir(base)) continue;
    for (const name of readdirSync(base).sort()) {
      if (name.startsWith('.') || ARCHIVED.test(name) || tasks.has(name)) continue;
      const folder = path.join(base, name);
      if (!isDir(folder)) continue;
      const task = readTask(root, folder, name, warn);
      if (task) tasks.set(name, task);
    }
  }
  return [...tasks.values()].sort(
    (a, b) =>
      (a.priority ?? Number.POSITIVE_INFINITY) - (b.priority ?? Number.POSITIVE_INFINITY) ||
      (a.createdAt ?? '\uffff').localeCompare(b.createdAt ?? '\uffff') ||
      a.id.localeCompare(b.id),
  );
}

/** The prd.json document for the tasks, in the rulebook shape; priority is the work order, from 1. */
export function buildRulebookPrd(tasks: readonly RulebookTask[], options: { project: string; now: number }): Record<string, unknown> {
  return {
    project: options.project,
    description: `Generated by ralph init from ${tasks.length} rulebook tasks`,
    generatedAt: new Date(options.now).toISOString(),
    source: 'rulebook',
    tasks: tasks.map((task, index) => ({
      id: task.id,
      title: task.title,
      description: task.description,
      priority: index + 1,
      status: task.status,
      acceptanceCriteria: [...task.openItems, ...task.requirements],
      estimatedComplexity: estimateComplexity(task.openItems.length),
      sourcePath: task.sourcePath,
    })),
  };
}

/** Whether ralph already worked from this state (prd items, history, progress log), and the evidence. */
function recordedProgress(root: string, prdFile: string): { progress: boolean; detail: string } {
  if (existsSync(prdFile)) {
    try {
      const doc = readPrd(prdFile);
      const worked = doc.items.find((item) => item.iterationNumber !== undefined || item.attempts > 0 || item.status === 'in_iteration');
      if (worked) return { progress: true, detail: `task ${worked.id} was worked on in iteration ${worked.iterationNumber ?? '?'}` };
    } catch {
      return { progress: true, detail: 'it cannot be read, so ralph cannot tell whether it holds progress' };
    }
  }
  const recorded = lastHistoryIteration(root);
  if (recorded > 0) return { progress: true, detail: `history records iterations up to ${recorded}` };
  const logged = lastLoggedIteration(readProgress(progressPath(prdFile)));
  if (logged > 0) return { progress: true, detail: `progress.txt logs iterations up to ${logged}` };
  return { progress: false, detail: '' };
}

/** A fresh folder under .rulebook-ralph/archive/ named by date (`-2`, `-3`… when taken). */
function archiveFolder(root: string, now: number): string {
  const base = path.join(root, STATE_DIR, 'archive', dayjs(now).format('YYYY-MM-DD'));
  let folder = base;
  for (let count = 2; existsSync(folder); count += 1) folder = `${base}-${count}`;
  return folder;
}

/** Moves prd.json, progress.txt and history/ into an archive folder; returns it (undefined when nothing existed). */
function archiveState(root: string, prdFile: string, now: number): string | undefined {
  const progressFile = progressPath(prdFile);
  const history = historyDir(root);
  const present = [prdFile, progressFile, history].filter((file) => existsSync(file));
  if (present.length === 0) return undefined;
  const folder = archiveFolder(root, now);
  for (const file of [prdFile, progressFile]) {
    if (existsSync(file)) writeFileAtomic(path.join(folder, path.basename(file)), readFileSync(file));
  }
  if (existsSync(history)) {
    try {
      renameSync(history, path.join(folder, 'history'));
    } catch {
      cpSync(history, path.join(folder, 'history'), { recursive: true });
    }
  }
  return folder;
}

function projectName(root: string): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    const name = (pkg as { name?: unknown }).name;
    if (typeof name === 'string' && name) return name;
  } catch {
    // no package.json: the folder name will do
  }
  return path.basename(path.resolve(root));
}

/**
 * `ralph init`: writes .rulebook-ralph/prd.json from the rulebook tasks and starts progress.txt.
 * Refuses (RalphError) when there are no tasks, or when the existing state holds progress and `force`
 * is not set; whatever is replaced is archived first to .rulebook-ralph/archive/<YYYY-MM-DD>/.
 */
export function initFromRulebook(root: string, options: InitOptions): InitResult {
  const warn = options.warn ?? (() => {});
  const prdFile = path.join(root, INIT_PRD);
  const tasks = scanRulebookTasks(root, warn);
  if (tasks.length === 0) {
    throw new RalphError(`no rulebook tasks found: looked in ${RULEBOOK_TASK_DIRS.map((dir) => path.join(root, dir)).join(' and ')}`, {
      hint: 'create tasks with rulebook first, or write a prd.json yourself (the snarktank shape works too)',
    });
  }
  const existing = recordedProgress(root, prdFile);
  if (existing.progress && !options.force) {
    throw new RalphError(`${prdFile} already holds progress: ${existing.detail}; not overwriting it`, {
      hint: "run 'ralph resume' to continue, or 'ralph init --force' to archive it and start over",
    });
  }
  const archived = archiveState(root, prdFile, options.now);
  if (archived) warn(`archived the previous prd.json, progress.txt and history to ${path.relative(root, archived)}`);

  const prd = buildRulebookPrd(tasks, { project: projectName(root), now: options.now });
  writeFileAtomic(prdFile, `${JSON.stringify(prd, null, 2)}\n`);
  writeFileAtomic(progressPath(prdFile), progressHeader({ now: options.now, prd: INIT_PRD, taskCount: tasks.length }));
  return { success: true, taskCount: tasks.length, prdPath: prdFile };
}
