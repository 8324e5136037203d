import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Output } from '../../../lib/deps.ts';
import { CLEAR_LINE, createView, formatStatusLine, LiveView } from '../../../lib/view/live.ts';
import { LineView } from '../../../lib/view/plain.ts';
import { RunTracker } from '../../../lib/progress/state.ts';
import { record, script, sessionStart, T0, task } from '../progress/fixtures.ts';

/** A fake terminal: every write is kept, `screen()` replays \r and erase-line into what stays visible. */
function terminal(columns = 120): Output & { writes: string[]; text(): string; screen(): string[] } {
  const writes: string[] = [];
  return {
    isTTY: true,
    columns,
    writes,
    write(text: string) {
      writes.push(text);
      return true;
    },
    text: () => writes.join(''),
    screen() {
      // Rows and a cursor row: \r and erase-line blank the cursor's row, ESC[1A moves it up a row.
      const lines: string[] = [''];
      let row = 0;
      const all = writes.join('').replace(/\u001b\[[0-9;]*m/g, '');
      for (let i = 0; i < all.length; i += 1) {
        if (all.startsWith('\u001b[2K', i)) {
          lines[row] = '';
          i += 3;
        } else if (all.startsWith('\u001b[1A', i)) {
          row = Math.max(0, row - 1);
          i += 3;
        } else if (all[i] === '\r') lines[row] = '';
        else if (all[i] === '\n') {
          row += 1;
          if (row === lines.length) lines.push('');
        } else lines[row] = `${lines[row] ?? ''}${all[i] ?? ''}`;
      }
      // Rows below the cursor that were erased are gone from the screen.
      while (lines.length - 1 > row && lines.at(-1) === '') lines.pop();
      return lines;
    },
  };
}

const SGR = /\u001b\[[0-9;]*m/;

afterEach(() => vi.useRealTimers());

describe('LiveView', () => {
  const make = (out: Output, color = false, now = () => T0 + 5000) => new LiveView({ out, color, quiet: false, verbose: false, now, intervalMs: 1000 });

  it('keeps one status line at the bottom under the streamed lines', () => {
    const out = terminal();
    const view = make(out);
    view.emit(sessionStart, T0);
    view.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0 + 1000);
    view.emit({ type: 'agent', iteration: 1, event: { kind: 'tool_call', name: 'Bash', summary: 'npm test' } }, T0 + 2000);
    const screen = out.screen();
    expect(screen.at(-1)).toMatch(/^⠋ iteration 1\/50 · running · 5s · ws-9w6\.2 Task 1: build part 1$/);
    // Above it, exactly what LineView prints, each line once.
    expect(screen.slice(0, -1).filter((line) => line.includes('↳ Bash: npm test'))).toHaveLength(1);
    expect(screen.filter((line) => line.includes('iteration 1/50 ·'))).toHaveLength(1);
    expect(screen.some((line) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d iteration 1\/50: ws-9w6\.2 Task 1: build part 1$/.test(line))).toBe(true);
    // Every line printed while the status line shows first erases it.
    expect(out.writes.filter((text) => text.includes('↳ Bash'))[0]!.startsWith(CLEAR_LINE)).toBe(true);
    view.close();
  });

  it('shows one line per worker under the status line and erases the whole block before printing', () => {
    const out = terminal();
    const view = make(out, false, () => T0 + 9000);
    view.emit(sessionStart, T0);
    view.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task, worker: 1 }, T0 + 1000);
    view.emit({ type: 'iteration_start', iteration: 2, ofRun: 2, maxIterations: 50, task: { ...task, id: 'ws-9w6.3', title: 'Task 2' }, worker: 2 }, T0 + 3000);
    view.emit({ type: 'agent', iteration: 2, event: { kind: 'tool_call', name: 'Bash', summary: 'npm test' } }, T0 + 4000);
    let screen = out.screen();
    expect(screen.slice(-2)).toEqual(['  w1 · iteration 1 · 8s · ws-9w6.2 Task 1: build part 1', '  w2 · iteration 2 · 6s · ws-9w6.3 Task 2']);
    expect(screen.filter((line) => line.includes('[w2] ↳ Bash: npm test'))).toHaveLength(1);
    view.emit({ type: 'iteration_end', record: { ...record(), worker: 1 } }, T0 + 5000);
    screen = out.screen();
    // The finished worker's line is gone, nothing of the old block is left above the new one.
    expect(screen.at(-1)).toBe('  w2 · iteration 2 · 6s · ws-9w6.3 Task 2');
    expect(screen.filter((line) => line.startsWith('  w1 ·'))).toEqual([]);
    expect(screen.filter((line) => /^⠋ iteration/.test(line))).toHaveLength(1);
    expect(screen.some((line) => /iteration 1 \[w1\] ws-9w6\.2: pass/.test(line))).toBe(true);
    view.close();
    expect(out.screen().filter((line) => line.startsWith('  w'))).toEqual([]);
  });

  it('prints the same lines as LineView', () => {
    const live = terminal();
    const plain = terminal();
    const view = make(live);
    const lines = new LineView({ out: plain, color: false, quiet: false, verbose: false });
    for (const [offset, event] of script) {
      view.emit(event, T0 + offset);
      lines.emit(event, T0 + offset);
    }
    view.close();
    expect(live.screen().filter(Boolean)).toEqual(plain.text().split('\n').filter(Boolean));
  });

  it('shows a backoff and a usage-limit wait with their end and a countdown, redrawn by the timer', () => {
    vi.useFakeTimers();
    let now = T0 + 2100;
    const out = terminal();
    const view = make(out, false, () => now);
    view.emit(sessionStart, T0);
    view.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0 + 1000);
    view.emit({ type: 'backoff', iteration: 1, attempt: 1, delayMs: 4000, until: T0 + 6100, reason: 'transient failure' }, T0 + 2100);
    expect(out.screen().at(-1)).toMatch(/iteration 1\/50 · backing off until \d\d:\d\d:\d\d \(4s\) · 2s · ws-9w6\.2/);
    now = T0 + 4100;
    vi.advanceTimersByTime(1000);
    expect(out.screen().at(-1)).toMatch(/backing off until \d\d:\d\d:\d\d \(2s\)/);
    expect(out.screen().at(-1)).toMatch(/^⠙ /);

    view.emit({ type: 'usage_wait', iteration: 1, until: T0 + 4100 + 2 * 3_600_000 + 5 * 60_000, reason: 'usage limit' }, now);
    expect(out.screen().at(-1)).toMatch(/waiting for usage reset until .+ \(2h 05m\)/);
    now += 3_600_000;
    vi.advanceTimersByTime(1000);
    expect(out.screen().at(-1)).toMatch(/waiting for usage reset until .+ \(1h 05m\)/);
    view.close();
  });

  it('shows the cost so far', () => {
    const out = terminal();
    const view = make(out);
    view.emit(sessionStart, T0);
    view.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0);
    view.emit({ type: 'agent', iteration: 1, event: { kind: 'result', text: 'done', isError: false, costUsd: 0.1234 } }, T0);
    expect(out.screen().at(-1)).toContain('$0.1234');
    view.close();
  });

  it('without colour writes no SGR codes, yet keeps the status line with \\r', () => {
    const out = terminal();
    const view = createView({ out, env: { NO_COLOR: '1', TERM: 'xterm' }, quiet: false, verbose: false, now: () => T0 + 5000 });
    expect(view).toBeInstanceOf(LiveView);
    for (const [offset, event] of script.slice(0, 6)) view.emit(event, T0 + offset);
    expect(out.text()).not.toMatch(SGR);
    expect(out.text()).toContain('\r');
    expect(out.screen().at(-1)).toMatch(/backing off until/);
    void view.close?.();
  });

  it('colours on a TTY without NO_COLOR', () => {
    const out = terminal();
    const view = createView({ out, env: { TERM: 'xterm' }, quiet: false, verbose: false, now: () => T0 });
    view.emit(sessionStart, T0);
    expect(out.text()).toMatch(SGR);
    void view.close?.();
  });

  it('removes the status line at the end, leaving only the summary', () => {
    const out = terminal();
    const view = make(out);
    for (const [offset, event] of script) view.emit(event, T0 + offset);
    expect(out.screen().at(-1)).toBe('');
    expect(out.screen().at(-2)).toMatch(/completed: all tasks of epic ws-9w6 are complete/);
    view.close();
  });

  it('never lets the status line wrap', () => {
    const out = terminal(40);
    const view = make(out);
    view.emit(sessionStart, T0);
    view.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task: { ...task, title: 'a very long title '.repeat(10) } }, T0);
    const last = out.screen().at(-1)!;
    expect([...last].length).toBeLessThanOrEqual(39);
    expect(last.endsWith('…')).toBe(true);
    view.close();
  });

  it('quiet mode still updates the status line', () => {
    const out = terminal();
    const view = new LiveView({ out, color: false, quiet: true, verbose: false, now: () => T0 + 3000 });
    view.emit(sessionStart, T0);
    view.emit({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0);
    expect(out.screen().filter(Boolean)).toEqual([expect.stringMatching(/^⠋ iteration 1\/50 · running/)]);
    view.close();
  });
});

