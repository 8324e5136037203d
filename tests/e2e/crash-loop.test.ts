// The crash loop: ralph killed at random moments (seeded) over and over, alone (its agents live on as
// orphans) or with every process under it (the machine dies), restarted each time with the same command
// until a run ends 0. Then the same checks as after each named crash point (crash-helpers.ts). Bounded so
// the suite runs it: a few kills per seed. A longer loop: CRASH_LOOP_SEEDS=1,2,3,… CRASH_LOOP_KILLS=30
// CRASH_LOOP_TASKS=8.
import { readFileSync, existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { random } from '../support/random.ts';
import { pidAlive, waitFor, type Sandbox } from './helpers.ts';
import { beadsCrashProject, crashHosts, crashProject, crashSandbox, expectBeadsSettled, expectHostsSettled, expectSettled, startNode, type Kind } from './crash-helpers.ts';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.cleanup());

const SEEDS = (process.env.CRASH_LOOP_SEEDS ?? '').split(',').filter(Boolean).map(Number);
const KILLS = Number(process.env.CRASH_LOOP_KILLS ?? 6);
/** Tasks per project: each is a window for the kills. */
const STORIES = Number(process.env.CRASH_LOOP_TASKS ?? 4);

/** Every agent the crash agent logged (each leads its own process group), or those that worked under `under`. */
const agentGroups = (box: Sandbox, under?: string): number[] =>
  existsSync(box.env.CRASH_AGENT_LOG!)
    ? readFileSync(box.env.CRASH_AGENT_LOG!, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { pid: number; cwd: string })
        .filter((agent) => under === undefined || agent.cwd.startsWith(`${under}/`) || agent.cwd === under)
        .map((agent) => agent.pid)
    : [];

const killGroup = (pgid: number): void => {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // gone already
  }
};

interface Figures {
  seed: number;
  starts: number;
  kills: number;
  machine: number;
  wallMs: number;
}

/**
 * Waits for `run` to end, or kills it at a random moment: mostly one of the work (counted from ralph's first
 * line: it has started), sometimes of the start. Alone: ralph's group only (its agents live on as orphans).
 * The machine: ralph's group (its gates too) and every agent group that worked under `repo`. Returns the
 * result when the run ended by itself, else how it was killed.
 */
async function killAtRandom(run: ReturnType<typeof startNode>, next: () => number, box: Sandbox, repo: string | undefined): Promise<{ ended: Awaited<ReturnType<typeof startNode>['done']> } | { machine: boolean; delay: number; early: boolean }> {
  const early = next() < 0.2;
  const delay = Math.floor(next() * 1500);
  const started = early ? Promise.resolve() : new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (run.output().stderr.length > 0 || run.child.exitCode !== null) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  const ended = await Promise.race([run.done, started.then(() => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), delay)))]);
  if (ended !== undefined) return { ended };
  const machine = next() < 0.5;
  killGroup(run.child.pid!);
  if (machine) for (const pgid of agentGroups(box, repo)) killGroup(pgid);
  const killed = await run.done;
  if (process.env.CRASH_LOOP_DEBUG) console.log(`kill ${delay} ms after ${early ? 'the start' : 'its first line'} (${machine ? 'machine' : 'alone'}):\n${killed.stderr}`);
  return { machine, delay, early };
}

/** Starts, kills at a random moment, starts again…; the last start runs to its end. */
async function crashLoop(kind: Kind | 'beads', seed: number, parallel: number, kills: number): Promise<Figures> {
  const next = random(seed);
  sandbox = crashSandbox();
  // The agent takes a while, so a kill often finds one at work (and, alone, leaves it running as an orphan).
  sandbox.env.CRASH_AGENT_MS = '400';
  const box = sandbox;
  // Beads: an epic of STORIES beads (bd 1.2), in a chain for one worker, side by side for several.
  const { ids, args } = kind === 'beads' ? beadsCrashProject(box, '1.2', parallel > 1, STORIES) : crashProject(box, kind, STORIES);
  const command = parallel > 1 ? [...args, '--parallel', String(parallel)] : args;
  const began = Date.now();
  const figures: Figures = { seed, starts: 0, kills: 0, machine: 0, wallMs: 0 };
  for (;;) {
    const run = startNode(box, command, {}, true);
    figures.starts += 1;
    if (figures.kills < kills) {
      const outcome = await killAtRandom(run, next, box, undefined);
      if ('ended' in outcome) {
        expect(outcome.ended.code, `seed ${seed}, start ${figures.starts}: ${outcome.ended.stderr}`).toBe(0);
        break;
      }
      figures.kills += 1;
      if (outcome.machine) figures.machine += 1;
      continue;
    }
    const last = await run.done;
    expect(last.code, `seed ${seed}, start ${figures.starts} (after ${figures.kills} kills): ${last.stderr}\n${last.stdout}`).toBe(0);
    break;
  }
  figures.wallMs = Date.now() - began;
  // Orphans of the last kills may still be ending (a restart stopped them, or they finished).
  await waitFor(() => agentGroups(box).every((pid) => !pidAlive(pid)), 10_000, 'the agents to be gone');
  if (kind === 'beads') expectBeadsSettled(box, ids);
  else expectSettled(box, kind, ids);
  console.log(`crash loop ${kind} --parallel ${parallel} seed ${seed}: ${figures.starts} starts, ${figures.kills} kills (${figures.machine} of the machine), ${(figures.wallMs / 1000).toFixed(1)} s`);
  return figures;
}

