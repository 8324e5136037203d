import type { Deps } from '../deps.ts';
import type { Config, SourceName } from '../config/index.ts';
import type { GateResult } from '../gates.ts';
import type { Classification } from '../agents/types.ts';
import type { ReviewRecord } from '../events.ts';
import type { Task } from '../task.ts';

/** How a source names its tasks and their finishing in messages (`bead` … `closed`). */
export interface TaskWords {
  task: string;
  finished: string;
}

/** One unit of work as any source sees it. */
export type { Task };

/** What a source looks like at one moment. `remaining` is everything not done (ready or not). */
export interface Snapshot {
  ready: Task[];
  remaining: Task[];
  done: Task[];
  /** Tasks the source set aside (e.g. skipped after repeated failures): never ready, and still open, so the run cannot complete while any is listed. */
  skipped?: Task[];
  /** Tasks whose agent asked a question nobody has answered yet (`.ralph/questions.jsonl`): in `remaining`, never ready. */
  waiting?: Task[];
}

export interface IterationInfo {
  iteration: number;
  maxIterations: number;
  sessionId: string;
  /** HEAD as the iteration starts, when the loop knows it (lets a source cache what depends on it). */
  head?: string;
  /** The worker (1-based) running the iteration in its own worktree; undefined when the agent works in the repository. */
  worker?: number;
  /** This run's count of the iteration (1-based) and this run's limit; `iteration` numbers the session on from earlier runs. */
  run?: { count: number; max: number };
}

/** What the loop learned from one iteration, handed back to the source to record. */
export interface IterationResult {
  iteration: number;
  task: Task;
  /** `question`: the agent asked a person (`question`); neither a failure nor progress, never retried. */
  kind: 'pass' | 'fail' | 'no_change' | 'question';
  question?: string;
  reason: string;
  tasksDone: string[];
  filesChanged: string[];
  claimedComplete: boolean;
  agentText: string;
  durationMs: number;
  commit?: string;
  /** ralph's quality gates of this iteration (empty when none ran). */
  gates?: GateResult[];
  /** The independent review of this iteration, when one ran. */
  review?: ReviewRecord;
}

/** What a source may weigh when it decides an iteration's outcome itself. */
export interface OutcomeInput {
  task: Task;
  classification: Classification;
  exhausted: boolean;
  tasksDone: string[];
  gates: GateResult[];
  agentText: string;
}

/**
 * Why the loop reads the source. `next` (the default): to pick the next task or decide the run is over;
 * everything must be current. `progress`: right after an agent run, to see what it finished; `remaining`
 * and `done` must be current, `ready` may be carried from the last `next` read, so a source whose reads
 * are costly (beads: one bd process each) can answer with fewer of them. Recovery reads this way too: what
 * a dead run's agent finished, once it is stopped (a `next` read might reuse the preflight's, from before).
 */
export type SnapshotPurpose = 'next' | 'progress';

/** The per-run context a source is built with. */
export interface SourceContext {
  root: string;
  branch?: string;
  config: Config;
  deps: Deps;
  warn: (message: string) => void;
  /**
   * --remote: this clone's host id (lib/landing/preflight.ts), unique per clone; several hosts work on the
   * feature, so what a source names as this run's (bd's claim actors) carries it. Undefined on one machine.
   */
  host?: string;
}

/** How a source works with several workers, each in its own git worktree (`--parallel N`). */
export interface WorkerSupport {
  /**
   * Files and folders (relative to the repository root) that hold the source's state. ralph writes them in
   * the main worktree only; what a worker's agent does to its copies never enters the code merge.
   */
  stateFiles(): string[];
  /** Tasks that may start now beside the running ones, best first; never one that is running. */
  startable(snapshot: Snapshot, running: readonly Task[]): Task[];
  /** Environment for an agent working in the worktree `dir` (e.g. where the shared task database is). */
  env(dir: string): Record<string, string>;
  /** The tasks as the worktree `dir` shows them: what the worker's agent did to its copy of the state. */
  snapshotAt(dir: string, purpose?: SnapshotPurpose): Promise<Snapshot>;
  /** Shows `taskIds` done in the main worktree's state files (the boxes a worker's agent ticked in its copy). */
  markDone(taskIds: readonly string[]): Promise<void>;
}

