// The bubblewrap command line for one sandbox, from a plan of paths: pure, so every rule is table-tested.
import path from 'node:path';
import type { Command } from '../process/runner.ts';

/** What one path is on the host (undefined: it does not exist). */
export type PathKind = 'dir' | 'file' | 'other';

/** Everything the sandbox binds, each list in the order its mounts must happen. */
export interface BwrapPlan {
  network: boolean;
  /** Read-only again after the private /tmp hid them (HOME and PATH folders that live under /tmp). */
  /** Folders below the sandbox's own /tmp or /dev (HOME, PATH folders, the agent's package): bound back read-only. */
  underTmp: string[];
  /** Writable: the repository, the agent's state, configured folders. */
  writable: string[];
  /** Read-only inside a writable folder (ralph's own .ralph/). */
  readOnly: string[];
  /** Writable inside a read-only one (a worker's worktree under .ralph/). */
  writableAfter: string[];
  /** Hidden last, so nothing above can bring them back: folders become empty and read-only, files unreadable. */
  hidden: Array<{ path: string; kind: PathKind }>;
}

/**
 * bwrap arguments for `plan`, working in `cwd`. The whole tree is read-only; /dev, /proc and /tmp are
 * the sandbox's own. The agent runs in a new PID namespace (whatever it leaves behind dies with it) and,
 * even as root, without capabilities (root with capabilities could unmount what hides a secret).
 * No --die-with-parent: bwrap dies at the first SIGTERM of the group kill, and that option would SIGKILL
 * the agent with it, leaving it no grace period to end cleanly and finish its log.
 */
export function bwrapArgs(plan: BwrapPlan, cwd: string): string[] {
  const args = ['--unshare-pid', '--cap-drop', 'ALL'];
  if (!plan.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  for (const dir of plan.underTmp) args.push('--ro-bind', dir, dir);
  for (const dir of plan.writable) args.push('--bind', dir, dir);
  for (const dir of plan.readOnly) args.push('--ro-bind', dir, dir);
  for (const dir of plan.writableAfter) args.push('--bind', dir, dir);
  for (const { path: target, kind } of plan.hidden) {
    if (kind === 'dir') args.push('--tmpfs', target, '--remount-ro', target);
    else args.push('--ro-bind', '/dev/null', target);
  }
  args.push('--chdir', cwd);
  return args;
}

/** `command` run inside the sandbox: bwrap's arguments, `--`, then the command itself. */
export function wrapCommand(plan: BwrapPlan, cwd: string, command: Command, bwrap = 'bwrap'): Command {
  return {
    bin: bwrap,
    args: [...bwrapArgs(plan, cwd), '--', command.bin, ...command.args],
    stdin: command.stdin,
    // /tmp is private and empty: a TMPDIR from outside would name a folder that is not there. IS_SANDBOX
    // is how Claude Code learns it may skip permissions as root. The ssh agent's socket is hidden.
    env: { ...command.env, TMPDIR: '/tmp', IS_SANDBOX: '1', SSH_AUTH_SOCK: undefined },
  };
}

/** Whether `inner` is `outer` or below it. */
export function isWithin(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
