// Which prd.json items the loop may pick, as tasks, and why the others wait.
import type { Snapshot, Task } from '../types.ts';
import { answerCommand } from '../../questions/text.ts';
import { byPriority, type PrdDocument, type PrdItem } from './schema.ts';

/** Failed iterations after which a task ralph blocked is no longer retried. */
export const MAX_ATTEMPTS = 3;

/**
 * Whether the loop may pick an item: pending, or blocked by ralph itself with attempts to spare. A task
 * blocked outside ralph (no failed attempt recorded) waits for a person.
 */
export function isReady(item: Pick<PrdItem, 'status' | 'attempts'>): boolean {
  return item.status === 'pending' || (item.status === 'blocked' && item.attempts > 0 && item.attempts < MAX_ATTEMPTS);
}

function toTask(item: PrdItem, doc: PrdDocument, waiting: boolean): Task {
  return {
    id: item.id,
    title: item.title,
    status: item.status,
    ...(item.priority === undefined ? {} : { priority: item.priority }),
    meta: {
      shape: doc.shape,
      ...(waiting ? { waiting: true } : {}),
      attempts: item.attempts,
      ...(item.iterationNumber === undefined ? {} : { iterationNumber: item.iterationNumber }),
      ...(item.lastError === undefined ? {} : { lastError: item.lastError }),
      ...(item.estimatedComplexity === undefined ? {} : { estimatedComplexity: item.estimatedComplexity }),
    },
  };
}

/**
 * The document's items as ready, remaining and done tasks, in work order. A task `waiting` for an answer
 * to its agent's question remains, and is never ready until a person answers.
 */
export function prdSnapshot(doc: PrdDocument, waiting: ReadonlySet<string> = new Set()): Snapshot {
  const ordered = byPriority(doc.items);
  const as = (item: PrdItem): Task => toTask(item, doc, waiting.has(item.id));
  const remaining = ordered.filter((item) => item.status !== 'completed');
  const asked = remaining.filter((item) => waiting.has(item.id));
  return {
    ready: ordered.filter((item) => isReady(item) && !waiting.has(item.id)).map(as),
    remaining: remaining.map(as),
    done: ordered.filter((item) => item.status === 'completed').map(as),
    ...(asked.length > 0 ? { waiting: asked.map(as) } : {}),
  };
}

/** Why a remaining task is not ready, as one line. */
export function stuckLine(task: Task): string {
  const meta = task.meta ?? {};
  const attempts = typeof meta.attempts === 'number' ? meta.attempts : 0;
  const head = `${task.id} "${task.title}"`;
  if (meta.waiting === true) return `${head}: waiting for a person's answer to its question (${answerCommand(task.id)})`;
  if (task.status === 'in_iteration') {
    return `${head}: in_iteration since iteration ${String(meta.iterationNumber ?? '?')} (another run holds it, or it was interrupted: ralph resume puts it back)`;
  }
  if (task.status === 'blocked' && attempts > 0) {
    return `${head}: blocked after ${attempts} failed attempts: ${String(meta.lastError ?? 'no error recorded')}; fix the cause, then set its status to pending`;
  }
  if (task.status === 'blocked') return `${head}: blocked outside ralph; set its status to pending to let ralph work on it`;
  return `${head}: ${task.status}`;
}
