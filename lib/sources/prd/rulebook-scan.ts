// Finds rulebook task folders and reads each into a RulebookTask, in the order they are to be worked on.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { mapRulebookStatus, parseProposal, parseTasksMd, specRequirements } from './rulebook-parse.ts';
import type { PrdStatus } from './schema.ts';

/** Where rulebook keeps task folders: current layout first, then the older one. */
export const RULEBOOK_TASK_DIRS = ['.rulebook/tasks', 'rulebook/tasks'] as const;

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
