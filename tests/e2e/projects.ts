// Committed Spec Kit and PRD projects for end-to-end and fault tests, and the agent answers they expect.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Sandbox } from './helpers.ts';

export const FEATURE = 'specs/001-demo';
export const TASKS_PATH = `${FEATURE}/tasks.md`;

/** Commits the set-up with the test identity, even in a sandbox that has none for ralph. */
export function commitAll(box: Sandbox, message: string): void {
  const env = { ...box.env, GIT_AUTHOR_NAME: 'Ralph Test', GIT_AUTHOR_EMAIL: 'ralph@example.test', GIT_COMMITTER_NAME: 'Ralph Test', GIT_COMMITTER_EMAIL: 'ralph@example.test' };
  execFileSync('git', ['add', '-A'], { cwd: box.repo, env });
  execFileSync('git', ['commit', '-qm', message], { cwd: box.repo, env });
}

/** A committed Spec Kit project: specs/001-demo with spec, plan and `tasks` (branch 001-… picks it). */
export function specKitProject(box: Sandbox, tasks: string): void {
  const dir = path.join(box.repo, FEATURE);
  mkdirSync(dir, { recursive: true });
  mkdirSync(path.join(box.repo, '.specify', 'memory'), { recursive: true });
  writeFileSync(path.join(box.repo, '.specify', 'memory', 'constitution.md'), '# Constitution\n');
  writeFileSync(path.join(box.repo, '.specify', 'init-options.json'), '{"integration":"claude"}\n');
  writeFileSync(path.join(dir, 'spec.md'), '# Spec: demo\n');
  writeFileSync(path.join(dir, 'plan.md'), '# Plan: demo\n');
  writeFileSync(path.join(dir, 'tasks.md'), tasks);
  commitAll(box, 'spec kit feature');
}

/** A claude stream-json result line carrying `text` as the final answer. */
export const answer = (text: string): string => JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: text, num_turns: 1, total_cost_usd: 0.001 });
/** An edit that ticks a Spec Kit task the way an agent does. */
export const tick = (id: string) => ({ file: TASKS_PATH, from: `- [ ] ${id}`, to: `- [X] ${id}` });

/** The `## Ralph Report` block the PRD prompt asks for. */
export const reportText = (status = 'completed', learning = 'none'): string =>
  `Done.\n\n## Ralph Report\nStatus: ${status}\nSummary: worked on the story\nChanges:\n- app.txt: changed\nQuality:\n- tests: pass\nLearnings:\n- ${learning}\nCommits:\n- none\n`;

/** A PRD agent's final answer with the `## Ralph Report` block. */
export const report = (status = 'completed', learning = 'none'): string => answer(reportText(status, learning));

export const SNARK = {
  project: 'Demo',
  branchName: 'ralph/demo',
  description: 'demo',
  userStories: [
    { id: 'US-001', title: 'First story', description: 'd', acceptanceCriteria: ['works'], priority: 1, passes: false, notes: '' },
    { id: 'US-002', title: 'Second story', description: 'd', acceptanceCriteria: ['works'], priority: 2, passes: false, notes: '' },
  ],
};

/** A committed prd.json project with one gate (by default one that always passes). */
export function prdProject(box: Sandbox, prd: unknown = SNARK, gate = 'true'): void {
  writeFileSync(path.join(box.repo, 'prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
  writeFileSync(path.join(box.repo, 'ralph.config.json'), JSON.stringify({ gate: [gate] }));
  commitAll(box, 'prd');
}

/** A snarktank prd.json on branch ralph/demo with `count` open stories US-001…, by priority. */
export const prdStories = (count: number) => ({
  project: 'Demo',
  branchName: 'ralph/demo',
  description: 'demo',
  userStories: Array.from({ length: count }, (_, index) => ({
    id: `US-${String(index + 1).padStart(3, '0')}`,
    title: `Story ${index + 1}`,
    description: 'd',
    acceptanceCriteria: ['works'],
    priority: index + 1,
    passes: false,
    notes: '',
  })),
});

/** PRD history records (.rulebook-ralph/history/iteration-N.json), by iteration number. */
export function prdHistory(box: Sandbox): Array<Record<string, unknown>> {
  const dir = path.join(box.repo, '.rulebook-ralph', 'history');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Record<string, unknown>)
    .sort((a, b) => Number(a.iterationNumber) - Number(b.iterationNumber));
}
