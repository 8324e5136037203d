// prd.json with several workers: any ready story may start beside the others (by priority); the worker's
// copy of prd.json says whether its agent marked its story done; ralph records the verdict in the main one.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ARCHIVE_FILE } from '../../progress/compact.ts';
import type { Snapshot, Task, WorkerSupport } from '../types.ts';
import { historyDir } from './history.ts';
import { progressPath } from './progress.ts';
import { readPrd } from './schema.ts';
import { prdSnapshot } from './selection.ts';

/** `prdFile` is the main worktree's prd.json (absolute) once one is known. */
export function createPrdWorkers(root: string, prdFile: () => string, mainSnapshot: () => Promise<Snapshot>): WorkerSupport {
  const relative = (file: string): string => path.relative(root, file);
  return {
    stateFiles() {
      const file = prdFile();
      return [relative(file), relative(progressPath(file)), relative(path.join(path.dirname(file), ARCHIVE_FILE)), relative(historyDir(root))];
    },

    startable(snapshot: Snapshot, running: readonly Task[]) {
      const busy = new Set(running.map((task) => task.id));
      return snapshot.ready.filter((task) => !busy.has(task.id));
    },

    env() {
      return {};
    },

    async snapshotAt(dir: string) {
      const copy = path.join(dir, relative(prdFile()));
      // ralph copies prd.json into the worktree before the agent starts; without it, the main one speaks.
      return existsSync(copy) ? prdSnapshot(readPrd(copy)) : mainSnapshot();
    },

    async markDone() {
      // The verdict (the agent's report and the gates) is recorded by settle() in the main prd.json.
    },
  };
}
