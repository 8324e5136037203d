// A file-system failure (disk full, read-only, permission denied, a file where a folder should be) said as
// one line naming the path, instead of a stack trace: every write of ralph's ends through this door.
import { RalphError } from '../errors.ts';

const WHY: Record<string, { why: string; hint: string }> = {
  ENOSPC: { why: 'the disk is full', hint: "free some space and start ralph again (it resumes); --log-max-bytes caps what one iteration's logs keep" },
  EDQUOT: { why: 'the disk quota is used up', hint: 'free some space or raise the quota, then start ralph again (it resumes)' },
  EROFS: { why: 'the file system is read-only', hint: 'run ralph in a repository it can write to' },
  EACCES: { why: 'permission denied', hint: 'check who owns the path and its mode; ralph writes its state under .ralph/ in the repository' },
  EPERM: { why: 'operation not permitted', hint: 'check who owns the path and its mode' },
  ENOTDIR: { why: 'a file stands where a folder should be', hint: 'move the file away (ralph keeps its state in the folder .ralph/)' },
  EEXIST: { why: 'a file stands where a folder should be', hint: 'move the file away (ralph keeps its state in the folder .ralph/)' },
  EISDIR: { why: 'a folder stands where a file should be', hint: 'move the folder away' },
  EMFILE: { why: 'too many open files', hint: 'raise the limit (ulimit -n) and start ralph again' },
  EIO: { why: 'an input/output error', hint: 'check the disk' },
};

const VERBS: Record<string, string> = {
  open: 'open',
  write: 'write',
  mkdir: 'create the folder',
  rename: 'replace',
  unlink: 'remove',
  rmdir: 'remove',
  copyfile: 'copy to',
  chmod: 'change the mode of',
  fsync: 'write',
  close: 'write',
  scandir: 'read',
  read: 'read',
};

/** The error's errno code when it is a file-system error ralph knows how to say; undefined otherwise. */
export function fileSystemCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code in WHY ? code : undefined;
}

/** One line for a file-system error: `the disk is full: cannot write /repo/.ralph/status.json (ENOSPC)`. */
export function describeFileSystemError(error: NodeJS.ErrnoException, target?: string): string {
  const code = error.code ?? 'EIO';
  const where = target ?? error.path ?? (error as { dest?: string }).dest;
  const verb = VERBS[error.syscall ?? ''] ?? 'write';
  return `${WHY[code]?.why ?? code}: cannot ${verb} ${where ?? '(unknown path)'} (${code})`;
}

/** The RalphError a file-system error stands for, or undefined for any other error. */
export function fileSystemError(error: unknown, target?: string): RalphError | undefined {
  const code = fileSystemCode(error);
  if (!code) return undefined;
  return new RalphError(describeFileSystemError(error as NodeJS.ErrnoException, target), { hint: WHY[code]!.hint, cause: error });
}