describe('createView', () => {
  it('falls back to LineView off a TTY and with TERM=dumb', () => {
    const pipe: Output = { write: () => true, isTTY: false };
    expect(createView({ out: pipe, env: {}, quiet: false, verbose: false, now: Date.now })).toBeInstanceOf(LineView);
    const dumb = terminal();
    expect(createView({ out: dumb, env: { TERM: 'dumb' }, quiet: false, verbose: false, now: Date.now })).toBeInstanceOf(LineView);
  });
});

describe('formatStatusLine', () => {
  it('names the session before the first iteration', () => {
    const tracker = new RunTracker('box');
    tracker.apply(sessionStart, T0);
    expect(formatStatusLine(tracker.status!, T0 + 65_000, 0, { color: false, width: 200 })).toBe('⠋ ralph 20261122-020000 · starting · 1m 05s');
  });
});

describe('a review on the status line and in the plain lines', () => {
  const review = { agent: 'codex', verdict: 'reject' as const, reasons: 'no test for greet()', taskIds: ['ws-9w6.2'], attempts: 1, exhausted: false, durationMs: 12_000, costUsd: 0.02, inputTokens: 100, outputTokens: 20 };

  it('says who reviews while it runs, then counts the verdicts', () => {
    const tracker = new RunTracker('box');
    tracker.apply(sessionStart, T0);
    tracker.apply({ type: 'iteration_start', iteration: 1, ofRun: 1, maxIterations: 50, task }, T0 + 1000);
    tracker.apply({ type: 'review_start', iteration: 1, agent: 'codex', taskIds: ['ws-9w6.2'] }, T0 + 2000);
    expect(formatStatusLine(tracker.status!, T0 + 5000, 0, { color: false, width: 200 })).toBe('⠋ iteration 1/50 · reviewing with codex · 5s · ws-9w6.2 Task 1: build part 1');
    tracker.apply({ type: 'review_end', iteration: 1, review }, T0 + 3000);
    expect(tracker.status).toMatchObject({ state: 'running', reviewer: null, lastReview: 'rejected by codex: no test for greet()', counts: { reviewsApproved: 0, reviewsRejected: 1 } });
    expect(formatStatusLine(tracker.status!, T0 + 5000, 0, { color: false, width: 200 })).toContain('reviews 0 approved, 1 not');
  });

  it('prints the start and the verdict of a review', () => {
    const out = terminal();
    const view = new LineView({ out, color: false, quiet: false, verbose: false });
    view.emit({ type: 'review_start', iteration: 3, agent: 'codex', taskIds: ['T001', 'T002'] }, T0);
    view.emit({ type: 'review_end', iteration: 3, review }, T0 + 12_000);
    expect(out.text()).toMatch(/ review of iteration 3 by codex: T001 T002\n/);
    expect(out.text()).toMatch(/ review rejected by codex: no test for greet\(\) \(12\.0s, \$0\.0200\)\n/);
  });
});