describe('the crash loop: kill at random moments, restart, until a run ends 0', () => {
  it.each(SEEDS.length > 0 ? SEEDS : [11, 12])('PRD, one worker, seed %d', async (seed) => {
    await crashLoop('prd', seed, 1, KILLS);
  });
  it.each(SEEDS.length > 0 ? SEEDS : [21])('Spec Kit, one worker, seed %d', async (seed) => {
    await crashLoop('speckit', seed, 1, KILLS);
  });
  it.each(SEEDS.length > 0 ? SEEDS : [31])('PRD, --parallel 3, seed %d', async (seed) => {
    await crashLoop('prd', seed, 3, KILLS);
  });
  it.each(SEEDS.length > 0 ? SEEDS : [41])('beads, one worker, seed %d', async (seed) => {
    await crashLoop('beads', seed, 1, KILLS);
  });
  it.each(SEEDS.length > 0 ? SEEDS : [51])('beads, --parallel 2, seed %d', async (seed) => {
    await crashLoop('beads', seed, 2, KILLS);
  });
});

/**
 * Two hosts on one remote: host1 killed at random moments (alone or with its machine) and started again each
 * time with the same command, while host2 runs on from start to end; then the checks of two hosts
 * (crash-helpers.ts expectHostsSettled: on the remote's branch, every task done once in its own commit, no
 * claim left, each clone clean at the remote's head).
 */
async function crashLoopHosts(seed: number, kills: number): Promise<Figures> {
  const next = random(seed);
  const made = await crashHosts('path', Math.max(3, STORIES - 1));
  sandbox = made.box;
  const { cluster, ids, args } = made;
  const [host1, host2] = cluster.hosts as [Sandbox, Sandbox];
  for (const host of cluster.hosts) host.env.CRASH_AGENT_MS = '400';
  const began = Date.now();
  const figures: Figures = { seed, starts: 0, kills: 0, machine: 0, wallMs: 0 };
  const other = startNode(host2, args);
  for (;;) {
    const run = startNode(host1, args, {}, true);
    figures.starts += 1;
    if (figures.kills < kills) {
      const outcome = await killAtRandom(run, next, sandbox, host1.repo);
      if ('ended' in outcome) {
        expect(outcome.ended.code, `seed ${seed}, host1's start ${figures.starts}: ${outcome.ended.stderr}`).toBe(0);
        break;
      }
      figures.kills += 1;
      if (outcome.machine) figures.machine += 1;
      continue;
    }
    const last = await run.done;
    expect(last.code, `seed ${seed}, host1's start ${figures.starts} (after ${figures.kills} kills): ${last.stderr}`).toBe(0);
    break;
  }
  const second = await other.done;
  expect(second.code, `seed ${seed}, host2: ${second.stderr}`).toBe(0);
  figures.wallMs = Date.now() - began;
  await waitFor(() => agentGroups(sandbox!).every((pid) => !pidAlive(pid)), 10_000, 'the agents to be gone');
  expectHostsSettled(cluster, ids, true);
  console.log(`crash loop two hosts on a remote seed ${seed}: host1 ${figures.starts} starts, ${figures.kills} kills (${figures.machine} of the machine), ${(figures.wallMs / 1000).toFixed(1)} s`);
  return figures;
}

describe('the crash loop with two hosts on a remote: one host killed at random moments while the other runs', () => {
  it.each(SEEDS.length > 0 ? SEEDS : [41])('PRD, seed %d', async (seed) => {
    await crashLoopHosts(seed, SEEDS.length > 0 ? KILLS : 3);
  }, 180_000);
});
