import { describe, expect, it } from 'vitest';
import type { Output } from '../../../lib/deps.ts';
import { LineView } from '../../../lib/view/plain.ts';
import { LiveView } from '../../../lib/view/live.ts';
import { record, sessionStart, T0, task } from '../progress/fixtures.ts';

function capture(): Output & { lines(): string[] } {
  let text = '';
  return {
    isTTY: false,
    write: (chunk: string) => ((text += chunk), true),
    lines: () => text.replace(/\u001b\[[0-9;]*m/g, '').split(/[\n\r]/).filter(Boolean).map((line) => line.replace(/^\S+ \S+ /, '')),
  } as unknown as Output & { lines(): string[] };
}

describe('the iteration lines of the plain view', () => {
  it('counts this run\'s iterations against this run\'s limit, the session\'s number beside', () => {
    const out = capture();
    const view = new LineView({ out, color: false, quiet: false, verbose: false });
    view.emit({ ...sessionStart, maxIterations: 2 }, T0);
    view.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 2, task }, T0);
    view.emit({ type: 'iteration_start', iteration: 3, ofRun: 1, maxIterations: 2, task }, T0);
    view.emit({ type: 'iteration_start', iteration: 9, ofRun: 2, maxIterations: 10, task }, T0);
    expect(out.lines().slice(-3)).toEqual([`iteration 1/2: ${task.id} ${task.title}`, `iteration 3 (1/2 in this run): ${task.id} ${task.title}`, `iteration 9 (2/10 in this run): ${task.id} ${task.title}`]);
  });

  it('says when ralph committed what the agent left uncommitted', () => {
    const out = capture();
    const view = new LineView({ out, color: false, quiet: false, verbose: false });
    view.emit(sessionStart, T0);
    const base = record({ durationMs: 1000 });
    view.emit({ type: 'iteration_end', record: { ...base, outcome: 'pass', tasksDone: ['T001'], commit: 'abcdef1234567890', committedForAgent: ['src/a.ts', 'src/b.ts'] } }, T0);
    view.emit({ type: 'iteration_end', record: { ...base, iteration: 2, outcome: 'pass', tasksDone: ['T001'], commit: '1234567abcdef', committedForAgent: [] } }, T0);
    view.emit({ type: 'iteration_end', record: { ...base, iteration: 3, outcome: 'pass', tasksDone: ['T001'], commit: '1234567abcdef' } }, T0);
    expect(out.lines().slice(-3)).toEqual([
      `iteration 1 ${base.taskId}: pass in 1.0s, done: T001; committed by ralph as abcdef1: the agent left src/a.ts, src/b.ts uncommitted`,
      `iteration 2 ${base.taskId}: pass in 1.0s, done: T001; committed by ralph as 1234567: the agent left its task state uncommitted`,
      `iteration 3 ${base.taskId}: pass in 1.0s, done: T001`,
    ]);
  });
});

describe('the status line of the live view', () => {
  it('shows this run\'s count against this run\'s limit', () => {
    let text = '';
    const out = { isTTY: true, columns: 200, write: (chunk: string) => ((text += chunk), true) } as unknown as Output;
    const view = new LiveView({ out, color: false, quiet: true, verbose: false, now: () => T0 + 5000, intervalMs: 1000 });
    view.emit({ ...sessionStart, maxIterations: 2 }, T0);
    view.emit({ type: 'iteration_start', iteration: 3, ofRun: 1, maxIterations: 2, task }, T0);
    expect(text).toContain('iteration 3 (1/2 in this run) · ');
    expect(text).not.toContain('iteration 3/');
    view.close();
  });
});
