import { existsSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../../errors.ts';
import { Bd, type BdIssue } from './bd.ts';
import { emptyState, isClosed, noteOutsideList, openBlockers, readyAgrees } from './state.ts';
import { actorEnv, claimForWorker, createBeadsWorkers, workerActor, workerPrompt } from './workers.ts';
import { expiredClaim, leaseOf, renewClaim, takeOver, TAKEOVER_SETTLE_MS } from './lease.ts';
import { createClaimKeeper, type ClaimKeeper } from './keeper.ts';
import { giveBackAfter, putBackOrphans, recoveryView, releaseAtEnd, releaseHeldNow } from './claims.ts';
import { fileQuestion, isHumanQuestion, syncQuestions } from './questions.ts';
import { beadsDirOf, loopbackWarning, readBeadsSetup, remoteStateOf } from './remote.ts';
import type { IterationInfo, SnapshotPurpose, SourceContext, Snapshot, Task, TaskSource } from '../types.ts';
import { readQuestions, questionsOf, type Question } from '../../questions/store.ts';

export { isClosed } from './state.ts';
export { beadBrief, epicTitleForBranch, featureNameFromBranch, withQuestionNotes, withReviewNotes } from './text.ts';
import { beadBrief, withQuestionNotes, withReviewNotes } from './text.ts';
import { clarifyProblem, findEpic } from './epic.ts';

export const DEFAULT_BEADS_PROMPT = '/sp:next';

function toTask(issue: BdIssue): Task {
  return { id: issue.id, title: issue.title, status: issue.status, priority: issue.priority, meta: { type: issue.issue_type, ...(issue.assignee ? { assignee: issue.assignee } : {}) } };
}

/** An expired claim of another host, offered as ready: `heldBy` tells claim() to take it over. */
function takeoverTask(issue: BdIssue): Task {
  return { ...toTask(issue), meta: { type: issue.issue_type, heldBy: issue.assignee } };
}

/**
 * Beads mode: the epic named by the branch (or --epic), its ready children, through the bd CLI only.
 * Steady state costs two bd calls an iteration: `bd ready` before it, `bd list` after it (beads-state.ts).
 */
export function createBeadsSource(ctx: SourceContext): TaskSource {
  const bd = new Bd(ctx.deps, ctx.root);
  let epic: BdIssue | undefined;
  const state = emptyState();
  // True right after a snapshot: its children list is current, so claim() needs no extra bd call.
  let fresh = false;
  // What each remaining task waits for, read (bd show) only when nothing is ready.
  let blockers = new Map<string, string[]>();
  // --remote: this host's claims carry its id, are renewed while held and expire when it dies (beads-lease.ts).
  const host = ctx.host;
  const lease = leaseOf(ctx.config);
  let bdVersion: string | undefined;
  // Claims are renewed with --remote (ralph's lease), and wherever bd keeps leases itself (`bd heartbeat`:
  // a claim lives 5 minutes there). Made at the first claim, when bd's capabilities are known.
  let keeper: ClaimKeeper | undefined;
  let keeperMade = false;
  // The beads this run claimed for a worker, with the holder: only then has it claims to give back at its end.
  const claims = new Map<string, string>();
  const makeKeeper = async (): Promise<ClaimKeeper | undefined> => {
    if (keeperMade) return keeper;
    keeperMade = true;
    const { heartbeat } = await bd.capabilities();
    if (host === undefined && !heartbeat) return undefined;
    // Well inside bd's 5-minute lease when bd keeps one; lease/3 of ralph's own otherwise.
    const every = Math.max(1, heartbeat ? Math.min(Math.floor(lease / 3), 60_000) : Math.floor(lease / 3));
    keeper = createClaimKeeper({ every, renew: (id, worker) => renewClaim(bd, id, workerActor(worker, host), ctx.deps.now(), heartbeat), warn: ctx.warn });
    return keeper;
  };
  // With --remote every iteration runs under a worker's name, one agent or several: bd's claim is what
  // keeps two hosts off one bead, and /sp:next alone would pick any ready one.
  const workerOf = (info: IterationInfo): number | undefined => info.worker ?? (host === undefined ? undefined : 1);

  const list = async (): Promise<void> => {
    // Epics and questions for people (`human`, bd 1.2+) are never tasks.
    state.children = (await bd.children(epic!.id)).filter((issue) => issue.issue_type !== 'epic' && !isHumanQuestion(issue));
    state.carried = true;
  };
  // Beads the reviewer rejected and reopened, with its reasons: /sp:next picks the task, so the next prompt
  // carries them until the bead closes again.
  const rejected = new Map<string, { title: string; iteration: number; reasons: string }>();

  // Our own agents are the only ones working here (we hold the lock): see beads-claims.ts.
  const shared = (): boolean => readBeadsSetup(beadsDirOf(ctx.root, ctx.deps.env), ctx.deps.env).kind === 'server';
  const reopenOrphans = (reason: string): Promise<string[]> => putBackOrphans(bd, state.children, host, reason, shared());

  // Questions are kept per epic; a bead waiting for an answer is never ready (bd ready still lists it).
  const scope = (): string => epic?.id ?? ctx.config.epic ?? '';
  const questions = (): Question[] => questionsOf(readQuestions(ctx.root), 'beads', scope());
  // Where bd has `bd human`, the run's questions live there too (beads-questions.ts): read only while one is open.
  const answersFromBeads = async (): Promise<string[]> => {
    if (questions().length === 0 || !(await bd.capabilities()).human) return [];
    return syncQuestions(bd, ctx.root, { source: 'beads', scope: scope() }, new Date(ctx.deps.now()).toISOString());
  };
  const build = (ready: BdIssue[]): Snapshot => {
    // A rejected bead closed again carries no note any more (a new rejection sets one again).
    for (const issue of state.children) if (isClosed(issue)) rejected.delete(issue.id);
    const asked = new Set(questions().filter((item) => item.answer === undefined).map((item) => item.taskId));
    const remaining = state.children.filter((issue) => !isClosed(issue)).map(toTask);
    const waiting = remaining.filter((task) => asked.has(task.id));
    // --remote: another host's claim that went unrenewed for a whole lease is offered for takeover.
    const now = ctx.deps.now();
    const expired = host === undefined ? [] : state.children.filter((issue) => expiredClaim(issue, host, now, lease));
    return {
      ready: [...ready.filter((issue) => !asked.has(issue.id) && !isHumanQuestion(issue)).map(toTask), ...expired.filter((issue) => !asked.has(issue.id)).map(takeoverTask)],
      remaining,
      done: state.children.filter(isClosed).map(toTask),
      ...(waiting.length > 0 ? { waiting } : {}),
    };
  };

  const source: TaskSource = {
    name: 'beads',
    defaultMaxIterations: 50,

    describe: () => (epic ? `epic ${epic.id} "${epic.title}"` : 'beads epic (unresolved)'),
    title: () => epic?.title,
    scope,

    async check() {
      const problems: string[] = [];
      if (!existsSync(path.join(ctx.root, '.beads'))) {
        problems.push(`beads is not initialised in ${ctx.root} (no .beads/): run 'bd init' first`);
        return problems;
      }
      try {
        if (host !== undefined) {
          bdVersion = await bd.version();
          const warning = loopbackWarning(readBeadsSetup(beadsDirOf(ctx.root, ctx.deps.env), ctx.deps.env));
          if (warning) ctx.warn(warning);
        }
        const found = await findEpic(bd, { epic: ctx.config.epic, branch: ctx.branch });
        epic = found.epic;
        if (found.problem) problems.push(found.problem);
        if (epic) {
          await list();
          const problem = clarifyProblem(epic, state.children);
          if (problem) problems.push(problem);
        }
      } catch (error) {
        problems.push(errorMessage(error));
      }
      return problems;
    },

    async recover() {
      if (!epic) return [];
      await list();
      return [...(await reopenOrphans('an interrupted run')), ...(await answersFromBeads())];
    },

    // --dry-run, after check() listed the children: what recover() would give back or put back, and the beads
    // as it (and recovery's `redo`) would leave them.
    afterRecovery: (redo: readonly string[] = []) => recoveryView(bd, epic ? state.children : [], { host, shared: shared(), redo }, () => source.snapshot()),

    // A worker's agent closed its bead in the shared database, then ralph died before merging its work: the
    // bead goes back to open, unassigned, to be done again (the work it left is kept on a ralph-kept branch).
    async redo(task: Task) {
      await bd.setStatus(task.id, 'open', { assignee: '' });
      state.carried = false;
    },

    // The end of every run: the beads this run's workers still hold go back to open (beads-claims.ts).
    async release() {
      keeper?.stop();
      if (claims.size === 0 || !epic) return [];
      await list();
      return releaseAtEnd(bd, state.children, host);
    },

    // A forced exit: the same at once, through a synchronous bd, each bead only while still its worker's.
    releaseNow(timeoutMs: number) {
      keeper?.stop();
      releaseHeldNow((args, ms) => bd.runNow(args, ms), claims, host !== undefined, timeoutMs);
    },

    // A worker's agent runs as the worker's actor: the lease line lets only a claim's assignee close it.
    agentEnv(info?: IterationInfo) {
      const worker = info ? workerOf(info) : undefined;
      return worker === undefined ? {} : actorEnv(workerActor(worker, host));
    },

    async claim(task: Task, info: IterationInfo) {
      // Several workers (or --remote): each bead is claimed for its worker, atomically, and /sp:next is told which.
      const worker = workerOf(info);
      if (worker !== undefined) {
        const renewing = await makeKeeper();
        renewing?.release(worker);
        claims.set(task.id, workerActor(worker, host));
        const holder = typeof task.meta?.heldBy === 'string' ? task.meta.heldBy : undefined;
        if (holder !== undefined && host !== undefined) {
          const { reclaim } = await bd.capabilities();
          await takeOver(bd, task, { holder, worker, host, lease, now: () => ctx.deps.now(), settle: () => ctx.deps.sleep(TAKEOVER_SETTLE_MS), reclaim });
          ctx.warn(reclaim ? `took over ${task.id} from ${holder}: its lease in beads ran out (bd reclaim)` : `took over ${task.id} from ${holder}: its claim was not renewed for ${Math.round(lease / 1000)} s (the lease)`);
        }
        else if (task.status !== 'in_progress') await claimForWorker(bd, task, worker, host);
        renewing?.hold(worker, task.id);
        return;
      }
      // Before a retry, the failed attempt may have claimed a task; /sp:next only sees open ones.
      if (!fresh && epic) await list();
      fresh = false;
      for (const message of await reopenOrphans('the failed attempt')) ctx.warn(message);
    },

    async snapshot(purpose: SnapshotPurpose = 'next'): Promise<Snapshot> {
      fresh = true;
      // An answer given in beads (bd human respond) counts from the next pick on.
      if (purpose === 'next') for (const message of await answersFromBeads()) ctx.warn(message);
      if (purpose === 'progress') {
        // What the agent finished is all the loop asks now; the next `next` read asks bd ready afresh.
        await list();
        const open = new Set(state.children.filter((issue) => issue.status === 'open').map((issue) => issue.id));
        return build(state.lastReady.filter((issue) => open.has(issue.id)));
      }
      const ready = await bd.ready(epic!.id);
      if (!readyAgrees(state, ready)) {
        await list();
        noteOutsideList(state, ready);
      }
      state.carried = false;
      state.lastReady = ready;
      const snapshot = build(ready);
      blockers = new Map();
      if (ready.length === 0 && snapshot.remaining.length > 0) blockers = openBlockers(await bd.showMany(snapshot.remaining.map((task) => task.id)));
      return snapshot;
    },

    async prompt(task: Task, info: IterationInfo) {
      const prompt = ctx.config.prompt ?? DEFAULT_BEADS_PROMPT;
      const notes = [...rejected].map(([id, note]) => ({ id, ...note }));
      const open = new Set(state.children.filter((issue) => !isClosed(issue)).map((issue) => issue.id));
      const asked = questions().filter((item) => open.has(item.taskId));
      // One agent: /sp:next picks the bead, so every answered bead's answers go along; a worker's only its own.
      const worker = workerOf(info);
      return withQuestionNotes(withReviewNotes(worker === undefined ? prompt : workerPrompt(prompt, task, worker, host), notes), asked, worker === undefined ? undefined : task.id);
    },

    words: { task: 'bead', finished: 'closed' },

    // The database and its JSONL export: bd's own bookkeeping, whoever ran bd.
    bookkeepingFiles: () => ['.beads/'],

    async brief(task: Task) {
      const issue = await bd.show(task.id);
      return beadBrief(issue ?? { id: task.id, title: task.title, status: task.status, priority: task.priority ?? 2 });
    },

    async abandon(task: Task, info: IterationInfo, why: string) {
      if (!epic) return undefined;
      const worker = workerOf(info);
      if (worker !== undefined) keeper?.release(worker);
      await list();
      const reason = `iteration ${info.iteration}, which did not finish (${why})`;
      // One agent: /sp:next chose the bead, so whatever it left in_progress goes back.
      if (worker === undefined) {
        const messages = await reopenOrphans(reason);
        return messages.length > 0 ? messages.join('; ') : undefined;
      }
      // A worker: its own bead, given back as its holder (the lease line lets only the holder do it).
      const refused = await giveBackAfter(bd, state.children, task.id, workerActor(worker, host), host !== undefined);
      if (refused === false) return undefined;
      state.carried = false;
      return refused ? `could not give back ${task.id} after ${reason}: ${refused}` : `${task.id} "${task.title}" was left in_progress by ${reason}; put back to open`;
    },

    async settle(result, info: IterationInfo) {
      // The iteration is over: its bead is no longer this host's to keep alive.
      const worker = workerOf(info);
      if (worker !== undefined) {
        keeper?.release(worker);
        // Not closed: the worker's claim goes, so the bead is ready again (for any worker, or the next run).
        const refused = await giveBackAfter(bd, state.children, result.task?.id, workerActor(worker, host), host !== undefined);
        if (refused !== false) state.carried = false;
        if (refused) ctx.warn(`could not give back ${result.task.id} after iteration ${info.iteration}: ${refused}`);
      }
      if (result.kind === 'question' && result.question !== undefined && (await bd.capabilities()).human) ctx.warn(await fileQuestion(bd, result.task, result.question, info.iteration));
    },

    async reopen(task: Task, reasons: string, info: IterationInfo) {
      const worker = workerOf(info);
      if (worker !== undefined) keeper?.release(worker);
      // A worker's bead carries its name: unassigned, so any worker (or host) can claim it again.
      await bd.setStatus(task.id, 'open', worker === undefined ? {} : { assignee: '' });
      // The children list ralph carries says closed: the next snapshot lists them again.
      state.carried = false;
      rejected.set(task.id, { title: task.title, iteration: info.iteration, reasons });
    },

    workers: createBeadsWorkers(ctx.root, (purpose) => source.snapshot(purpose)),

    // Exact once check() has asked bd its version; before that, judged by .beads/ alone.
    remoteState: () => remoteStateOf(readBeadsSetup(beadsDirOf(ctx.root, ctx.deps.env), ctx.deps.env), bdVersion),

    explainStuck(snapshot: Snapshot) {
      const byId = new Map(state.children.map((issue) => [issue.id, issue]));
      const lines = snapshot.remaining.map((task) => {
        const waiting = (blockers.get(task.id) ?? []).filter((id) => !isClosed(byId.get(id) ?? { status: 'open' }));
        const why = waiting.length > 0 ? `, waits for ${waiting.join(', ')}` : task.status === 'in_progress' ? ', claimed by someone else' : '';
        return `  ${task.id} "${task.title}" (${task.status}${why})`;
      });
      return `no task of ${source.describe()} is ready; ${snapshot.remaining.length} remain:\n${lines.join('\n')}`;
    },
  };
  return source;
}
