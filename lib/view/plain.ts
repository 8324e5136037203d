import dayjs from 'dayjs';
import { formatDuration } from '../duration.ts';
import type { Output } from '../deps.ts';
import type { EventSink, RunEvent } from '../events.ts';
import { oneLine } from '../agents/common.ts';
import type { AgentEvent } from '../agents/types.ts';
import { reviewLine } from '../progress/review-text.ts';
import { count, describeTasksLeft } from '../progress/tasks-left.ts';
import { pullRequestLines } from '../pr/lines.ts';
import { answerCommand, quoted } from '../questions/text.ts';
import { paint, type Colour } from './colour.ts';
import { landedText } from '../landing/view-text.ts';

export interface ViewOptions {
  out: Output;
  color: boolean;
  quiet: boolean;
  verbose: boolean;
  /** The clock for heartbeat lines (default Date.now). */
  now?: () => number;
  /** See setHeartbeat(); default 0 (off): the TTY view has a status line instead. */
  heartbeatMs?: number;
}

/** Off a TTY, a line this often while an iteration runs and nothing was printed (option `heartbeat`). */
export const DEFAULT_HEARTBEAT_MS = 5 * 60_000;

/** The line-oriented renderer: one timestamped line per event, safe for tmux logs, Makefiles and CI. */
export class LineView implements EventSink {
  private started = false;
  /** Streamed text fragments (Gemini deltas) gathered into one line. */
  private pending = '';
  /** The worker of each running iteration (several workers): their lines say whose they are. */
  private readonly workers = new Map<number, number>();
  /** Running iterations: their task, start and last output (for the heartbeat line). */
  private readonly running = new Map<number, { task: string; startedAt: number; lastOutputAt: number; last?: AgentEvent }>();
  private lastLineAt = 0;
  private beat: NodeJS.Timeout | undefined;
  private heartbeatMs = 0;

  constructor(private readonly options: ViewOptions) {
    this.setHeartbeat(options.heartbeatMs ?? 0);
  }

  /**
   * While an iteration runs and nothing was printed for `ms` (a silent agent, or --quiet), a line says it is
   * still at work: task, time so far, its last output. Plain logs in tmux or CI then never look hung. 0: off.
   */
  setHeartbeat(ms: number): void {
    this.heartbeatMs = ms;
    if (this.beat) clearInterval(this.beat);
    this.beat = undefined;
    if (ms <= 0) return;
    this.beat = setInterval(() => this.heartbeat(), Math.max(50, Math.min(ms / 4, 30_000)));
    this.beat.unref();
  }

  private heartbeat(): void {
    const now = (this.options.now ?? Date.now)();
    if (this.running.size === 0 || now - this.lastLineAt < this.heartbeatMs) return;
    for (const [iteration, run] of this.running) {
      const last = run.last ? `; last output ${formatDuration(now - run.lastOutputAt)} ago: ${lastOutput(run.last)}` : '; no output yet';
      this.line(`still working: iteration ${iteration}${this.tag(iteration)} ${run.task} for ${formatDuration(now - run.startedAt)}${last}`, now, 'dim');
    }
  }

  close(): void {
    if (this.beat) clearInterval(this.beat);
    this.beat = undefined;
  }

  private paint(colour: Colour, text: string): string {
    return paint(this.options.color, colour, text);
  }

  /** The last second stamped and its text: an agent printing thousands of lines a second is stamped once a second. */
  private stampSecond = Number.NaN;
  private stampText = '';

  line(text: string, at: number, colour?: Colour): void {
    const second = Math.floor(at / 1000);
    if (second !== this.stampSecond) {
      this.stampSecond = second;
      this.stampText = dayjs(at).format('YYYY-MM-DD HH:mm:ss');
    }
    const stamp = this.paint('dim', this.stampText);
    this.lastLineAt = at;
    this.options.out.write(`${stamp} ${colour ? this.paint(colour, text) : text}\n`);
  }

