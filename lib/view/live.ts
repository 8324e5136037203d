import os from 'node:os';
import { formatDuration } from '../duration.ts';
import type { Output } from '../deps.ts';
import type { EventSink, RunEvent } from '../events.ts';
import { describeState } from '../progress/describe.ts';
import { RunTracker, type RunStatusFile } from '../progress/state.ts';
import { paint, useColor } from './colour.ts';
import { iterationCounter } from '../progress/iteration-count.ts';
import { DEFAULT_HEARTBEAT_MS, LineView } from './plain.ts';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Back to column 0 and erase the line: how the status line is removed before anything else is printed. */
export const CLEAR_LINE = '\r\u001b[2K';

export interface LiveViewOptions {
  out: Output;
  color: boolean;
  quiet: boolean;
  verbose: boolean;
  now: () => number;
  /** Redraw period of the spinner and countdowns. */
  intervalMs?: number;
}

/** Whole seconds under a minute (a status line should not flicker through milliseconds). */
function formatElapsed(ms: number): string {
  return ms < 60_000 ? `${Math.floor(Math.max(0, ms) / 1000)}s` : formatDuration(ms);
}

/** The status line: spinner, iteration, state with countdown, elapsed, cost, task; cut to `width` characters. */
export function formatStatusLine(status: RunStatusFile, now: number, frame: number, options: { color: boolean; width: number }): string {
  const spinner = SPINNER[frame % SPINNER.length]!;
  const parts = [
    status.iteration > 0 ? iterationCounter(status.iteration, status.ofRun, status.maxIterations) : `ralph ${status.sessionId}`,
    describeState(status, now),
    formatElapsed(now - Date.parse(status.startedAt)),
  ];
  if (status.costUsd > 0) parts.push(`$${status.costUsd.toFixed(4)}`);
  const approved = status.counts.reviewsApproved ?? 0;
  const rejected = status.counts.reviewsRejected ?? 0;
  if (approved + rejected > 0) parts.push(`reviews ${approved} approved, ${rejected} not`);
  if (status.task) parts.push(`${status.task.id} ${status.task.title}`);
  // Only plain text is measured: a line that wraps could no longer be erased with one \r.
  const plain = [...`${spinner} ${parts.join(' · ')}`.replace(/\s+/g, ' ')];
  const width = Math.max(10, options.width - 1);
  const text = plain.length > width ? `${plain.slice(0, width - 1).join('')}…` : plain.join('');
  if (!options.color) return text;
  const rest = text.slice(1);
  const colour = status.state === 'backing_off' || status.state === 'paused' ? 'yellow' : status.state === 'waiting_usage_reset' ? 'magenta' : undefined;
  return `${paint(true, 'cyan', text.slice(0, 1))}${colour === undefined ? rest : paint(true, colour, rest)}`;
}

/** One line per worker under the status line (several workers): `  w2 · iteration 5 · 1m 03s · T005 Create model`. */
export function formatWorkerLines(status: RunStatusFile, now: number, width: number): string[] {
  return (status.workers ?? []).map((item) => {
    const text = [...`  ${`w${item.worker} · iteration ${item.iteration} · ${formatElapsed(now - Date.parse(item.startedAt))} · ${item.task.id} ${item.task.title}`.replace(/\s+/g, ' ')}`];
    const room = Math.max(10, width - 1);
    return text.length > room ? `${text.slice(0, room - 1).join('')}…` : text.join('');
  });
}

/** Erases a status block of `lines` lines and leaves the cursor at its start. */
function eraseBlock(lines: number): string {
  return CLEAR_LINE + '\u001b[1A\u001b[2K'.repeat(Math.max(0, lines - 1));
}

/**
 * The TTY view: the agent's activity scrolls exactly as LineView prints it, and one status line stays at
 * the bottom, redrawn by a timer so the spinner and countdowns move while the agent is silent.
 */
export class LiveView implements EventSink {
  private readonly lines: LineView;
  private readonly tracker = new RunTracker(os.hostname());
  private timer: NodeJS.Timeout | undefined;
  private shown = false;
  /** Lines of the status block on screen (the status line, plus one per worker). */
  private shownLines = 1;
  private printed = false;
  private frame = 0;
  private active = false;

  constructor(private readonly options: LiveViewOptions) {
    // Every line LineView writes first removes the status line, then puts it back below itself.
    const out: Output = { write: (text: string) => this.print(text), isTTY: true };
    this.lines = new LineView({ out, color: options.color, quiet: options.quiet, verbose: options.verbose });
  }

  emit(event: RunEvent, at: number): void {
    this.tracker.apply(event, at);
    if (event.type === 'session_start') this.start();
    if (event.type === 'session_end') this.stop();
    this.printed = false;
    this.lines.emit(event, at);
    // A state change shows at once even when the event printed nothing (quiet mode, silent agent events).
    if (this.active && !this.printed) this.draw();
  }

  /** Removes the status line, e.g. before someone else writes to the terminal. */
  clear(): void {
    if (!this.shown) return;
    this.options.out.write(eraseBlock(this.shownLines));
    this.shown = false;
  }

  close(): void {
    this.stop();
  }

  /** Redraws the status line (the timer calls this; tests may too). */
  tick(): void {
    this.frame += 1;
    if (this.active) this.draw();
  }

  private start(): void {
    this.active = true;
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs ?? 125);
    this.timer.unref();
  }

  private stop(): void {
    this.active = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private statusText(): string[] | undefined {
    const status = this.tracker.status;
    if (!this.active || !status) return undefined;
    const width = this.options.out.columns || 80;
    const now = this.options.now();
    return [formatStatusLine(status, now, this.frame, { color: this.options.color, width }), ...formatWorkerLines(status, now, width)];
  }

  private print(text: string): void {
    const status = this.statusText();
    // One write per line keeps the terminal from flickering between the erase and the redraw.
    this.options.out.write(`${this.shown ? eraseBlock(this.shownLines) : ''}${text}${status?.join('\n') ?? ''}`);
    this.shown = status !== undefined;
    this.shownLines = status?.length ?? 1;
    this.printed = true;
  }

  private draw(): void {
    const status = this.statusText();
    if (status === undefined) return this.clear();
    this.options.out.write(`${this.shown ? eraseBlock(this.shownLines) : CLEAR_LINE}${status.join('\n')}`);
    this.shown = true;
    this.shownLines = status.length;
  }
}

export interface CreateViewOptions {
  out: Output;
  env: NodeJS.ProcessEnv;
  quiet: boolean;
  verbose: boolean;
  now: () => number;
}

/** The live view on a capable terminal, plain timestamped lines everywhere else (pipes, CI, TERM=dumb). */
export function createView(opts: CreateViewOptions): EventSink & { clear?(): void; setHeartbeat?(ms: number): void } {
  const color = useColor(opts.out, opts.env);
  if (opts.out.isTTY && opts.env.TERM !== 'dumb') return new LiveView({ out: opts.out, color, quiet: opts.quiet, verbose: opts.verbose, now: opts.now });
  return new LineView({ out: opts.out, color, quiet: opts.quiet, verbose: opts.verbose, now: opts.now, heartbeatMs: DEFAULT_HEARTBEAT_MS });
}
