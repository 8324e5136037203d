// What the crash tests start and check: ralph through `node bin/ralph.mjs`, the commits that carry a task
// (the Ralph-Task trailer) with the files each holds, prd.json's stories as they stand.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT, type RalphResult, type Sandbox } from './helpers.ts';

export const BIN = path.join(PROJECT, 'bin', 'ralph.mjs');

/** Starts `node bin/ralph.mjs` in the sandbox's repository (in its own process group when `group`). */
export function startNode(box: Sandbox, args: string[], extraEnv: NodeJS.ProcessEnv = {}, group = false): { child: ChildProcess; done: Promise<RalphResult>; output: () => { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: box.repo, env: { ...box.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<RalphResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, output: () => ({ stdout, stderr }) };
}

export const gitText = (box: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: box.repo, encoding: 'utf8' });

/** Every commit naming a task in its Ralph-Task trailer, oldest first, with the files it changed. */
export function taskCommits(box: Sandbox, ref = 'HEAD'): Array<{ sha: string; task: string; iteration: number; files: string[] }> {
  const shas = gitText(box, ['rev-list', '--reverse', ref]).split('\n').filter(Boolean);
  const found: Array<{ sha: string; task: string; iteration: number; files: string[] }> = [];
  for (const sha of shas) {
    const body = gitText(box, ['log', '-1', '--format=%B', sha]);
    const task = /^Ralph-Task: (.+)$/m.exec(body)?.[1]?.trim();
    if (!task) continue;
    const files = gitText(box, ['diff-tree', '--no-commit-id', '--name-only', '-r', '--root', sha]).split('\n').filter(Boolean);
    found.push({ sha, task, iteration: Number(/^Ralph-Iteration: (\d+)$/m.exec(body)?.[1]), files });
  }
  return found;
}

/** prd.json's stories (snarktank shape) as they stand in the work tree, or at `ref`. */
export function prdState(box: Sandbox, ref?: string): Array<{ id: string; passes: boolean; status?: string }> {
  const text = ref ? gitText(box, ['show', `${ref}:prd.json`]) : readFileSync(path.join(box.repo, 'prd.json'), 'utf8');
  return (JSON.parse(text) as { userStories: Array<{ id: string; passes: boolean; status?: string }> }).userStories;
}
