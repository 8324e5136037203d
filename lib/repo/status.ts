// What `git status --porcelain=v2` says of a work tree: the HEAD commit and every changed path.
import { execFileSync } from 'node:child_process';

export interface WorkTreeState {
  head?: string;
  /** Paths with staged, unstaged or untracked changes. */
  changed: string[];
}

/** Parses `git status --porcelain=v2 --branch -z`: the HEAD oid and every changed path. */
export function parseStatusV2(output: string): WorkTreeState {
  const fields = output.split('\0');
  const state: WorkTreeState = { changed: [] };
  for (let index = 0; index < fields.length; index += 1) {
    const entry = fields[index]!;
    if (entry.startsWith('# branch.oid ')) {
      const oid = entry.slice('# branch.oid '.length);
      if (oid !== '(initial)') state.head = oid;
    } else if (entry.startsWith('1 ')) {
      state.changed.push(entry.split(' ').slice(8).join(' '));
    } else if (entry.startsWith('2 ')) {
      // A rename or copy: the new path here, the old one in the next field (a rename's old path is gone).
      state.changed.push(entry.split(' ').slice(9).join(' '));
      index += 1;
      if (entry[2] === 'R' || entry[3] === 'R') state.changed.push(fields[index]!);
    } else if (entry.startsWith('u ')) {
      state.changed.push(entry.split(' ').slice(10).join(' '));
    } else if (entry.startsWith('? ')) {
      state.changed.push(entry.slice(2));
    }
  }
  return state;
}

/** The uncommitted paths of the work tree at `cwd`, from a synchronous `git status` (a forced exit has no event loop left). */
export function changedNow(cwd: string): string[] {
  return parseStatusV2(execFileSync('git', ['status', '--porcelain=v2', '-z', '--untracked-files=all'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 })).changed;
}