/** What a converge pass did, as the source judges it (lib/sources/speckit/converge.ts). */
export type ConvergeVerdict = { kind: 'appended'; tasks: string[] } | { kind: 'converged' } | { kind: 'silent'; reason: string } | { kind: 'broke'; reason: string };

/**
 * Converge passes: once every task is done, a fresh agent compares the spec with the code and appends the
 * unbuilt work as new open tasks, or answers that nothing is left. The source judges the pass from its files.
 */
export interface ConvergeSupport {
  /** Passes a run that was cut short (Ctrl+C, a crash) already made: a new run goes on counting from there. */
  resumed(): number;
  /** The prompt of pass `pass` for the agent `agent`, and what it is (the project's /speckit.converge or ralph's template). */
  prompt(pass: number, maxPasses: number, info: IterationInfo, agent: string): { text: string; via: string };
  /** What a pass is judged against, read just before it starts. */
  baseline(): string;
  /** The pass's verdict from the baseline, the other paths it changed (ralph's own files aside) and the final answer. */
  judge(baseline: string, otherChanges: readonly string[], answer: string): ConvergeVerdict;
  /** Records a pass: its progress.txt entry and the count of the cycle's passes. */
  record(pass: number, maxPasses: number, verdict: ConvergeVerdict, info: IterationInfo): void;
  /** The cycle ended (converged, or out of passes): the next run starts counting afresh. */
  close(converged: boolean): void;
}

/** A project's own hook, run as an agent pass of its own (Spec Kit's before_implement / after_implement). */
export interface HookPassInfo {
  /** `before`: before the first task; `after`: once every task is done. */
  when: 'before' | 'after';
  /** The event as the project names it: `after_implement`. */
  event: string;
  /** The command: `speckit.review.run`. */
  command: string;
  extension?: string;
  description?: string;
  /** How records and lines name it: `after_implement speckit.review.run (review)`. */
  name: string;
  /** Its title as a task: `review extension's hook: Review the implementation`. */
  title: string;
  /** What it is recorded as passed under. */
  key: string;
}

/** The project's hooks around the work; each passes once per cycle of work, however many runs it takes. */
export interface HookSupport {
  /**
   * The hooks still to pass, in the project's order. Asked for `before` while work is ahead, a cycle
   * whose `after` hooks all passed is over: a new one starts, and every hook is due again.
   */
  pending(when: 'before' | 'after'): HookPassInfo[];
  /** The prompt of a pass: the hook's command as `agent` invokes it, and where that came from. */
  prompt(hook: HookPassInfo, agent: string): string;
  /** Records a pass in the source's files: progress.txt, and a passed hook as passed for this cycle. */
  record(hook: HookPassInfo, ok: boolean, reason: string, info: IterationInfo): void;
  /** What the dry run says about them for `agent`: one line each for the hooks run, offered and left. */
  describe(agent: string): string[];
}

