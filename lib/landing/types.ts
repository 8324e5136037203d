// Where tasks are claimed and landed: one interface, two places. `local.ts`: this process alone decides
// (what --parallel does on one machine); `remote.ts`: every ralph run on the feature branch of a git remote
// decides through it (claims as refs the server creates atomically, landing as a push the server accepts or
// refuses). The loop and the workers are the same either way: N workers on one host or on M hosts.
import type { MergeLock } from './replay.ts';

/** A task another run (or this one) holds on the remote: who, since when, renewed when. */
export interface Claim {
  task: string;
  /** The host's name (`--host-name`, else the machine's) and the clone's folder there. */
  host: string;
  clone: string;
  /** The session id of the run that holds it, and its process. */
  run: string;
  pid: number;
  /** When the run first claimed it, and last renewed it (epoch ms, the holder's clock). */
  since: number;
  renewedAt: number;
  /** The holder's --lease: how long its claim lives unrenewed (absent in a claim that does not say). */
  leaseMs?: number;
  /** The claim's ref on the remote and the commit it points at (what a takeover must find there). */
  ref: string;
  sha: string;
}

/** What publishing the main worktree's HEAD did. */
export type Published =
  | { kind: 'landed' }
  /** Another host landed first: fetch, replay and publish again. */
  | { kind: 'moved' }
  /** The task's claim is not this run's any more (its lease ran out and another host took it over). */
  | { kind: 'lost'; why: string; task?: string };

/** The shared place this run works with. */
export interface RemoteTarget {
  /** The git remote's name (`origin`) and the feature branch on it. */
  name: string;
  branch: string;
  /** This host's name and its id (unique per clone; in bd's claim actors). */
  host: string;
  hostId: string;
  /** `refs`: tasks are claimed with refs on the remote; `database`: the source's shared database claims them (beads). */
  claims: 'refs' | 'database';
}

export interface Dock {
  /** Set when several hosts share the feature through a git remote. */
  readonly remote?: RemoteTarget;
  /** Landings one at a time in this process; also knows the head the last landing left. */
  readonly lock: MergeLock;
  /**
   * Brings the main worktree to the shared head (remote: fetched first) and returns it; call under the lock.
   * `freshMs`: a look at the remote (a fetch, a landing) that recent is taken as current, with no fetch.
   */
  target(freshMs?: number): Promise<string | undefined>;
  /** Makes the main worktree's HEAD the shared head, releasing the tasks' claims in the same step (one push for a batch). */
  publish(taskIds: string | readonly string[]): Promise<Published>;
  /** The main worktree back at `target` after a publish that did not go through. */
  rewind(target: string): Promise<void>;
  /**
   * Claims a task before a worker starts it, against the claims the last target() fetched (the server
   * decides: a claim made since makes this one fail); throws ClaimLostError when another run holds it.
   * `seenAt` is the shared head the caller's snapshot was read at: when the head moved since, the main
   * worktree goes there and `isOpen()` must still say yes, since a task landed just before the claim (its
   * claim released in the same push) is done, not to redo.
   */
  claim(taskId: string, seenAt: string | undefined, isOpen: () => Promise<boolean>): Promise<void>;
  /** Why this run's claim of `taskId` is not its own any more (a renewal found it taken over); else undefined. */
  lost(taskId: string): string | undefined;
  /** Lets go of a claim (a failed, abandoned or interrupted task); nothing when none is held. */
  release(taskId: string): Promise<void>;
  /** Makes a kept branch (work not landed) visible to every host; where it is, when it went anywhere. */
  share(branch: string): Promise<string | undefined>;
  /**
   * Live claims of other runs, by task id, as the last target() fetched them with the branch (expired ones
   * are not listed: they may be taken over).
   */
  elsewhere(): Promise<Map<string, Claim>>;
  /** End of the run: claims released, the clone at the shared head; one message per thing worth saying. */
  close(): Promise<string[]>;
}
