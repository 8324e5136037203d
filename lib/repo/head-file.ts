// HEAD's commit read from the git dir's own files, without starting git: a run asks for HEAD several times an
// iteration, and each `git rev-parse HEAD` is a fork of ralph and a start of git (about 3 ms of CPU). Only
// the plain layout is read: `.git` a folder or a `gitdir:` file (a worktree), HEAD a commit or `ref: refs/heads/…`,
// that ref a loose file or a line of packed-refs. Anything else (an unborn branch, reftable, a symbolic ref
// to another, a file being odd) answers undefined, and the caller asks git.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The git dir of the work tree whose top is `top`: its `.git` folder, or the one its `.git` file names. */
function gitDirOf(top: string): string | undefined {
  const dotGit = path.join(top, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
  } catch {
    return undefined;
  }
  const named = /^gitdir: (.+)$/m.exec(read(dotGit) ?? '')?.[1]?.trim();
  return named ? path.resolve(top, named) : undefined;
}

/** HEAD's commit for the work tree whose top folder is `top`, from the files; undefined when git must say. */
export function headFromFiles(top: string): string | undefined {
  const gitDir = gitDirOf(top);
  if (!gitDir) return undefined;
  const head = read(path.join(gitDir, 'HEAD'))?.trim();
  if (!head) return undefined;
  if (COMMIT.test(head)) return head;
  const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
  if (!ref) return undefined;
  // A worktree's refs/heads are the main git dir's (its `commondir` file says where that is).
  const common = read(path.join(gitDir, 'commondir'))?.trim();
  const commonDir = common ? path.resolve(gitDir, common) : gitDir;
  const loose = read(path.join(commonDir, ref))?.trim();
  if (loose !== undefined) return COMMIT.test(loose) ? loose : undefined;
  for (const line of (read(path.join(commonDir, 'packed-refs')) ?? '').split('\n')) {
    const [commit, name] = line.split(' ');
    if (name === ref && commit && COMMIT.test(commit)) return commit;
  }
  return undefined;
}