/** A task source: beads, Spec Kit tasks.md or prd.json behind one small interface. */
export interface TaskSource {
  readonly name: SourceName;
  readonly defaultMaxIterations: number;
  /** One line naming what this run works on, e.g. `epic ws-9w6 "Feature: ralph-automation"`. */
  describe(): string;
  /** The feature's name as a title (the pull request of --pr); undefined when the source has none. */
  title?(): string | undefined;
  /**
   * What this run works on as a short, stable name (the feature `001-saas`, the prd.json path, the epic id):
   * questions are kept per source and scope, so a T002 of another feature is another task.
   */
  scope(): string;
  /** Every prerequisite problem, as one line each (empty when ready to run). */
  check(): Promise<string[]>;
  /** After the lock is taken: put work left by an interrupted run back in play; returns warnings. */
  recover(): Promise<string[]>;
  /**
   * --dry-run: what recover() would say, and the tasks as it would leave them, with `redo` (the tasks recovery
   * gives to redo()) not done; nothing written. Absent: recover() changes nothing the dry run shows.
   */
  afterRecovery?(redo?: readonly string[]): Promise<{ messages: string[]; snapshot: Snapshot }>;
  /**
   * Recovery: a worker's task shows done in a store every worktree shares (beads: the agent closed its bead),
   * but the run died before its work reached the branch: mark it not done again, so it is done again.
   * Absent: the source's state lives in the worktree, so what was never merged never showed done.
   */
  redo?(task: Task): Promise<void>;
  /**
   * Whether the source holds its record of iteration `iteration` of `taskId` (settle() ran for it): recovery
   * never records one twice. Of that task only: with --remote another host's iteration may carry the number.
   */
  recorded?(iteration: number, taskId: string): Promise<boolean>;
  /**
   * The run is over, however it ends (before the lock goes): give back what this run still holds in a
   * shared task database (beads: its workers' claims); returns what to tell the user.
   */
  release?(): Promise<string[]>;
  /**
   * A forced exit (a second Ctrl+C), its agents killed: what release() gives back, given back at once,
   * synchronously, within `timeoutMs` in all; nothing said, nothing thrown (what is left, the next start takes back).
   */
  releaseNow?(timeoutMs: number): void;
  snapshot(purpose?: SnapshotPurpose): Promise<Snapshot>;
  /** The prompt for one iteration. */
  prompt(task: Task, info: IterationInfo): Promise<string>;
  /** Extra environment for the agent of an iteration (e.g. SPECIFY_FEATURE_DIRECTORY, a worker's bd actor). */
  agentEnv?(info?: IterationInfo): Record<string, string>;
  /** Called before the agent runs on `task`. */
  claim?(task: Task, info: IterationInfo): Promise<void>;
  /**
   * The iteration on `task` ended before its verdict, in a run that ends cleanly (a signal, `ralph stop
   * --now`, a usage limit past --max-wait, a failure, the output closed): record it as interrupted and put
   * the task back as it was before claim(), so the next start finds nothing in flight. Nothing when the
   * iteration was settled already. Returns one line for the user, or undefined when nothing was put back.
   */
  abandon?(task: Task, info: IterationInfo, why: string): Promise<string | undefined>;
  /** Records the iteration's result in the source's own files. */
  settle?(result: IterationResult, info: IterationInfo): Promise<void>;
  /** Agent defaults this source's project asks for (e.g. Spec Kit's configured integration); flags win. */
  agentDefaults?(): { agent?: string; profile?: string };
  /** The last iteration number an earlier run of this source recorded (0 when none), for `ralph resume`. */
  lastIteration?(): Promise<number>;
  /** The source's own verdict on an iteration (PRD: the agent's report plus the gates); else the loop's. */
  decideOutcome?(input: OutcomeInput): { kind: 'pass' | 'fail' | 'no_change'; reason: string } | undefined;
  /** Run ralph's quality gates (detected from package.json) without --gate; default off. */
  readonly gatesByDefault?: boolean;
  /** Commit each passing iteration without --commit; default off. */
  readonly commitByDefault?: boolean;
  /** Records the commit ralph made after `settle` for that iteration, on top of `parent`. */
  recordCommit?(iteration: number, commit: string, parent?: string): Promise<void>;
  /** Why nothing is ready although work remains (one line per task). */
  explainStuck(snapshot: Snapshot): string;
  /** Several workers in git worktrees on this source's tasks. */
  readonly workers: WorkerSupport;
  /**
   * --remote (several hosts on one feature): where the task state is shared. `files`: it lives in files
   * that travel with the commits, so ralph claims tasks with refs on the git remote (Spec Kit, PRD; the
   * default when absent). `database`: the source's own shared database holds state and claims (beads 1.x
   * in server mode), no ref needed. `{ problem }`: --remote cannot work with this source as it is set up;
   * one line saying what is needed.
   */
  remoteState?(): 'files' | 'database' | { problem: string };
  /** Converge passes once every task is done (`--converge`); sources without it do not converge. */
  readonly converge?: ConvergeSupport;
  /** The project's own hooks around the work (Spec Kit's extension hooks); sources without them have none. */
  readonly hooks?: HookSupport;
  /** How messages name a task and its finishing (`bead` … `closed`, `task` … `checked off`). */
  readonly words: TaskWords;
  /**
   * Repo-relative files or folders where task state is kept (the workers' state files, and for beads its
   * database and export): bookkeeping, not work, so a change there alone is no progress for the breaker.
   */
  bookkeepingFiles(): string[];
  /** The task as a reviewer must judge it, in Markdown: id, title, description, acceptance criteria. */
  brief(task: Task): Promise<string>;
  /**
   * The reviewer rejected the work on `task`: undo what marks it done (untick the box, reopen the bead,
   * `passes` back to false) and keep `reasons` so the next prompt for the task shows them. Runs before
   * `settle`, which then records the iteration as failed.
   */
  reopen(task: Task, reasons: string, info: IterationInfo): Promise<void>;
}