  emit(event: RunEvent, at: number): void {
    const quiet = this.options.quiet;
    if (this.pending && !(event.type === 'agent' && event.event.kind === 'text' && event.event.delta)) {
      const text = this.pending;
      this.pending = '';
      if (!quiet) this.agentEvent({ kind: 'text', text }, at, this.pendingTag);
    }
    switch (event.type) {
      case 'session_start':
        this.started = true;
        if (!quiet) this.line(`ralph ${event.sessionId}: ${event.source} mode, ${event.target}, agent ${event.agent}, up to ${count(event.maxIterations, 'iteration')}`, at, 'bold');
        if (!quiet) this.line(`logs: ${event.logDir}`, at, 'dim');
        break;
      case 'info':
        if (!quiet) this.line(event.message, at);
        break;
      case 'warning':
        this.line(`warning: ${event.message}`, at, 'yellow');
        break;
      case 'iteration_start':
        this.running.set(event.iteration, { task: event.task.id, startedAt: at, lastOutputAt: at });
        // A period of silence is counted from the start of an iteration at the earliest (--quiet prints no line for it).
        this.lastLineAt = Math.max(this.lastLineAt, at);
        if (event.worker !== undefined) this.workers.set(event.iteration, event.worker);
        if (!quiet) this.line(`iteration ${event.iteration}/${event.maxIterations}${this.tag(event.iteration)}: ${event.task.id} ${event.task.title}`, at, 'cyan');
        break;
      case 'agent': {
        const run = this.running.get(event.iteration);
        const said = run && showsProgress(event.event);
        if (run && said) {
          run.last = said;
          run.lastOutputAt = at;
        }
        if (!quiet) this.agentEvent(event.event, at, this.tag(event.iteration));
        break;
      }
      case 'attempt_failed':
        this.line(`attempt ${event.attempt} failed (${event.kind}): ${event.reason}`, at, 'yellow');
        break;
      case 'backoff':
        if (!quiet) this.line(`backing off ${formatDuration(event.delayMs)} before attempt ${event.attempt + 1} (until ${dayjs(event.until).format('HH:mm:ss')})`, at, 'yellow');
        break;
      case 'agent_switch':
        this.line(`${event.from} limited ${Number.isFinite(event.until) ? `until ${dayjs(event.until).format('YYYY-MM-DD HH:mm')}` : 'for the rest of the run'} (${event.reason}): continuing with ${event.to}`, at, 'magenta');
        break;
      case 'agent_back':
        this.line(`${event.agent}'s usage limit has reset: it works again from iteration ${event.iteration}`, at, 'magenta');
        break;
      case 'usage_wait':
        this.line(`usage limit: waiting until ${dayjs(event.until).format('YYYY-MM-DD HH:mm:ss')} (${formatDuration(event.until - at)}): ${event.reason}`, at, 'magenta');
        break;
      case 'gates':
        if (!quiet) this.line(`gates: ${event.results.map((gate) => `${gate.name} ${gate.passed ? 'passed' : 'FAILED'}`).join(', ') || 'none'}`, at);
        break;
      case 'review_start':
        if (!quiet) this.line(`review of iteration ${event.iteration} by ${event.agent}: ${event.taskIds.join(' ')}`, at, 'cyan');
        break;
      case 'review_end': {
        const review = event.review;
        const cost = review.costUsd > 0 ? `, $${review.costUsd.toFixed(4)}` : '';
        this.line(`review ${reviewLine(review)} (${formatDuration(review.durationMs)}${cost})`, at, review.verdict === 'approve' ? 'green' : 'red');
        break;
      }
      case 'control':
        if (event.request === 'stop') this.line(`stop requested by ${event.by}: the run ends after the current iteration`, at, 'yellow');
        else if (event.request === 'pause') this.line(`pause requested by ${event.by}: no new iteration starts until 'ralph unpause'`, at, 'yellow');
        else this.line('pause lifted', at, 'yellow');
        break;
      case 'paused':
        this.line(`paused since ${dayjs(event.since).format('YYYY-MM-DD HH:mm:ss')}: waiting for 'ralph unpause' (or 'ralph stop')`, at, 'yellow');
        break;
      case 'resumed':
        this.line(`resumed after a pause of ${formatDuration(event.pausedMs)}`, at, 'yellow');
        break;
      case 'iteration_end': {
        const record = event.record;
        const colour: Colour = record.outcome === 'pass' ? 'green' : record.outcome === 'fail' ? 'red' : record.outcome === 'question' ? 'magenta' : 'yellow';
        const outcome = record.outcome === 'no_change' ? 'no change' : record.outcome;
        const done = record.tasksDone.length > 0 ? `, done: ${record.tasksDone.join(' ')}` : '';
        this.workers.delete(record.iteration);
        this.running.delete(record.iteration);
        // A question is said as asked (on one line), and how to answer it.
        const why = record.outcome === 'question' ? `: ${quoted(record.question ?? '', 300)}; set aside until ${answerCommand(record.taskId)}` : record.outcome === 'pass' && !record.converge ? '' : ` (${record.reason})`;
        this.line(`iteration ${record.iteration}${record.worker === undefined ? '' : ` [w${record.worker}]`} ${record.taskId}: ${outcome} in ${formatDuration(record.durationMs)}${done}${why}`, at, colour);
        break;
      }
      case 'session_end': {
        this.close();
        const summary = event.summary;
        // A run that never started already printed its error; one line is enough.
        if (!this.started && summary.status === 'failed') break;
        const colour: Colour = summary.exitCode === 0 ? 'green' : summary.exitCode === 2 ? 'yellow' : 'red';
        this.line(`${summary.status}: ${summary.message} (${count(summary.iterations, 'iteration')}, ${summary.tasksCompleted} done, ${describeTasksLeft(summary.tasksRemaining, summary.skippedTaskIds)}, ${formatDuration(summary.durationMs)}${summary.costUsd > 0 ? `, $${summary.costUsd.toFixed(4)}` : ''}) exit ${summary.exitCode}`, at, colour);
        // --remote: which tasks this host landed, and how many the others did meanwhile.
        if (summary.remote) this.line(landedText(summary.remote, summary.records.flatMap((record) => record.tasksDone)), at, colour);
        // --pr: what is not pushed, then the pull request, as the run's last lines.
        for (const line of summary.pr ? pullRequestLines(summary.pr) : []) this.line(line, at, line.startsWith('not pushed') || !summary.pr?.url ? 'yellow' : colour);
        break;
      }
    }
  }

