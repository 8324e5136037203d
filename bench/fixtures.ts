// Generated task sources and logs for the benchmarks: a Spec Kit feature, a prd.json and a progress.txt
// of any size, shaped like the real templates.

/** A Spec Kit tasks.md with `count` open tasks in phases of `perPhase`, with the usual markers. */
export function tasksMd(count: number, perPhase = 20): string {
  const width = Math.max(3, String(count).length);
  const id = (n: number): string => `T${String(n).padStart(width, '0')}`;
  const lines = ['# Tasks: Benchmark feature', '', '**Input**: Design documents from `/specs/001-bench/`', '', '## Format: `[ID] [P?] [Story] Description`', '', '- **[P]**: Can run in parallel', ''];
  for (let n = 1; n <= count; n += 1) {
    const phase = Math.floor((n - 1) / perPhase) + 1;
    if ((n - 1) % perPhase === 0) {
      const story = phase > 2 ? phase - 2 : undefined;
      lines.push('', story ? `## Phase ${phase}: User Story ${story} - Capability ${story} (Priority: P${1 + (story % 3)})` : `## Phase ${phase}: ${phase === 1 ? 'Setup' : 'Foundational'}`, '');
      lines.push(`**Goal**: deliver phase ${phase}`, '', `### Implementation for phase ${phase}`, '');
    }
    const story = phase > 2 ? ` [US${phase - 2}]` : '';
    const parallel = n % 3 === 0 ? ' [P]' : '';
    const depends = n % 7 === 0 && (n - 1) % perPhase !== 0 ? ` (depends on ${id(n - 1)})` : '';
    lines.push(`- [ ] ${id(n)}${parallel}${story} Implement part ${n} of the feature in src/module${phase}/part${n}.ts${depends}`);
  }
  lines.push('', '## Dependencies & Execution Order', '', '- Phases run in order; [P] tasks may run in parallel.', '');
  return lines.join('\n');
}

/** The spec.md and plan.md a Spec Kit feature needs besides tasks.md. */
export const SPEC_MD = '# Feature Specification: Benchmark feature\n\nA feature made of many small tasks.\n';
export const PLAN_MD = '# Implementation Plan: Benchmark feature\n\nTypeScript, one module per part.\n';

/** A snarktank prd.json with `count` stories, none passing, priorities in file order. */
export function prdJson(count: number): string {
  const userStories = Array.from({ length: count }, (_, index) => ({
    id: `US-${String(index + 1).padStart(4, '0')}`,
    title: `Story ${index + 1}: implement capability ${index + 1}`,
    description: `As a user, I want capability ${index + 1} so that the product does more.`,
    acceptanceCriteria: [`Capability ${index + 1} works end to end`, 'Typecheck passes', 'Tests pass'],
    priority: index + 1,
    passes: false,
    notes: '',
  }));
  return `${JSON.stringify({ project: 'Bench', branchName: 'ralph/bench', description: 'Benchmark PRD', userStories }, null, 2)}\n`;
}

/** The PRD answer the agent gives: a completed Ralph Report as the final result. */
export function prdReportAnswer(): string {
  const text = 'Done.\n\n## Ralph Report\nStatus: completed\nSummary: created the work file\nChanges:\n- work file: created\nQuality:\n- tests: pass\nLearnings:\n- none\nCommits:\n- none\n';
  return `${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: text, num_turns: 1, total_cost_usd: 0 })}\n`;
}

/** Entry styles of the two progress logs ralph writes. */
export type ProgressStyle = 'prd' | 'speckit';

function progressEntry(style: ProgressStyle, iteration: number): string {
  const id = `US-${String(iteration).padStart(4, '0')}`;
  const learning = 'The build needs `npm run build` before the integration tests; the test script does not do it.';
  if (style === 'speckit') {
    return [`## Iteration ${iteration} - 2025-01-01 00:00:00`, `- Task: T${String(iteration).padStart(5, '0')} Implement part ${iteration}`, '- Status: ✅ Completed', `- Tasks completed: T${String(iteration).padStart(5, '0')}`, '- Files changed:', `  - src/module${iteration}.ts`, '- Duration: 3m 10s', '- Learnings:', `  ${learning}`, '', '---', '', ''].join('\n');
  }
  return ['', `## 2025-01-01 00:00 - ${id} - iteration ${iteration}: completed`, `Task: ${id} Story ${iteration}`, 'Reason: completed the story', 'Changes:', `- src/module${iteration}.ts: added the capability`, 'Learnings:', `- ${learning}`, '---', ''].join('\n');
}

/** A progress.txt of at least `bytes` in `style`: header, a Codebase Patterns section of `patternsBytes`, many entries. */
export function progressTxt(bytes: number, style: ProgressStyle, patternsBytes = 2048): string {
  const head = ['# Ralph Progress Log', 'Started: 2025-01-01 00:00', '', '## Codebase Patterns'];
  const pattern = '- Use the repository helpers in src/lib for database access; never open a connection by hand.';
  for (let size = 0; size < patternsBytes; size += pattern.length + 1) head.push(pattern);
  head.push('', '---', '', '');
  const parts = [head.join('\n')];
  let size = parts[0]!.length;
  for (let iteration = 1; size < bytes; iteration += 1) {
    const entry = progressEntry(style, iteration);
    parts.push(entry);
    size += entry.length;
  }
  return parts.join('');
}
