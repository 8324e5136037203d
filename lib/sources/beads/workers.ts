// beads with several workers: ralph claims each worker's bead atomically (`bd update --claim` under the
// worker's own actor name), every worktree's agent uses the main repository's beads database, and the
// prompt names the bead, since /sp:next alone would pick any ready one.
import path from 'node:path';
import { ClaimLostError, errorMessage, RalphError } from '../../errors.ts';
import { bdUpgradeHint, type Bd } from './bd.ts';
import type { Snapshot, SnapshotPurpose, Task, WorkerSupport } from '../types.ts';

/**
 * The assignee a worker's claims carry: `ralph-w2` on one machine; with --remote, `ralph-<host>-w2`, so
 * every host knows its own claims from another host's (recovery, takeover).
 */
export function workerActor(worker: number, host?: string): string {
  return host === undefined ? `ralph-w${worker}` : `ralph-${host}-w${worker}`;
}

/** The environment that makes bd act as `actor`: BEADS_ACTOR (beads 1.x), BD_ACTOR (0.5x, and 1.x's fallback). */
export function actorEnv(actor: string): Record<string, string> {
  return { BEADS_ACTOR: actor, BD_ACTOR: actor };
}

/** Whose ralph worker an assignee names (`host` absent for a run without --remote); undefined for anyone else. */
export function parseActor(assignee: string | undefined): { host?: string; worker: number } | undefined {
  const match = /^ralph-(?:(.+)-)?w(\d+)$/.exec(assignee ?? '');
  if (!match) return undefined;
  return match[1] === undefined ? { worker: Number(match[2]) } : { host: match[1], worker: Number(match[2]) };
}

/**
 * Claims `task` for `worker` (of `host` with --remote). Whatever bd prints (1.x: the updated issue, exit 1
 * when taken; 0.50: exit 0 and an empty answer when taken), `bd show` then says who holds it.
 */
export async function claimForWorker(bd: Bd, task: Task, worker: number, host?: string): Promise<void> {
  const actor = workerActor(worker, host);
  const tried = await bd.attempt(['update', task.id, '--claim', '--actor', actor]);
  let issue;
  try {
    issue = await bd.show(task.id);
  } catch (error) {
    throw new RalphError(`could not check the claim of ${task.id} for worker ${worker}: ${errorMessage(error)}`);
  }
  if (!issue) throw new ClaimLostError(`${task.id} no longer exists in beads`);
  if (issue.status !== 'in_progress' || issue.assignee !== actor) {
    // Nobody took it, bd just would not write (a database another bd migrated, a lock): bd's reason, not a race.
    if (!tried.ok && issue.status === 'open' && !issue.assignee) throw new RalphError(`could not claim ${task.id} for worker ${worker}: ${tried.error}${bdUpgradeHint(tried.error)}`);
    throw new ClaimLostError(`${task.id} was taken by ${issue.assignee ?? 'someone else'} (status ${issue.status}) before worker ${worker} could claim it`);
  }
}

/** The prompt of a worker: the configured one (e.g. /sp:next) with the bead it must work on. */
export function workerPrompt(prompt: string, task: Task, worker: number, host?: string): string {
  return `${prompt} ${task.id}\n\nWork on bead ${task.id} "${task.title}" only: ralph claimed it for you (assignee ${workerActor(worker, host)}). Other agents work on other beads at the same time; do not start, claim or close any other bead.`;
}

export function createBeadsWorkers(root: string, snapshot: (purpose?: SnapshotPurpose) => Promise<Snapshot>): WorkerSupport {
  return {
    stateFiles: () => [],
    startable(current: Snapshot, running: readonly Task[]) {
      const busy = new Set(running.map((task) => task.id));
      return current.ready.filter((task) => !busy.has(task.id));
    },
    // bd would otherwise look for a database in the worktree (a tracked .beads/ there has none).
    env: () => ({ BEADS_DIR: path.join(root, '.beads') }),
    // One database for every worktree: what the worker's agent closed is in the main view.
    snapshotAt: (_dir, purpose) => snapshot(purpose),
    async markDone() {
      // The agent closed its bead in the shared database itself.
    },
  };
}
