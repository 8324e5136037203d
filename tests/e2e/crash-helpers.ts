// What the crash tests start and check: ralph through `node bin/ralph.mjs`, the commits that carry a task
// (the Ralph-Task trailer) with the files each holds, prd.json's stories as they stand.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { bdCalls, FAKES, FAST, makeSandbox, PROJECT, readBeads, seedBeads, standardEpic, type RalphResult, type Sandbox } from './helpers.ts';
import type { FakeBdVersion } from '../fakes/bd-seed.ts';
import type { CrashPoint } from '../../lib/recovery/crash-points.ts';
import { FEATURE, prdHistory, prdProject, prdStories, specKitProject } from './projects.ts';
import { beadsServer, independentEpic, makeHosts, type Hosts, type Transport } from './hosts.ts';

export const BIN = path.join(PROJECT, 'bin', 'ralph.mjs');

/** Starts `node bin/ralph.mjs` in the sandbox's repository (in its own process group when `group`). */
export function startNode(box: Sandbox, args: string[], extraEnv: NodeJS.ProcessEnv = {}, group = false): { child: ChildProcess; done: Promise<RalphResult>; output: () => { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: box.repo, env: { ...box.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<RalphResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, output: () => ({ stdout, stderr }) };
}

export const gitText = (box: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: box.repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Every commit naming a task in its Ralph-Task trailer, oldest first, with the files it changed. */
export function taskCommits(box: Sandbox, ref = 'HEAD'): Array<{ sha: string; task: string; iteration: number; files: string[] }> {
  const shas = gitText(box, ['rev-list', '--reverse', ref]).split('\n').filter(Boolean);
  const found: Array<{ sha: string; task: string; iteration: number; files: string[] }> = [];
  for (const sha of shas) {
    const body = gitText(box, ['log', '-1', '--format=%B', sha]);
    const task = /^Ralph-Task: (.+)$/m.exec(body)?.[1]?.trim();
    if (!task) continue;
    const files = gitText(box, ['diff-tree', '--no-commit-id', '--name-only', '-r', '--root', sha]).split('\n').filter(Boolean);
    found.push({ sha, task, iteration: Number(/^Ralph-Iteration: (\d+)$/m.exec(body)?.[1]), files });
  }
  return found;
}

/** prd.json's stories (snarktank shape) as they stand in the work tree, or at `ref`. */
export function prdState(box: Sandbox, ref?: string): Array<{ id: string; passes: boolean; status?: string }> {
  const text = ref ? gitText(box, ['show', `${ref}:prd.json`]) : readFileSync(path.join(box.repo, 'prd.json'), 'utf8');
  return (JSON.parse(text) as { userStories: Array<{ id: string; passes: boolean; status?: string }> }).userStories;
}

/** A sandbox whose `claude` is the crash tests' agent (tests/fakes/crash-agent.sh, crash-agent.mjs for beads). */
export function crashSandbox(): Sandbox {
  const box = makeSandbox({ agents: [] });
  symlinkSync(path.join(FAKES, 'crash-agent.sh'), path.join(box.bin, 'claude'));
  box.env.CRASH_AGENT_LOG = path.join(box.root, 'crash-agent.log');
  return box;
}

/** The tasks the crash agent was started on, in order. */
export const crashAgentTasks = (box: Sandbox): string[] =>
  existsSync(box.env.CRASH_AGENT_LOG!) ? readFileSync(box.env.CRASH_AGENT_LOG!, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { task: string }).task) : [];

export type Kind = 'prd' | 'speckit';

export const SPECKIT_TASKS = ['# Tasks: Demo', '', '## Phase 1: Setup', '', '- [X] T001 Create the project structure', '', '## Phase 2: User Story 1 - Greet (Priority: P1)', '', '- [ ] T002 [US1] Write greet() in src/greet.ts', '- [ ] T003 [US1] Test greet() in tests/greet.test.ts', '- [ ] T004 [US1] Document greet() in docs/greet.md', ''].join('\n');

/** Whether `id` shows done in the source's file at `ref` (a commit) or in the work tree. */
function shownDone(box: Sandbox, kind: Kind, id: string, ref?: string): boolean {
  if (kind === 'prd') return prdState(box, ref).find((story) => story.id === id)?.passes === true;
  const file = `${FEATURE}/tasks.md`;
  const text = ref ? gitText(box, ['show', `${ref}:${file}`]) : readFileSync(path.join(box.repo, file), 'utf8');
  return text.includes(`- [X] ${id} `);
}

/**
 * What every crash test ends with, after the restart ended 0: each task is done, flipped to done by exactly
 * one commit, its own (Ralph-Task), that also holds its work (work/<id>.txt), and never flipped back; the source's record says
 * completed once per task; the tree is clean; no journal, no lock, no worker branch or worktree is left.
 */
export function expectSettled(box: Sandbox, kind: Kind, ids: readonly string[]): void {
  expect(gitText(box, ['status', '--porcelain', '--untracked-files=all']), 'the tree is clean').toBe('');
  const shas = gitText(box, ['rev-list', '--reverse', '--first-parent', 'HEAD']).split('\n').filter(Boolean);
  for (const id of ids) {
    expect(shownDone(box, kind, id), `${id} done`).toBe(true);
    const flips: string[] = [];
    let before = false;
    for (const sha of shas) {
      let now = false;
      try {
        now = shownDone(box, kind, id, sha);
      } catch {
        now = false; // the file is not there yet
      }
      expect(before && !now, `${id} went back to not done in ${sha}`).toBe(false);
      if (!before && now) flips.push(sha);
      before = now;
    }
    expect(flips, `${id} is marked done by exactly one commit`).toHaveLength(1);
    const files = gitText(box, ['diff-tree', '--no-commit-id', '--name-only', '-r', '-m', '--first-parent', flips[0]!]).split('\n');
    expect(files, `the commit marking ${id} done holds its work`).toContain(`work/${id}.txt`);
    expect(gitText(box, ['log', '-1', '--format=%B', flips[0]!]), `the commit marking ${id} done is ${id}'s own`).toMatch(new RegExp(`^Ralph-Task: ${id}$`, 'm'));
  }
  if (kind === 'prd') {
    const completed = prdHistory(box).filter((record) => record.completionStatus === 'completed').map((record) => record.taskId);
    expect([...completed].sort(), 'one completed history record per story').toEqual([...ids].sort());
  } else {
    const progress = readFileSync(path.join(box.repo, FEATURE, 'progress.txt'), 'utf8');
    const completed = [...progress.matchAll(/^## Iteration \d+ - [^\n]*\n- Task: (T\d{3})[^\n]*\n- Status: ✅/gm)].map((match) => match[1]);
    expect([...completed].sort(), 'one completed progress entry per task').toEqual([...ids].sort());
  }
  expect(existsSync(path.join(box.repo, '.ralph', 'journal.json')), 'no journal left').toBe(false);
  expect(existsSync(path.join(box.repo, '.ralph.lock')), 'no lock left').toBe(false);
  expect(gitText(box, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-worker/']), 'no worker branch left').toBe('');
  expectSessionsEnded(box);
}

const GATE = 'true';

/**
 * A project of the kind, its task ids and the command line both starts use. `sideBySide`: Spec Kit's tasks
 * marked [P], so two hosts may hold two of them at once (PRD stories always may).
 */
export function crashProject(box: Sandbox, kind: Kind, count = 3, sideBySide = false): { ids: string[]; args: string[] } {
  if (kind === 'prd') {
    prdProject(box, prdStories(count), GATE);
    return { ids: Array.from({ length: count }, (_, index) => `US-${String(index + 1).padStart(3, '0')}`), args: [...FAST] };
  }
  const ids = Array.from({ length: count }, (_, index) => `T${String(index + 2).padStart(3, '0')}`);
  const lines = ids.map((id) => `- [ ] ${id}${sideBySide ? ' [P]' : ''} [US1] Part ${id} in src/${id}.ts`);
  specKitProject(box, count === 3 && !sideBySide ? SPECKIT_TASKS : [...SPECKIT_TASKS.split('\n').filter((line) => !/^- \[ \] T/.test(line)).slice(0, -1), ...lines, ''].join('\n'));
  return { ids, args: ['--commit', '--gate', GATE, ...FAST] };
}


/** A beads project for the crash tests (bd `version`): an epic of `count` beads, in a chain for one worker, side by side for several. */
export function beadsCrashProject(box: Sandbox, version: FakeBdVersion, parallel: boolean, count = 2): { ids: string[]; args: string[] } {
  box.env.FAKE_BD_VERSION = version;
  const issues = standardEpic(count);
  if (parallel) for (const issue of issues) if (issue.parent) issue.dependencies = [];
  seedBeads(box, issues);
  return { ids: issues.filter((issue) => issue.parent && !/clarify/.test(issue.title)).map((issue) => issue.id), args: ['--commit', '--gate', GATE, ...FAST] };
}

/**
 * The beads equivalent of expectSettled: every bead closed, by exactly one `bd close` over all the starts
 * (never reopened after), and exactly one commit of ralph's names it (Ralph-Task) and holds its work; no bead
 * in_progress or held by a ralph worker; the tree clean; no journal, lock, worker branch or worktree left.
 */
export function expectBeadsSettled(box: Sandbox, ids: readonly string[], agentCommits = false): void {
  expect(gitText(box, ['status', '--porcelain', '--untracked-files=all']), 'the tree is clean').toBe('');
  const beads = readBeads(box);
  const calls = bdCalls(box);
  const commits = taskCommits(box);
  for (const id of ids) {
    expect(beads.find((issue) => issue.id === id)?.status, `${id} closed`).toBe('closed');
    // Closed once for good: a close the restart undid (the work never reached the branch) is followed by a reopen.
    const changes = calls.filter((argv) => argv[1] === id && (argv[0] === 'close' || (argv[0] === 'update' && argv.includes('--status') && argv[argv.indexOf('--status') + 1] === 'open')));
    // (bd's log of these calls: a close of a closed bead is a second close; the last change a close)
    let closed = false;
    let twice = 0;
    for (const argv of changes) {
      if (argv[0] === 'close' && closed) twice += 1;
      closed = argv[0] === 'close';
    }
    expect({ twice, last: changes.at(-1)?.[0] }, `${id} closed exactly once (bd calls: ${JSON.stringify(changes)})`).toEqual({ twice: 0, last: 'close' });
    if (agentCommits) {
      // The agent commits its work itself (CRASH_AGENT_COMMIT): one commit adds it, the agent's or ralph's.
      const adding = gitText(box, ['log', '--format=%H', '--diff-filter=A', '--', `work/${id}.txt`]).split('\n').filter(Boolean);
      expect(adding, `exactly one commit adds ${id}'s work`).toHaveLength(1);
      expect(gitText(box, ['log', '-1', '--format=%B', adding[0]!]), `the commit adding ${id}'s work is ${id}'s`).toMatch(new RegExp(`^${id.replace('.', '\\.')}: done$|^Ralph-Task: ${id.replace('.', '\\.')}$`, 'm'));
      continue;
    }
    const own = commits.filter((commit) => commit.task === id);
    expect(own.map((commit) => commit.task), `exactly one commit of ralph's is ${id}'s`).toEqual([id]);
    expect(own[0]!.files, `${id}'s commit holds its work`).toContain(`work/${id}.txt`);
  }
  expect(beads.filter((issue) => issue.status === 'in_progress' || (issue.status !== 'closed' && /^ralph-/.test(issue.assignee ?? ''))).map((issue) => `${issue.id} ${issue.status} ${issue.assignee ?? ''}`), 'no bead in_progress or claimed by a ralph worker').toEqual([]);
  expect(existsSync(path.join(box.repo, '.ralph', 'journal.json')), 'no journal left').toBe(false);
  expect(existsSync(path.join(box.repo, '.ralph.lock')), 'no lock left').toBe(false);
  expect(gitText(box, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-worker/']), 'no worker branch left').toBe('');
  expectSessionsEnded(box);
  expect(existsSync(path.join(box.repo, '.ralph', 'worktrees')) ? readdirSync(path.join(box.repo, '.ralph', 'worktrees')) : [], 'no worktree left').toEqual([]);
}

/**
 * No session left without an end: every session_start in .ralph/events.jsonl has its session_end (a dead
 * run's written by the start after it, as died: interrupted, exit 137, with its session record), and
 * status.json shows the last run finished.
 */
export function expectSessionsEnded(box: Sandbox): string[] {
  const lines = readFileSync(path.join(box.repo, '.ralph', 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; session?: string; summary?: { exitCode: number; status: string } });
  const started = lines.filter((line) => line.type === 'session_start').map((line) => line.session!);
  const ends = lines.filter((line) => line.type === 'session_end');
  expect(started.filter((id) => !ends.some((line) => line.session === id)), 'every session that started has an end').toEqual([]);
  expect(ends.map((line) => line.session), 'each session ended once').toEqual([...new Set(ends.map((line) => line.session))]);
  const died = ends.filter((line) => line.summary?.exitCode === 137).map((line) => line.session!);
  for (const id of died) {
    const record = JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'sessions', `${id}.json`), 'utf8')) as { status: string; message: string };
    expect(record, `the dead session ${id}'s record`).toMatchObject({ status: 'interrupted', message: expect.stringMatching(/^died without ending/) });
  }
  const status = JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'status.json'), 'utf8')) as { state: string; exitCode: number };
  expect(status, 'status.json: the last run finished').toMatchObject({ state: 'finished', exitCode: 0 });
  return died;
}

/** The points one worker in the repository passes through (merged, claimed, pushed, released: several workers or hosts). */
export const ONE_WORKER: Array<[CrashPoint, number | string]> = [
  ['task_claimed', 1],
  ['agent_started', 1],
  ['agent_ended', 1],
  ['gates_run', 1],
  ['state_written', 1],
  ['work_committed', 1],
  // Killed once the step is done but before the journal learns it: the journal a step behind.
  ['state_written', '1:early'],
  ['work_committed', '1:early'],
  ['agent_started', 2],
  ['state_written', 2],
  ['status_written', 1],
];

// Two hosts on one remote (--remote), each a clone with its own ralph (tests/e2e/hosts.ts).

export const BRANCH = 'ralph/night';
const gitIn = (dir: string, args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** What two hosts may share: a source whose state travels with the commits, or beads in server mode. */
export type HostKind = Kind | 'beads';

/**
 * A sandbox on BRANCH whose `claude` is the crash tests' agent, with a project of `kind` of `count` tasks
 * that may run side by side, and its hosts. Beads: bd 1.2 in server mode, one database all hosts share
 * (`database`, the fake's file), claims in bd; `holding()`: whether host1 holds a task (a claim ref, or a bead
 * in progress assigned to host1's worker).
 */
export async function crashHosts(transport: Transport, count = 2, kind: HostKind = 'prd'): Promise<{ box: Sandbox; cluster: Hosts; ids: string[]; args: string[]; database?: string; holding: () => boolean }> {
  const box = makeSandbox({ agents: [], branch: BRANCH });
  symlinkSync(path.join(FAKES, 'crash-agent.sh'), path.join(box.bin, 'claude'));
  box.env.CRASH_AGENT_LOG = path.join(box.root, 'crash-agent.log');
  let database: string | undefined;
  let project: { ids: string[]; args: string[] };
  if (kind === 'beads') {
    box.env.FAKE_BD_VERSION = '1.2';
    const issues = independentEpic(count);
    database = beadsServer(box, issues);
    project = { ids: issues.filter((issue) => issue.parent && issue.status !== 'closed').map((issue) => issue.id as string), args: ['--epic', 'ws-9w6', '--commit', '--gate', GATE, ...FAST] };
  } else {
    project = crashProject(box, kind, count, true);
  }
  const cluster = await makeHosts(box, 2, transport);
  const holding = database ? () => storedBeads(database!).some((issue) => issue.status === 'in_progress' && /^ralph-host1-/.test(issue.assignee ?? '')) : () => cluster.remote(['for-each-ref', 'refs/ralph/']).trim() !== '';
  // A long lease: a claim the killed run left must be taken back by its clone's next start, never waited out.
  return { box, cluster, ids: project.ids, args: ['--remote', 'origin', '--lease', '60s', ...project.args], ...(database ? { database } : {}), holding };
}

/** The beads of the database all hosts share (beads in server mode). */
export const storedBeads = (database: string): Array<{ id: string; status: string; assignee?: string }> => (JSON.parse(readFileSync(database, 'utf8')) as { issues: Array<{ id: string; status: string; assignee?: string }> }).issues;

/**
 * expectHostsSettled for beads in server mode: every bead closed in the shared database, none in progress or
 * held by a ralph worker; on the remote's branch exactly one commit adds each bead's work, ralph's commit
 * of that bead (Ralph-Task); a linear history; each clone at the remote's head, clean, no journal, lock,
 * worker or kept branch.
 */
export function expectBeadsHostsSettled(hosts: Hosts, database: string, ids: readonly string[]): void {
  const beads = storedBeads(database);
  for (const id of ids) {
    expect(beads.find((issue) => issue.id === id)?.status, `${id} closed`).toBe('closed');
    const adding = hosts.remote(['log', '--format=%H', '--diff-filter=A', BRANCH, '--', `work/${id}.txt`]).split('\n').filter(Boolean);
    expect(adding, `exactly one commit adds ${id}'s work`).toHaveLength(1);
    expect(hosts.remote(['log', '-1', '--format=%B', adding[0]!]), `the commit adding ${id}'s work is ${id}'s`).toMatch(new RegExp(`^Ralph-Task: ${id.replace('.', '\\.')}$`, 'm'));
    const own = hosts.remote(['log', '--format=%H', `--grep=^Ralph-Task: ${id.replace('.', '\\.')}$`, BRANCH]).split('\n').filter(Boolean);
    expect(own, `exactly one commit of ralph's is ${id}'s`).toHaveLength(1);
  }
  expect(beads.filter((issue) => issue.status === 'in_progress' || (issue.status !== 'closed' && /^ralph-/.test(issue.assignee ?? ''))).map((issue) => `${issue.id} ${issue.status} ${issue.assignee ?? ''}`), 'no bead in_progress or claimed by a ralph worker').toEqual([]);
  // A host that ended before the killed host's restart pushed the landing it had left unpushed: bd said that
  // bead closed already (its agent closed it), so nothing told this host to wait for its work. Behind by
  // that landing alone: the other hosts' commits, nothing of its own.
  expectClones(hosts, false, (host, head) => {
    const mine = gitIn(host.repo, ['rev-parse', 'HEAD']).trim();
    const between = hosts.remote(['log', '--format=%(trailers:key=Ralph-Host,valueonly)', `${mine}..${head}`]).split('\n').filter(Boolean);
    expect(hosts.remote(['rev-list', head]).split('\n'), `${host.repo} behind the remote's head, never apart`).toContain(mine);
    expect(between.every((name) => name !== host.env.RALPH_HOST_NAME), `${host.repo} lacks only other hosts' landings`).toBe(true);
  });
}

/** Whether `id` shows done in the source's file (prd.json, tasks.md) at `sha` of the bare repository. */
const shownDoneOnRemote = (hosts: Hosts, kind: Kind, id: string, sha: string): boolean => {
  try {
    if (kind === 'speckit') return hosts.remote(['show', `${sha}:${FEATURE}/tasks.md`]).includes(`- [X] ${id} `);
    return (JSON.parse(hosts.remote(['show', `${sha}:prd.json`])) as { userStories: Array<{ id: string; passes: boolean }> }).userStories.find((story) => story.id === id)?.passes === true;
  } catch {
    return false; // the file is not there yet
  }
};

/** The tasks the source's record on the remote's branch says were completed, one entry per completion. */
function completedOnRemote(hosts: Hosts, kind: Kind): string[] {
  if (kind === 'speckit') {
    // ralph-tasks.json, merged when a landing was replayed: every task as the host that did it left it.
    const tracked = (JSON.parse(hosts.remote(['show', `${BRANCH}:${FEATURE}/ralph-tasks.json`])) as { tasks: Array<{ id: string; status: string; lastOutcome?: string }> }).tasks;
    expect(tracked.filter((task) => task.id !== 'T001').map((task) => `${task.id} ${task.status} ${task.lastOutcome}`), 'ralph-tasks.json: each task done, passed').toEqual([...tracked.filter((task) => task.id !== 'T001').map((task) => `${task.id} done pass`)]);
    const progress = hosts.remote(['show', `${BRANCH}:${FEATURE}/progress.txt`]);
    const entries = [...progress.matchAll(/^## Iteration (\d+) - [^\n]*\n- Task: (T\d{3})[^\n]*\n- Status: ✅[^]*?\n---\n/gm)];
    // Two hosts number their iterations on their own: a replayed landing's entry takes the next free number.
    const numbers = [...progress.matchAll(/^## Iteration (\d+) - /gm)].map((match) => match[1]!);
    expect(numbers, 'progress.txt: each iteration number once').toEqual([...new Set(numbers)]);
    // The entry names the work its commit holds (one recovery recorded too, after a kill between merge and record).
    for (const [entry, , id] of entries) expect(entry, `progress.txt: ${id}'s entry lists its work`).toContain(`  - work/${id}.txt\n`);
    const summary = (JSON.parse(hosts.remote(['show', `${BRANCH}:${FEATURE}/ralph-tasks.json`])) as { summary: { done: number; open: number } }).summary;
    expect(summary, 'ralph-tasks.json: the summary counts every task done').toMatchObject({ done: tracked.length, open: 0 });
    return entries.map((match) => match[2]!);
  }
  const records = hosts.remote(['ls-tree', '-r', '--name-only', BRANCH]).split('\n').filter((file) => /history\/iteration-\d+\.json$/.test(file));
  return records.map((file) => JSON.parse(hosts.remote(['show', `${BRANCH}:${file}`])) as { taskId: string; completionStatus: string }).filter((record) => record.completionStatus === 'completed').map((record) => record.taskId);
}

/**
 * What every run of two hosts ends with, on the remote's branch: each task flipped to done (prd.json's
 * passes, tasks.md's [X]) by exactly one commit, its own (Ralph-Task), holding its work (work/<id>.txt),
 * never flipped back; the source's record says completed once per task (a history record, a progress.txt
 * entry); a linear history; no claim; each clone at the remote's head, clean, with no
 * journal, lock or worker branch left, and no kept branch (`sweptKept`: but what a killed run's worktree
 * held with its agent at work, kept by the sweep in the clone).
 */
export function expectHostsSettled(hosts: Hosts, ids: readonly string[], sweptKept = false, kind: Kind = 'prd'): void {
  const shas = hosts.remote(['rev-list', '--reverse', BRANCH]).split('\n').filter(Boolean);
  for (const id of ids) {
    const flips: string[] = [];
    let before = false;
    for (const sha of shas) {
      const now = shownDoneOnRemote(hosts, kind, id, sha);
      expect(before && !now, `${id} went back to not done in ${sha}`).toBe(false);
      if (!before && now) flips.push(sha);
      before = now;
    }
    expect(flips, `${id} is marked done by exactly one commit`).toHaveLength(1);
    expect(hosts.remote(['diff-tree', '--no-commit-id', '--name-only', '-r', flips[0]!]).split('\n'), `the commit marking ${id} done holds its work`).toContain(`work/${id}.txt`);
    expect(hosts.remote(['log', '-1', '--format=%B', flips[0]!]), `the commit marking ${id} done is ${id}'s own`).toMatch(new RegExp(`^Ralph-Task: ${id}$`, 'm'));
    if (kind === 'speckit') {
      // Its progress entry and its commit's trailer say one number (a replay after a kill renumbers by the trailer).
      const trailer = /^Ralph-Iteration: (\d+)$/m.exec(hosts.remote(['log', '-1', '--format=%B', flips[0]!]))?.[1];
      const entry = new RegExp(`^## Iteration (\\d+) - [^\\n]*\\n- Task: ${id}\\b[^\\n]*\\n- Status: ✅`, 'm').exec(hosts.remote(['show', `${BRANCH}:${FEATURE}/progress.txt`]))?.[1];
      expect(entry, `${id}'s progress entry has the number of its commit's Ralph-Iteration trailer`).toBe(trailer);
    }
  }
  expect(completedOnRemote(hosts, kind).sort(), 'the source records each task completed once').toEqual([...ids].sort());
  expect(hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/ralph/']), 'no claim left on the remote').toBe('');
  expectClones(hosts, sweptKept);
}

/** A linear history, no kept branch on the remote; each clone at the remote's head, clean, nothing of a run left (see above). */
function expectClones(hosts: Hosts, sweptKept = false, behind?: (host: Sandbox, head: string) => void): void {
  expect(hosts.remote(['log', '--format=%P', BRANCH]).trim().split('\n').every((parents) => parents.split(' ').length <= 1), 'a linear history').toBe(true);
  expect(hosts.remote(['for-each-ref', '--format=%(refname)', 'refs/heads/ralph-kept/']), 'no kept branch needed').toBe('');
  const head = hosts.remote(['rev-parse', BRANCH]).trim();
  for (const host of hosts.hosts) {
    expect(gitIn(host.repo, ['status', '--porcelain', '--untracked-files=all']), `${host.repo} is clean`).toBe('');
    if (behind && gitIn(host.repo, ['rev-parse', 'HEAD']).trim() !== head) behind(host, head);
    else expect(gitIn(host.repo, ['rev-parse', 'HEAD']).trim(), `${host.repo} at the remote's head`).toBe(head);
    expect(gitIn(host.repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-worker/']), `no worker branch left in ${host.repo}`).toBe('');
    const kept = gitIn(host.repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph-kept/']).split('\n').filter(Boolean);
    // A worktree (or its branch, when a kill cut the sweep short) a kill found with an agent at work: its
    // unjudged work kept by the sweep, the task run again.
    expect(kept.filter((branch) => !(sweptKept && /^ralph-kept\/[^/]+\/w\d+-leftover(-ix)?$/.test(branch))), 'no kept branch needed').toEqual([]);
    expect(gitIn(host.repo, ['ls-files', '--others', '--ignored', '--exclude-standard', '.ralph/journal.json', '.ralph.lock']).trim(), 'no journal, no lock left').toBe('');
  }
}
