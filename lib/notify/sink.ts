// Delivers notices to webhooks without ever holding up the run: emit() only queues; each webhook has
// its own small queue sent in order, one request at a time, with a timeout and one retry; a failure is
// a warning line. At the end, close() waits at most one timeout for what is still queued.
import type { EventSink, RunEvent } from '../events.ts';
import { deliveryFor, safeUrl, type Delivery, type NotifyFormat } from './format.ts';
import { noticeFor, type NoticeContext, type NotifyEvent } from './message.ts';
import { post as realPost, type Post } from './post.ts';

export interface NotifyTarget {
  url: URL;
  format: NotifyFormat;
}

export interface NotifySinkOptions {
  targets: NotifyTarget[];
  events: ReadonlySet<NotifyEvent>;
  timeoutMs: number;
  context: NoticeContext;
  /** Replaces secrets (the run's redactor); the events are redacted already, this covers what a notice adds. */
  redact: (text: string) => string;
  warn: (message: string) => void;
  post?: Post;
  /** Pause before the one retry. */
  retryDelayMs?: number;
  /** Most messages waiting per webhook; the oldest are dropped past it. */
  maxQueue?: number;
}

/** Failures reported per webhook before going quiet about it. */
const MAX_WARNINGS = 3;

class Channel {
  readonly queue: Array<{ event: NotifyEvent; delivery: Delivery }> = [];
  busy: Promise<void> | undefined;
  warnings = 0;
  dropped = 0;
  constructor(readonly target: NotifyTarget) {}
}

export class NotifySink implements EventSink {
  private readonly channels: Channel[];
  private readonly post: Post;
  private readonly abort = new AbortController();
  private session: string | undefined;

  constructor(private readonly options: NotifySinkOptions) {
    this.channels = options.targets.map((target) => new Channel(target));
    this.post = options.post ?? realPost;
  }

  emit(event: RunEvent, at: number): void {
    if (event.type === 'session_start') this.session = event.sessionId;
    const notice = noticeFor(event, at, { ...this.options.context, session: this.session });
    if (!notice || !this.options.events.has(notice.event)) return;
    notice.title = this.options.redact(notice.title);
    notice.text = this.options.redact(notice.text);
    for (const [key, value] of Object.entries(notice.fields)) if (typeof value === 'string') notice.fields[key] = this.options.redact(value);
    for (const channel of this.channels) {
      channel.queue.push({ event: notice.event, delivery: deliveryFor(channel.target.url, channel.target.format, notice) });
      if (channel.queue.length > (this.options.maxQueue ?? 50)) {
        channel.queue.shift();
        channel.dropped += 1;
      }
      if (!channel.busy) channel.busy = this.pump(channel);
    }
  }

  /** Waits up to one timeout for the queues to drain, then abandons the rest with one warning each. */
  async close(): Promise<void> {
    const pending = this.channels.filter((channel) => channel.busy).map((channel) => channel.busy!);
    if (pending.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(pending), new Promise((resolve) => (timer = setTimeout(resolve, this.options.timeoutMs)))]);
      clearTimeout(timer);
    }
    for (const channel of this.channels) {
      const left = channel.queue.length + (channel.busy ? 1 : 0);
      if (left > 0) this.options.warn(`notify ${safeUrl(channel.target.url)}: ${left} notification${left === 1 ? '' : 's'} not delivered by the end of the run (the webhook is slow or not answering)`);
      channel.queue.length = 0;
    }
    this.abort.abort();
    await Promise.all(this.channels.map((channel) => channel.busy));
  }

  private async pump(channel: Channel): Promise<void> {
    while (channel.queue.length > 0 && !this.abort.signal.aborted) {
      const item = channel.queue.shift()!;
      let result = await this.send(item.delivery);
      if (!result.ok && !this.abort.signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 250).unref());
        result = await this.send(item.delivery);
      }
      if (!result.ok && !this.abort.signal.aborted) this.failed(channel, `the '${item.event}' notification failed twice: ${result.error}`);
      if (channel.dropped > 0) {
        this.failed(channel, `${channel.dropped} notification${channel.dropped === 1 ? '' : 's'} dropped: the webhook is slower than the run`);
        channel.dropped = 0;
      }
    }
    channel.busy = undefined;
  }

  private send(delivery: Delivery): ReturnType<Post> {
    if (this.abort.signal.aborted) return Promise.resolve({ ok: false, error: 'abandoned at exit' });
    return this.post(delivery.url, delivery.body, delivery.headers, { timeoutMs: this.options.timeoutMs, signal: this.abort.signal });
  }

  private failed(channel: Channel, message: string): void {
    channel.warnings += 1;
    if (channel.warnings > MAX_WARNINGS) return;
    const quiet = channel.warnings === MAX_WARNINGS ? ' (further failures of this webhook are not reported)' : '';
    this.options.warn(`notify ${safeUrl(channel.target.url)}: ${message}${quiet}`);
  }
}
