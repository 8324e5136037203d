// The iteration's changes as the reviewer sees them: a stat of every file, then the diff itself (tracked
// changes since the iteration began, and new files), cut at a byte budget so a huge change cannot flood
// the review prompt or ralph's memory.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import path from 'node:path';

export const REVIEW_DIFF_BYTES = 60 * 1024;
/** git's empty tree: the base when the repository had no commit yet. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const OWN = [':(exclude).ralph', ':(exclude).ralph.lock', ':(exclude).ralph.lock.d'];

export interface ReviewDiff {
  /** `git diff --stat` plus the new files' names: every changed file, even past the budget. */
  stat: string;
  /** The diff text, at most the budget. */
  diff: string;
  truncated: boolean;
}

/** Runs git and keeps at most `maxBytes` of its stdout, stopping it once that much arrived. */
function gitOutput(cwd: string, args: readonly string[], maxBytes: number): Promise<{ text: string; cut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('git', [...args], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let cut = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size > maxBytes) {
        cut = true;
        child.kill('SIGTERM');
      }
    });
    const done = (): void => resolve({ text: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, ''), cut });
    child.on('close', done);
    child.on('error', done);
  });
}

/** A new file as a diff hunk; binary files by size only. */
function newFileDiff(cwd: string, file: string, maxBytes: number): string {
  let buffer: Buffer;
  try {
    const fd = openSync(path.join(cwd, file), 'r');
    try {
      buffer = Buffer.alloc(Math.max(0, maxBytes));
      buffer = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
  if (buffer.subarray(0, 8000).includes(0)) return `new file ${file} (binary)\n`;
  const lines = buffer.toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return [`diff --git a/${file} b/${file}`, 'new file (untracked)', '--- /dev/null', `+++ b/${file}`, ...lines.map((line) => `+${line}`), ''].join('\n');
}

/** The changes since `base` (a commit; undefined before the first one), within `maxBytes`. */
export async function reviewDiff(cwd: string, base: string | undefined, maxBytes = REVIEW_DIFF_BYTES): Promise<ReviewDiff> {
  const from = base ?? EMPTY_TREE;
  const stat = await gitOutput(cwd, ['diff', '--no-color', '--stat=160', from, '--', '.', ...OWN], 16 * 1024);
  const listed = await gitOutput(cwd, ['ls-files', '-z', '--others', '--exclude-standard', '--', '.', ...OWN], 64 * 1024);
  const names = listed.text.split('\0');
  // A list cut short ends in a partial name.
  const untracked = (listed.cut ? names.slice(0, -1) : names).filter(Boolean);
  const tracked = await gitOutput(cwd, ['diff', '--no-color', '--no-ext-diff', from, '--', '.', ...OWN], maxBytes);
  let diff = tracked.text;
  let truncated = tracked.cut;
  for (const file of untracked) {
    const room = maxBytes - Buffer.byteLength(diff);
    if (room <= 0) {
      truncated = true;
      break;
    }
    const hunk = newFileDiff(cwd, file, room + 1);
    if (Buffer.byteLength(hunk) > room) {
      diff += Buffer.from(hunk).subarray(0, room).toString('utf8').replace(/\uFFFD$/, '');
      truncated = true;
      break;
    }
    diff += hunk;
  }
  const statText = [stat.text.trimEnd(), ...untracked.map((file) => ` ${file} (new, untracked)`)].filter(Boolean).join('\n');
  return { stat: statText || '(no changes)', diff, truncated };
}
