// What a process killed in the middle of a write leaves: git's own lock files (index.lock, HEAD.lock,
// packed-refs.lock, a ref's lock) that git refuses to work past, and ralph's atomic-write temp files beside the state
// files. Both are removed only when no living process has them: git's lock when no process holds it open
// (Linux: /proc/<pid>/fd), a temp file when the PID in its name is gone.
import { existsSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Git } from '../repo/git.ts';

/** `.prd.json.4242.3.tmp` (lib/fs-atomic.ts): the PID that was writing it. */
export function tempWriter(file: string): number | undefined {
  const match = /^\..+\.(\d+)\.\d+\.tmp$/.exec(path.basename(file));
  return match ? Number(match[1]) : undefined;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes the atomic-write temp files among `changed` whose writer is gone; returns the ones removed. */
export function removeDeadTemps(root: string, changed: readonly string[]): string[] {
  const removed: string[] = [];
  for (const file of changed) {
    const pid = tempWriter(file);
    if (pid === undefined || pid === process.pid || alive(pid)) continue;
    rmSync(path.join(root, file), { force: true });
    removed.push(file);
  }
  return removed;
}

/** Every file some process holds open (Linux); undefined where /proc cannot tell. */
function openFiles(): Set<string> | undefined {
  if (!existsSync('/proc/self/fd')) return undefined;
  const open = new Set<string>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      try {
        open.add(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        // closed meanwhile
      }
    }
  }
  return open;
}

/**
 * git's lock files under the common git dir: its own files (index, HEAD, packed-refs, config…), every ref
 * (branches, remote-tracking refs, ralph's claim refs), and the same files of its worktrees.
 */
function gitLocks(gitDir: string): string[] {
  const found: string[] = [];
  const look = (dir: string, depth: number): void => {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      if (name.endsWith('.lock')) found.push(full);
      else if (depth > 0 && statSync(full, { throwIfNoEntry: false })?.isDirectory()) look(full, depth - 1);
    }
  };
  look(gitDir, 0);
  look(path.join(gitDir, 'refs'), 8);
  const worktrees = path.join(gitDir, 'worktrees');
  for (const name of existsSync(worktrees) ? readdirSync(worktrees) : []) look(path.join(worktrees, name), 0);
  return found;
}

/**
 * Removes git's lock files that no process holds open (what a git killed mid-commit leaves, and git then
 * refuses every command over); call with ralph's lock held. Nothing where /proc cannot tell.
 */
export async function removeDeadGitLocks(git: Git): Promise<string[]> {
  const gitDir = await git.commonDir();
  if (!gitDir) return [];
  const locks = gitLocks(gitDir);
  if (locks.length === 0) return [];
  const open = openFiles();
  if (!open) return [];
  const removed: string[] = [];
  for (const lock of locks) {
    if (open.has(lock)) continue;
    rmSync(lock, { force: true });
    removed.push(path.relative(git.cwd, lock));
  }
  return removed;
}

/** The socket folders (lib/process/output.ts: `ralph-out-<pid>-…`) of runs killed in the moment they live. */
export function removeDeadSocketDirs(tmp = os.tmpdir()): number {
  let names: string[] = [];
  try {
    names = readdirSync(tmp);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const pid = Number(/^ralph-out-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    rmSync(path.join(tmp, name), { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}
