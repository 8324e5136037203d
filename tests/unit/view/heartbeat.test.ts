import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Output } from '../../../lib/deps.ts';
import { createView } from '../../../lib/view/live.ts';
import { LineView } from '../../../lib/view/plain.ts';

const T0 = Date.parse('2026-11-26T02:00:00Z');

function pipe(): Output & { lines: () => string[] } {
  const writes: string[] = [];
  return { isTTY: false, columns: undefined, write: (text: string) => (writes.push(text), true), lines: () => writes.join('').split('\n').filter(Boolean) } as Output & { lines: () => string[] };
}

afterEach(() => vi.useRealTimers());

describe('the plain view\'s heartbeat', () => {
  it('says a silent iteration is still at work, with its task, time so far and last output, once per period', () => {
    vi.useFakeTimers({ now: T0 });
    const out = pipe();
    const view = new LineView({ out, color: false, quiet: true, verbose: false, now: () => Date.now(), heartbeatMs: 5 * 60_000 });
    view.emit({ type: 'iteration_start', iteration: 3, maxIterations: 10, task: { id: 'T003', title: 'Build it', status: 'open' } } as never, T0);
    vi.advanceTimersByTime(60_000);
    view.emit({ type: 'agent', iteration: 3, event: { kind: 'tool_call', name: 'Bash', summary: 'npm test' } }, Date.now());
    vi.advanceTimersByTime(3 * 60_000 + 50_000);
    expect(out.lines()).toEqual([]);
    vi.advanceTimersByTime(20_000);
    expect(out.lines()).toHaveLength(1);
    expect(out.lines()[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d still working: iteration 3 T003 for 5m \d\ds; last output 4m \d\ds ago: ↳ Bash: npm test$/);
    // Not again until another period without a line.
    vi.advanceTimersByTime(4 * 60_000);
    expect(out.lines()).toHaveLength(1);
    vi.advanceTimersByTime(2 * 60_000);
    expect(out.lines()).toHaveLength(2);
    // Once the iteration ends, nothing more.
    view.emit({ type: 'iteration_end', record: { iteration: 3, taskId: 'T003', outcome: 'pass', tasksDone: ['T003'], durationMs: 1, reason: '' } } as never, Date.now());
    vi.advanceTimersByTime(20 * 60_000);
    expect(out.lines().filter((line) => line.includes('still working'))).toHaveLength(2);
    view.close();
  });

  it('shows the start of the last text with words, however long the text, and not a blank one after it', () => {
    vi.useFakeTimers({ now: T0 });
    const out = pipe();
    const view = new LineView({ out, color: false, quiet: true, verbose: false, now: () => Date.now(), heartbeatMs: 60_000 });
    view.emit({ type: 'iteration_start', iteration: 1, maxIterations: 10, task: { id: 'T001', title: 'x', status: 'open' } } as never, T0);
    const text = `Reading   the\n\nfiles ${'and more words '.repeat(70_000)}`;
    view.emit({ type: 'agent', iteration: 1, event: { kind: 'text', text } }, Date.now());
    view.emit({ type: 'agent', iteration: 1, event: { kind: 'text', text: ' \n\t ' } }, Date.now());
    vi.advanceTimersByTime(80_000);
    const said = out.lines().find((line) => line.includes('still working'))!;
    const shown = said.slice(said.indexOf('ago: ') + 'ago: '.length);
    expect(shown.startsWith('│ Reading the files and more words and more words')).toBe(true);
    expect(shown.length).toBeLessThanOrEqual(121);
    view.close();
  });

  it('stays quiet while lines are printed, and is off at 0 and in the TTY view', () => {
    vi.useFakeTimers({ now: T0 });
    const out = pipe();
    const view = new LineView({ out, color: false, quiet: false, verbose: false, now: () => Date.now(), heartbeatMs: 60_000 });
    view.emit({ type: 'iteration_start', iteration: 1, maxIterations: 10, task: { id: 'T001', title: 'x', status: 'open' } } as never, T0);
    for (let minute = 1; minute <= 5; minute += 1) {
      vi.advanceTimersByTime(50_000);
      view.emit({ type: 'agent', iteration: 1, event: { kind: 'text', text: `step ${minute}` } }, Date.now());
    }
    expect(out.lines().some((line) => line.includes('still working'))).toBe(false);
    view.setHeartbeat(0);
    vi.advanceTimersByTime(10 * 60_000);
    expect(out.lines().some((line) => line.includes('still working'))).toBe(false);
    view.close();
    const tty = createView({ out: { isTTY: true, columns: 80, write: () => true }, env: { TERM: 'xterm' }, quiet: false, verbose: false, now: Date.now });
    expect(tty).not.toBeInstanceOf(LineView);
    expect(createView({ out: pipe(), env: {}, quiet: false, verbose: false, now: Date.now })).toBeInstanceOf(LineView);
  });
});