  /** ` [w2]` for an iteration of worker 2; empty with one worker. */
  private tag(iteration: number): string {
    const worker = this.workers.get(iteration);
    return worker === undefined ? '' : ` [w${worker}]`;
  }

  private pendingTag = '';

  private agentEvent(event: AgentEvent, at: number, tag: string): void {
    const lead = tag ? `${tag.trim()} ` : '';
    switch (event.kind) {
      case 'text':
        if (event.delta) {
          this.pending += event.text;
          this.pendingTag = tag;
          break;
        }
        if (this.options.verbose) for (const text of event.text.split('\n')) this.line(`  ${lead}│ ${text}`, at);
        else if (event.text.trim()) this.line(`  ${lead}│ ${oneLine(event.text, 200)}`, at);
        break;
      case 'tool_call':
        this.line(`  ${lead}↳ ${event.name}${event.summary ? `: ${event.summary}` : ''}`, at, 'blue');
        break;
      case 'retry':
        this.line(`  ${lead}agent retrying internally${event.status ? ` (HTTP ${event.status})` : ''}${event.attempt ? `, attempt ${event.attempt}` : ''}`, at, 'dim');
        break;
      case 'rate_limit':
        if (event.status === 'rejected') this.line(`  ${lead}agent hit a usage limit${event.resetsAt ? `, resets ${dayjs(event.resetsAt).format('YYYY-MM-DD HH:mm')}` : ''}`, at, 'magenta');
        break;
      case 'result':
        if (this.options.verbose && event.text) this.line(`  ${lead}result${event.isError ? ' (error)' : ''}: ${oneLine(event.text, 400)}`, at);
        break;
      case 'error':
        this.line(`  ${lead}agent error: ${oneLine(event.message, 300)}`, at, 'red');
        break;
      case 'other':
        if (this.options.verbose) this.line(`  ${lead}${oneLine(event.text, 300)}`, at, 'dim');
        break;
      default:
        break;
    }
  }
}

/** Most characters of an agent's text the heartbeat keeps: oneLine reads no more than 4× its 120. */
const LAST_TEXT = 480;

/**
 * The event the heartbeat may show as the last output (a tool call, a text with words), or undefined. It is
 * formatted only when a heartbeat line is printed: every text of a flood (4 KiB lines, texts of 1 MiB read
 * from 10 MiB lines) made a copy of itself here, its text with `│ ` in front being two bytes a character,
 * and the line kept for the heartbeat held that copy until the next (tens of MB of four workers' garbage).
 * A long text is kept as a copy of its start, so the whole text can go.
 */
function showsProgress(event: AgentEvent): AgentEvent | undefined {
  if (event.kind === 'tool_call') return event;
  if (event.kind !== 'text' || !/\S/.test(event.text)) return undefined;
  // A slice of a long string holds on to all of it; a string made from bytes is one of its own.
  return event.text.length <= LAST_TEXT ? event : { ...event, text: Buffer.from(event.text.slice(0, LAST_TEXT)).toString() };
}

/** What an agent event shows of its progress, in a few words. */
function lastOutput(event: AgentEvent): string {
  if (event.kind === 'tool_call') return oneLine(`↳ ${event.name}${event.summary ? `: ${event.summary}` : ''}`, 120);
  return oneLine(`│ ${event.kind === 'text' ? event.text : ''}`, 120);
}
