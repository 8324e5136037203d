// A conflict the agent may resolve: the worker's work merged onto the new head with git's conflict markers
// left in the files, for one short agent run to settle, instead of redoing the whole task from scratch. The
// state files are never the agent's to merge: they stay as the branch has them (ralph records the task).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Git } from '../repo/git.ts';
import { matchesAny } from '../repo/paths.ts';

/** At most this much of the task's diff and of the conflicting hunks goes into the prompt. */
export const PROMPT_DIFF_BYTES = 16 * 1024;

export interface Markers {
  /** The files git could not merge, with markers in them. */
  files: string[];
  /** The task's own changes (`base..work`), bounded. */
  diff: string;
  /** The conflicting hunks as git shows them (markers included), bounded. */
  hunks: string;
}

/** What one resolve run cost and whether the agent ended well. */
export interface Resolution {
  ok: boolean;
  /** Why it did not end well (the agent's failure), when it did not. */
  reason?: string;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
}

/** Runs the agent on the markers in `cwd` (lib/session/resolver.ts). */
export type Resolver = (input: { task: { id: string; title: string; status: string }; iteration: number; cwd: string; env: Record<string, string | undefined>; markers: Markers }) => Promise<Resolution>;

/** What came of trying to resolve: the resolved commit on the target, or why not (the worktree back at the work). */
export type Resolved = { head: string; files: string[]; resolution: Resolution } | { why: string; resolution?: Resolution };

/** What a landing says of the conflict the agent was asked to resolve (nothing when it was not asked). */
export function resolveSummary(tried: Resolved | undefined): { resolve?: { ok: boolean; files?: string[]; why?: string; costUsd: number; inputTokens: number; outputTokens: number; durationMs: number } } {
  if (!tried?.resolution) return {};
  const { costUsd, inputTokens, outputTokens, durationMs } = tried.resolution;
  return { resolve: { ok: 'head' in tried, ...('head' in tried ? { files: tried.files } : { why: tried.why }), costUsd, inputTokens, outputTokens, durationMs } };
}

/** `text` cut to `limit` characters, saying how much was left out. */
export function bounded(text: string, limit = PROMPT_DIFF_BYTES): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}\n… (${text.length - limit} more characters not shown)\n`;
}

/**
 * The worktree at `target` with `work` (a descendant of `base`) merged in, uncommitted, markers left where
 * git could not merge; undefined when nothing conflicts after all or nothing of the work's is left.
 */
export async function mergeWithMarkers(tree: Git, base: string, work: string, target: string, stateFiles: readonly string[]): Promise<Markers | undefined> {
  await tree.raw(['reset', '--hard', target]);
  await tree.attempt(['merge', '--squash', '--no-commit', work]);
  // The state files as the branch has them, whatever either side did to them.
  const state = (await tree.raw(['diff', '--name-only', 'HEAD'])).split('\n').filter((file) => file && matchesAny(file, stateFiles));
  for (const file of state) {
    const atTarget = await tree.attempt(['checkout', 'HEAD', '--', file]);
    if (!atTarget.ok) await tree.attempt(['rm', '-q', '-f', '--', file]);
  }
  const files = (await tree.raw(['diff', '--name-only', '--diff-filter=U'])).split('\n').filter(Boolean);
  if (files.length === 0) {
    await tree.raw(['reset', '--hard', work]);
    return undefined;
  }
  const stateSpecs = stateFiles.map((file) => `:(exclude)${file.replace(/\/$/, '')}`);
  const diff = await tree.raw(['diff', `${base}..${work}`, '--', '.', ...stateSpecs]);
  const hunks = await tree.raw(['diff', '--', ...files]);
  return { files, diff: bounded(diff), hunks: bounded(hunks) };
}

/** Conflict markers left in `files` (a marker line opens, splits or closes a conflict), by file. */
export function markersLeft(cwd: string, files: readonly string[]): string[] {
  return files.filter((file) => {
    let text: string;
    try {
      text = readFileSync(path.join(cwd, file), 'utf8');
    } catch {
      return false; // deleted: the agent's way of resolving it
    }
    return /^(<{7}|>{7})( |$)/m.test(text) || /^<{7} [\s\S]*^={7}$/m.test(text);
  });
}

/**
 * Commits what the agent made of the merge (its changes outside the state files) as one commit on the
 * target, and returns it; undefined when nothing is left to commit.
 */
export async function commitResolution(tree: Git, message: string, stateFiles: readonly string[]): Promise<string | undefined> {
  await tree.raw(['add', '-A']);
  if (stateFiles.length > 0) await tree.attempt(['reset', '-q', 'HEAD', '--', ...stateFiles]);
  if (!(await tree.hasStaged())) return undefined;
  await tree.raw(['commit', '--no-verify', '-q', '-m', message]);
  // What was left out of the commit (the state files' changes) goes.
  await tree.raw(['reset', '--hard', 'HEAD']);
  return tree.head();
}

/**
 * Merges `work` onto `target` with markers, lets `resolve` settle them, and commits the result as one commit
 * on `target` (`message`). When the agent fails, leaves a marker or changes nothing, the worktree goes back
 * to `work` and the reason is returned.
 */
export async function resolveOnto(tree: Git, cwd: string, base: string, work: string, target: string, stateFiles: readonly string[], resolve: (markers: Markers) => Promise<Resolution>, message: string): Promise<Resolved> {
  const markers = await mergeWithMarkers(tree, base, work, target, stateFiles);
  if (!markers) return { why: 'git found nothing to resolve' };
  let resolution: Resolution | undefined;
  const back = async (why: string): Promise<Resolved> => {
    // A squash merge leaves no MERGE_HEAD to abort: a hard reset undoes it (the worktree is reset before its next task).
    await tree.raw(['reset', '--hard', work]);
    return resolution ? { why, resolution } : { why };
  };
  try {
    resolution = await resolve(markers);
  } catch (error) {
    await back('the resolve run failed');
    throw error;
  }
  if (!resolution.ok) return back(`the agent could not resolve it (${resolution.reason ?? 'it failed'})`);
  const left = markersLeft(cwd, markers.files);
  if (left.length > 0) return back(`the agent left conflict markers in ${left.join(', ')}`);
  const head = await commitResolution(tree, message, stateFiles);
  if (!head) return back('the agent\'s resolution leaves nothing of the task\'s work');
  return { head, files: markers.files, resolution };
}
