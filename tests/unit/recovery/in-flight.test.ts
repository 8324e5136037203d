// An iteration a dead run had under way, settled by the next start's recovery against the real beads source
// (the fake bd): what the source says is done is read once the dead run's agent is stopped, never from what
// the start read before it held the lock.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { recoverRun } from '../../../lib/recovery/index.ts';
import { JOURNAL_FILE } from '../../../lib/recovery/journal.ts';
import { CommitGuard } from '../../../lib/repo/commit-set.ts';
import { Git } from '../../../lib/repo/git.ts';
import { createBeadsSource } from '../../../lib/sources/beads/source.ts';
import type { Task } from '../../../lib/sources/types.ts';
import { beadsProject } from '../sources/beads/bd-helpers.ts';

describe('recovery of a dead run whose agent lived on (beads, one agent in the repository)', () => {
  /** A project whose dead run had iteration 1 on ws-ep.2 under way (its agent started), in the repository or a worker's worktree. */
  function deadRun(worker?: number) {
    const project = beadsProject('1.2');
    const { root } = project;
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
    git('init', '-q');
    git('config', 'user.name', 'T');
    git('config', 'user.email', 't@example.test');
    // bd's database is bd's, as in a project whose .beads/ holds no tracked export.
    writeFileSync(path.join(root, '.git', 'info', 'exclude'), '.beads/\n');
    writeFileSync(path.join(root, 'README.md'), 'demo\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'start');
    const head = git('rev-parse', 'HEAD').trim();
    mkdirSync(path.join(root, '.ralph'), { recursive: true });
    writeFileSync(path.join(root, JOURNAL_FILE), JSON.stringify({ version: 1, session: 'dead', pid: 1, startedAt: '2026-11-28T00:00:00.000Z', userPaths: {}, inflight: [{ session: 'dead', iteration: 1, taskId: 'ws-ep.2', title: 'Task A', step: 'agent_started', head, ...(worker === undefined ? {} : { worker }) }] }));
    return project;
  }

  it('a bead its orphaned agent closed after the start had read the beads is adopted with its work, not left to the next commit', async () => {
    const project = deadRun();
    const { root } = project;
    // The next start reads the beads before it takes the lock (its preflight)...
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    const committed: string[] = [];
    const recovery = await recoverRun({
      root,
      sessionId: 'next',
      git: new Git(root),
      source,
      maxIterations: 9,
      // ...and meanwhile the orphaned agent did its bead: its work in the tree, the bead closed; then it is stopped.
      stopOrphans: async () => {
        mkdirSync(path.join(root, 'work'), { recursive: true });
        writeFileSync(path.join(root, 'work', 'ws-ep.2.txt'), 'done\n');
        project.other('close', 'ws-ep.2', '--reason', 'done by the orphan');
        return { message: 'stopped the agent that a killed earlier run left running' };
      },
      makeGuard: (userPaths) => new CommitGuard(new Set(userPaths), () => source.workers.stateFiles(), undefined),
      gates: async () => [],
      commit: async (_guard, task: Task, iteration) => (committed.push(`${task.id} ${iteration}`), { commit: 'c0ffee', leftOut: [] }),
      sweep: async () => [],
    });
    expect(recovery.evidence.leftovers).toContain('work/ws-ep.2.txt');
    expect(committed).toEqual(['ws-ep.2 1']);
    expect(recovery.settled.map((item) => item.message)).toContainEqual(expect.stringMatching(/^iteration 1 \(ws-ep\.2\): the run died before judging it; ws-ep\.2 showed done, so its work \(1 path: work\/ws-ep\.2\.txt\) was judged now/));
    expect(recovery.journal.inflight).toEqual([]);
  });

  it("a worker's bead its orphaned agent closed after the start had read the beads, its work never merged: opened again to be done again", async () => {
    const project = deadRun(1);
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    const recovery = await recoverRun({
      root: project.root,
      sessionId: 'next',
      git: new Git(project.root),
      source,
      maxIterations: 9,
      // The worker's agent closed its bead in the shared database (its work is in its worktree, kept by the sweep).
      stopOrphans: async () => (project.other('close', 'ws-ep.2', '--reason', 'done by the orphan'), {}),
      makeGuard: (userPaths) => new CommitGuard(new Set(userPaths), () => source.workers.stateFiles(), undefined),
      sweep: async () => [],
    });
    expect(recovery.settled.map((item) => item.message)).toContain('iteration 1 (ws-ep.2, worker 1): ws-ep.2 showed done, but the run died before its work reached the branch: reopened, to be done again (whatever its worktree held went to a ralph-kept branch, above)');
    expect((project.other('list', '--all', '--limit', '0') as Array<{ id: string; status: string }>).find((issue) => issue.id === 'ws-ep.2')?.status).toBe('open');
  });
});
