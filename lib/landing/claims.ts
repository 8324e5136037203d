// Claims on the remote: a task is held by a ref `refs/ralph/<branch>/claims/<task>` pointing at a small
// commit (an empty tree) whose subject says who holds it and when they last renewed it. The server decides
// every race: a claim is created by a push that must find no such ref (`--force-with-lease=REF:`), renewed
// and taken over by pushes that must find the very commit last seen there (compare-and-swap), and released
// by a delete under the same condition, or together with the landing push (--atomic, see remote.ts).
import { spawnSync } from 'node:child_process';
import { quietEnv, type Git } from '../repo/git.ts';
import { ClaimTakenError, RalphError } from '../errors.ts';
import { RELEASE_NOW_MS } from '../process/cleanup.ts';
import { parsePushOutcome } from './push-outcome.ts';
import type { RemoteGit } from './remote-git.ts';
import type { Claim } from './types.ts';

const SUBJECT = 'ralph-claim ';

/** Who this run is, as its claims say. */
export interface Holder {
  host: string;
  clone: string;
  run: string;
  pid: number;
}

interface Held {
  sha: string;
  since: number;
  timer?: NodeJS.Timeout;
  /** Set when a renewal found the claim taken over: the landing will be refused. */
  lost?: string;
  /** Not renewed while this run cannot publish the task's work (its landing waits for the remote). */
  paused?: boolean;
}

