// Which prd.json items the loop may pick, as tasks, and why the others wait.
import type { Snapshot, Task } from '../types.ts';
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

function toTask(item: PrdItem, doc: PrdDocument): Task {
  return {
    id: item.id,
    title: item.title,
    status: item.status,
    ...(item.priority === undefined ? {} : { priority: item.priority }),
    meta: {
      shape: doc.shape,
      attempts: item.attempts,
      ...(item.iterationNumber === undefined ? {} : { iterationNumber: item.iterationNumber }),
      ...(item.lastError === undefined ? {} : { lastError: item.lastError }),
      ...(item.estimatedComplexity === undefined ? {} : { estimatedComplexity: item.estimatedComplexity }),
    },
  };
}

/** The document's items as ready, remaining and done tasks, in work order. */
export function prdSnapshot(doc: PrdDocument): Snapshot {
  const ordered = byPriority(doc.items);
  return {
    ready: ordered.filter(isReady).map((item) => toTask(item, doc)),
    remaining: ordered.filter((item) => item.status !== 'completed').map((item) => toTask(item, doc)),
    done: ordered.filter((item) => item.status === 'completed').map((item) => toTask(item, doc)),
  };
}

/** Why a remaining task is not ready, as one line. */
export function stuckLine(task: Task): string {
  const meta = task.meta ?? {};
  const attempts = typeof meta.attempts === 'number' ? meta.attempts : 0;
  const head = `${task.id} "${task.title}"`;
  if (task.status === 'in_iteration') {
    return `${head}: in_iteration since iteration ${String(meta.iterationNumber ?? '?')} (another run holds it, or it was interrupted: ralph resume puts it back)`;
  }
  if (task.status === 'blocked' && attempts > 0) {
    return `${head}: blocked after ${attempts} failed attempts: ${String(meta.lastError ?? 'no error recorded')}; fix the cause, then set its status to pending`;
  }
  if (task.status === 'blocked') return `${head}: blocked outside ralph; set its status to pending to let ralph work on it`;
  return `${head}: ${task.status}`;
}
