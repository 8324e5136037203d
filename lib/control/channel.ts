// The control channel: `ralph stop` and `ralph pause` write one small file each under .ralph/control/,
// addressed to one run (its PID and the start time in its lock) and signed with the writer's uid. The
// running loop reads them; a request addressed to a run that is gone, or written by another user, is
// never obeyed. One file per kind, replaced atomically: two stop requests are one.
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../repo/fs-atomic.ts';

export const CONTROL_DIR = path.join('.ralph', 'control');
export type RequestKind = 'stop' | 'pause';
export const REQUEST_KINDS: readonly RequestKind[] = ['stop', 'pause'];

/** The run a request is meant for: what its lock says (a reused PID has another start time). */
export interface RunTarget {
  pid: number;
  startedAt: string;
}

export interface ControlRequest {
  version: 1;
  kind: RequestKind;
  target: RunTarget;
  /** uid of the user who asked (also checked against the file's owner). */
  uid: number;
  /** Who asked, for the run's log: `ralph stop (PID 123)`, `ralph serve (PID 456)`. */
  by: string;
  requestedAt: string;
}

/** A request file as found on disk, with its owner. */
export interface FoundRequest {
  kind: RequestKind;
  file: string;
  /** Undefined when the file is not a request (garbage, another version). */
  request?: ControlRequest;
  fileUid: number;
}

export type Verdict = 'valid' | 'stale' | 'foreign' | 'corrupt';

export function controlDir(root: string): string {
  return path.join(root, CONTROL_DIR);
}

export function requestPath(root: string, kind: RequestKind): string {
  return path.join(controlDir(root), kind);
}

/** The current user's uid (-1 where there are no uids). */
export function currentUid(): number {
  return process.getuid?.() ?? -1;
}

/** Creates .ralph/control/ readable and writable by its owner only. */
export function ensureControlDir(root: string): void {
  mkdirSync(controlDir(root), { recursive: true, mode: 0o700 });
}

export function writeRequest(root: string, request: ControlRequest): void {
  ensureControlDir(root);
  writeFileAtomic(requestPath(root, request.kind), `${JSON.stringify(request)}\n`);
}

export function clearRequest(root: string, kind: RequestKind): void {
  rmSync(requestPath(root, kind), { force: true });
}

function isRequest(data: unknown, kind: RequestKind): data is ControlRequest {
  if (typeof data !== 'object' || data === null) return false;
  const r = data as Partial<ControlRequest>;
  return (
    r.version === 1 &&
    r.kind === kind &&
    typeof r.uid === 'number' &&
    typeof r.by === 'string' &&
    typeof r.requestedAt === 'string' &&
    typeof r.target?.pid === 'number' &&
    typeof r.target.startedAt === 'string'
  );
}

/** Reads one request file; undefined when there is none. One stat and one small read: cheap enough to poll. */
export function readRequest(root: string, kind: RequestKind): FoundRequest | undefined {
  const file = requestPath(root, kind);
  let text: string;
  let fileUid: number;
  try {
    // No exception for the usual case, no file: this runs before every iteration and twice a second.
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) return undefined;
    fileUid = stat.uid;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  return { kind, file, fileUid, request: isRequest(data, kind) ? data : undefined };
}

/**
 * Whether a found request is to be obeyed by the run `target` owned by `ownerUid`: valid, stale (meant
 * for another run, one that is gone), foreign (written by another user) or corrupt.
 */
export function judgeRequest(found: FoundRequest, target: RunTarget, ownerUid: number): Verdict {
  const request = found.request;
  if (!request) return 'corrupt';
  if (found.fileUid !== ownerUid || request.uid !== ownerUid) return 'foreign';
  if (request.target.pid !== target.pid || request.target.startedAt !== target.startedAt) return 'stale';
  return 'valid';
}

/** `stop request by ralph stop (PID 12) at 2026-…` for log lines. */
export function describeRequest(request: ControlRequest): string {
  return `${request.kind} request by ${request.by} at ${request.requestedAt}`;
}
