// ralph's own files kept out of git's sight in the user's repository: .git/info/exclude, never .gitignore.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Git } from './git.ts';

/** Adds patterns to .git/info/exclude (shared by every worktree) that are not there yet. */
export async function excludeFromGit(git: Git, ...patterns: string[]): Promise<void> {
  const file = await git.gitPath('info/exclude');
  if (!file) return;
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // no exclude file yet
  }
  const wanted = patterns.filter((line) => !text.split('\n').includes(line));
  if (wanted.length > 0) {
    mkdirSync(path.dirname(file), { recursive: true });
    appendFileSync(file, `${text && !text.endsWith('\n') ? '\n' : ''}# ralph's run state\n${wanted.join('\n')}\n`);
  }
}

/** Keeps ralph's own files out of `git status` and an agent's `git add -A`, without touching .gitignore. */
export async function excludeRalphFiles(git: Git): Promise<void> {
  await excludeFromGit(git, '/.ralph.lock', '/.ralph.lock.d/', '/.ralph/');
}
