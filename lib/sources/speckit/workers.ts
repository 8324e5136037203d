// Spec Kit with several workers: tasks that may run side by side, the worktree's copy of tasks.md as the
// worker's agent left it, and ticks applied to the main tasks.md by ralph.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../../errors.ts';
import { writeFileAtomic } from '../../repo/fs-atomic.ts';
import { ARCHIVE_FILE } from '../../progress/compact.ts';
import type { Snapshot, Task, WorkerSupport } from '../types.ts';
import { parallelStartable, tickTasks } from './parallel.ts';
import { parseTasksMd } from './parse.ts';
import { buildSnapshot, toTask } from './select.ts';
import type { FeatureState } from './state.ts';

/** `waiting`: the tasks whose question waits for an answer, set aside like skipped ones. */
export function createSpeckitWorkers(state: FeatureState, waiting: () => ReadonlySet<string>): WorkerSupport {
  const skippedIds = (): Set<string> => new Set(state.loadTracking(state.readTasks()).tasks.filter((task) => task.skipped).map((task) => task.id));

  return {
    stateFiles() {
      const { rel, feature } = state.paths();
      return [rel.tasks, rel.progress, rel.tracking, `${feature.rel}/${ARCHIVE_FILE}`];
    },

    startable(_snapshot: Snapshot, running: readonly Task[]) {
      const parsed = state.readTasks();
      const skipped = skippedIds();
      const asked = waiting();
      return parallelStartable(parsed, skipped, new Set(running.map((task) => task.id)), asked).map((task) => toTask(parsed, task, skipped, asked));
    },

    env(dir: string) {
      const { feature } = state.paths();
      return { SPECIFY_FEATURE_DIRECTORY: path.join(dir, feature.rel), SPECIFY_FEATURE: feature.name };
    },

    async snapshotAt(dir: string) {
      const { rel } = state.paths();
      let text: string;
      try {
        text = readFileSync(path.join(dir, rel.tasks), 'utf8');
      } catch (error) {
        throw new RalphError(`${rel.tasks} in the worktree ${dir} cannot be read: ${(error as Error).message}`);
      }
      return buildSnapshot(parseTasksMd(text), skippedIds(), waiting());
    },

    async markDone(taskIds: readonly string[]) {
      if (taskIds.length === 0) return;
      const { tasks } = state.paths();
      const text = readFileSync(tasks, 'utf8');
      const ticked = tickTasks(text, state.readTasks(), taskIds);
      if (ticked !== text) writeFileAtomic(tasks, ticked);
    },
  };
}
