// Finds rulebook task folders and reads each into a RulebookTask, in the order they are to be worked on.
// The folders are walked with zx's glob; the full `zx` (not zx/core) is only loaded by `ralph init`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { glob } from 'zx';
import { judgeStatus, parseProposal, parseTasksMd, specRequirements } from './rulebook-parse.ts';
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
  /** How ralph judged the status, for `ralph init` to say: `.metadata.json says "pending"`, `no .metadata.json; tasks.md fully ticked (20 items)`. */
  judgedBy: string;
  /** The metadata says pending or in progress, but every item of tasks.md is ticked. */
  tickedButPending: boolean;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
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

  const items = parseTasksMd(tasksText ?? '');
  const judged = judgeStatus(metadataText, items);
  if (judged.problem) warn(`${sourcePath}/${judged.problem}; judging the task by its tasks.md`);
  const { metadata, status, judgedBy, tickedButPending } = judged;

  const proposal = parseProposal(proposalText ?? '');
  const requirements: string[] = [];
  for (const file of glob.sync('specs/*/spec.md', { cwd: folder, dot: true }).sort()) {
    const spec = readText(path.join(folder, file));
    for (const line of spec === undefined ? [] : specRequirements(spec)) if (!requirements.includes(line)) requirements.push(line);
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
    judgedBy,
    tickedButPending,
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
    // Hidden folders are not tasks (dot: false).
    for (const name of glob.sync('*', { cwd: base, onlyDirectories: true, dot: false }).sort()) {
      if (ARCHIVED.test(name) || tasks.has(name)) continue;
      const task = readTask(root, path.join(base, name), name, warn);
      if (task) tasks.set(name, task);
    }
  }
  const ticked = [...tasks.values()].filter((task) => task.tickedButPending);
  if (ticked.length > 0) {
    const one = ticked.length === 1;
    warn(
      `${ticked.length} task${one ? ' is' : 's are'} pending in .metadata.json although every item of ${one ? 'its' : 'their'} tasks.md is ticked: ${ticked.map((task) => task.sourcePath).join(', ')}; ralph queues ${one ? 'it' : 'them'} as the metadata says (set "status": "completed" there if the work is done)`,
    );
  }
  return [...tasks.values()].sort(
    (a, b) =>
      (a.priority ?? Number.POSITIVE_INFINITY) - (b.priority ?? Number.POSITIVE_INFINITY) ||
      (a.createdAt ?? '\uffff').localeCompare(b.createdAt ?? '\uffff') ||
      a.id.localeCompare(b.id),
  );
}