/** A ref name's part for any text: letters, digits, `_` and `-` as they are, every other byte as %XX. */
export function refPart(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9_-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** Where the claims of `branch` live on the remote: `refs/ralph/<branch>/claims/`. */
export function claimsPrefix(branch: string): string {
  return `refs/ralph/${refPart(branch)}/claims/`;
}

/** A claim not renewed within the lease: another host may take it over. */
export function isExpired(claim: Pick<Claim, 'renewedAt' | 'leaseMs'>, leaseMs: number, now: number): boolean {
  // The holder's own lease, when its claim says it: hosts run with different --lease values.
  return claim.renewedAt + (claim.leaseMs ?? leaseMs) < now;
}

/**
 * The claims mirrored under `seenPrefix` in this clone (by a fetch of `prefix` on the remote), each named by
 * its ref on the remote; a ref whose commit ralph did not write is not a claim.
 */
export async function readClaimRefs(main: Git, seenPrefix: string, prefix: string): Promise<Claim[]> {
  const out = await main.raw(['for-each-ref', '--format=%(refname)%09%(objectname)%09%(contents:subject)', seenPrefix]);
  const claims: Claim[] = [];
  for (const line of out.split('\n')) {
    const [ref, sha, subject] = line.split('\t');
    if (!ref || !sha || !subject?.startsWith(SUBJECT)) continue;
    try {
      const data = JSON.parse(subject.slice(SUBJECT.length)) as Omit<Claim, 'ref' | 'sha'>;
      claims.push({ ...data, ref: `${prefix}${ref.slice(seenPrefix.length)}`, sha });
    } catch {
      // a claim ref ralph did not write: not a claim
    }
  }
  return claims;
}

export interface ClaimOptions {
  main: Git;
  git: RemoteGit;
  remote: string;
  branch: string;
  me: Holder;
  leaseMs: number;
  now: () => number;
  warn: (message: string) => void;
  /** The environment git runs with (a forced exit's push runs it directly). */
  env?: NodeJS.ProcessEnv;
}


export class RemoteClaims {
  readonly prefix: string;
  readonly seenPrefix: string;
  private readonly held = new Map<string, Held>();
  private tree: string | undefined;
  /** Claim pushes one at a time: a renewal must not move a claim under the landing push that releases it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ClaimOptions) {
    this.prefix = claimsPrefix(o.branch);
    this.seenPrefix = `refs/ralph-seen/${refPart(o.remote)}/${refPart(o.branch)}/claims/`;
  }

  /** The fetch refspec that mirrors the remote's claims into this clone (pruned with the fetch). */
  get fetchSpec(): string {
    return `+${this.prefix}*:${this.seenPrefix}*`;
  }

  serial<T>(job: () => Promise<T>): Promise<T> {
    const next = this.queue.then(job, job);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The claims as the last fetch saw them. */
  read(): Promise<Claim[]> {
    return readClaimRefs(this.o.main, this.seenPrefix, this.prefix);
  }

  isMine(claim: Claim): boolean {
    return claim.run === this.o.me.run;
  }

  expired(claim: Claim): boolean {
    return isExpired(claim, this.o.leaseMs, this.o.now());
  }

  holds(taskId: string): boolean {
    return this.held.has(taskId);
  }

  /**
   * Claims `taskId`, given the claim the last fetch saw (if any): a live claim of another run is refused;
   * an expired one is taken over only if it is still the very commit seen. Throws ClaimTakenError when the
   * server gave it to someone else; a remote that does not answer is returned for the caller to wait on.
   */
  claim(taskId: string, seen: Claim | undefined): Promise<string | undefined> {
    // A task this run holds no claim of: its ref is none a landing or a renewal pushes, so it waits for none.
    const inTurn = <T>(job: () => Promise<T>): Promise<T> => (this.held.has(taskId) ? this.serial(job) : job());
    return inTurn(async () => {
      if (seen && !this.isMine(seen) && !this.expired(seen)) throw new ClaimTakenError(`${taskId} is held by ${describeHolder(seen)} since ${clock(seen.since)}`);
      const since = this.o.now();
      const sha = await this.commit(taskId, since);
      const ref = `${this.prefix}${refPart(taskId)}`;
      const pushed = parsePushOutcome(await this.o.git(['push', '--porcelain', '--no-verify', this.o.remote, `--force-with-lease=${ref}:${seen?.sha ?? ''}`, `${sha}:${ref}`]), { claim: ref });
      if (pushed.kind === 'unreachable') return pushed.why;
      if (pushed.kind === 'lost') throw new ClaimTakenError(`another host claimed ${taskId} first`);
      if (pushed.kind !== 'landed') throw new RalphError(`could not claim ${taskId} on ${this.o.remote}: ${pushed.why}`);
      if (seen && !this.isMine(seen)) this.o.warn(`took over ${taskId} from ${describeHolder(seen)}: its claim was not renewed for ${Math.round((this.o.now() - seen.renewedAt) / 1000)} s (lease ${Math.round((seen.leaseMs ?? this.o.leaseMs) / 1000)} s)`);
      this.hold(taskId, sha, since);
      return undefined;
    });
  }

  /** The push arguments that release `taskId`'s claim as part of another push (the landing), when it is held. */
  releaseArgs(taskId: string): string[] {
    const held = this.held.get(taskId);
    if (!held) return [];
    const ref = `${this.prefix}${refPart(taskId)}`;
    return [`--force-with-lease=${ref}:${held.sha}`, `:${ref}`];
  }

  refOf(taskId: string): string {
    return `${this.prefix}${refPart(taskId)}`;
  }

  /** Stops renewing `taskId`'s claim until resume(): its work cannot be published now. */
  pause(taskId: string): void {
    const held = this.held.get(taskId);
    if (held) held.paused = true;
  }

  resume(taskId: string): void {
    const held = this.held.get(taskId);
    if (held) held.paused = false;
  }

  lostReason(taskId: string): string | undefined {
    return this.held.get(taskId)?.lost;
  }

  /** The claim is gone from the remote (released with a landing): stop renewing it. */
  forget(taskId: string): void {
    const held = this.held.get(taskId);
    if (held?.timer) clearInterval(held.timer);
    this.held.delete(taskId);
  }

  /** Deletes the claim on the remote if it is still this run's; a remote that does not answer leaves it to expire. */
  release(taskId: string): Promise<void> {
    return this.serial(async () => {
      const args = this.releaseArgs(taskId);
      this.forget(taskId);
      if (args.length === 0) return;
      const pushed = parsePushOutcome(await this.o.git(['push', '--porcelain', '--no-verify', this.o.remote, ...args], 15_000), { claim: this.refOf(taskId) });
      if (pushed.kind === 'unreachable') this.o.warn(`could not release the claim of ${taskId} (${pushed.why}): it expires ${Math.round(this.o.leaseMs / 1000)} s after its last renewal`);
      else await this.unsee(taskId);
    });
  }

  /**
   * The claim is gone from the remote (released, alone or with its landing): stop renewing it, and drop this
   * clone's copy, so a claim made before the next fetch does not expect it there.
   */
  async released(taskId: string): Promise<void> {
    this.forget(taskId);
    await this.unsee(taskId);
  }

  private async unsee(taskId: string): Promise<void> {
    await this.o.main.attempt(['update-ref', '-d', `${this.seenPrefix}${refPart(taskId)}`]);
  }

  /**
   * Deletes the claims of `tasks` (every task when absent) that an earlier run of this clone left (killed
   * before it released them): this run holds the clone's lock, so no other run of it lives. Returns the
   * tasks whose claim went.
   */
  dropLeftBehind(tasks?: readonly string[]): Promise<string[]> {
    return this.serial(async () => {
      const dropped: string[] = [];
      for (const claim of await this.read()) {
        if ((tasks && !tasks.includes(claim.task)) || this.isMine(claim) || claim.clone !== this.o.me.clone || claim.host !== this.o.me.host) continue;
        const pushed = parsePushOutcome(await this.o.git(['push', '--porcelain', '--no-verify', this.o.remote, `--force-with-lease=${claim.ref}:${claim.sha}`, `:${claim.ref}`], 15_000), { claim: claim.ref });
        if (pushed.kind !== 'landed') continue; // taken over meanwhile, or out of reach: it expires
        await this.unsee(claim.task);
        dropped.push(claim.task);
      }
      return dropped;
    });
  }

  /**
   * A forced exit (a second Ctrl+C): every claim this run holds deleted in one synchronous push, each only
   * while it is still this run's, given up after `timeoutMs`. A remote that does not answer in time leaves
   * them to this clone's next start (or the lease); nothing is said, nothing thrown.
   */
  releaseNow(timeoutMs = RELEASE_NOW_MS): void {
    const args = [...this.held.keys()].flatMap((taskId) => this.releaseArgs(taskId));
    for (const held of this.held.values()) if (held.timer) clearInterval(held.timer);
    this.held.clear();
    if (args.length === 0) return;
    try {
      spawnSync('git', ['push', '--porcelain', '--no-verify', this.o.remote, ...args], { cwd: this.o.main.cwd, env: quietEnv(this.o.env ?? process.env), timeout: timeoutMs, killSignal: 'SIGKILL', stdio: 'ignore' });
    } catch {
      // the exit goes on: the claims expire, or this clone's next start takes them back
    }
  }

  async releaseAll(): Promise<void> {
    for (const taskId of [...this.held.keys()]) await this.release(taskId);
  }

  private hold(taskId: string, sha: string, since: number): void {
    this.forget(taskId);
    const held: Held = { sha, since };
    held.timer = setInterval(() => void this.renew(taskId).catch(() => undefined), Math.max(250, Math.floor(this.o.leaseMs / 3)));
    held.timer.unref();
    this.held.set(taskId, held);
  }

  private renew(taskId: string): Promise<void> {
    return this.serial(async () => {
      const held = this.held.get(taskId);
      if (!held || held.lost || held.paused) return;
      const ref = this.refOf(taskId);
      const sha = await this.commit(taskId, held.since);
      const pushed = parsePushOutcome(await this.o.git(['push', '--porcelain', '--no-verify', this.o.remote, `--force-with-lease=${ref}:${held.sha}`, `${sha}:${ref}`], Math.max(5_000, Math.floor(this.o.leaseMs / 3))), { claim: ref });
      if (pushed.kind === 'unreachable') return; // tried again at the next tick; past the lease another host may take it over
      if (pushed.kind === 'landed') {
        held.sha = sha;
        return;
      }
      held.lost = `the claim of ${taskId} was taken over by another host (it was not renewed within the lease of ${Math.round(this.o.leaseMs / 1000)} s)`;
      this.o.warn(held.lost);
    });
  }

  /** A claim commit: an empty tree, and who holds the task since when, renewed now. */
  private async commit(taskId: string, since: number): Promise<string> {
    this.tree ??= (await this.o.main.raw(['hash-object', '-w', '-t', 'tree', '/dev/null'])).trim();
    const data = { task: taskId, ...this.o.me, since, renewedAt: this.o.now(), leaseMs: this.o.leaseMs };
    return (await this.o.main.raw(['commit-tree', this.tree, '-m', `${SUBJECT}${JSON.stringify(data)}`])).trim();
  }
}

export function describeHolder(claim: Claim): string {
  return `${claim.host} (${claim.clone}, run ${claim.run}, pid ${claim.pid})`;
}

function clock(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}
