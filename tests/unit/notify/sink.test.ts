import { describe, expect, it } from 'vitest';
import type { Post, PostResult } from '../../../lib/notify/post.ts';
import { NotifySink } from '../../../lib/notify/sink.ts';
import { NOTIFY_EVENTS } from '../../../lib/notify/message.ts';
import { sessionStart, summary, T0 } from '../progress/fixtures.ts';

interface Call {
  url: string;
  body: Record<string, unknown>;
  /** The sink had already given up when it made this call. */
  afterAbort: boolean;
}

/** A scripted webhook: answers each call from `answers` (the last repeats); 'hang' waits for the timeout or abort. */
function fakePost(answers: Array<PostResult | 'hang'>): { post: Post; calls: Call[] } {
  const calls: Call[] = [];
  const post: Post = (url, body, _headers, options) => {
    calls.push({ url, body: JSON.parse(body) as Record<string, unknown>, afterAbort: options.signal.aborted });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    if (answer !== 'hang') return Promise.resolve(answer);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ ok: false, error: 'timed out' }), options.timeoutMs);
      options.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve({ ok: false, error: 'abandoned at exit' });
      });
    });
  };
  return { post, calls };
}

function sink(post: Post, extra: Partial<ConstructorParameters<typeof NotifySink>[0]> = {}) {
  const warnings: string[] = [];
  const notify = new NotifySink({
    targets: [{ url: new URL('https://hooks.example.test/secret/path'), format: 'generic' }],
    events: new Set(NOTIFY_EVENTS),
    timeoutMs: 200,
    context: { repo: 'shop', host: 'box' },
    redact: (text) => text.replaceAll('sk-secret-value-123', '[redacted:KEY]'),
    warn: (message) => warnings.push(message),
    post,
    retryDelayMs: 1,
    ...extra,
  });
  return { notify, warnings };
}

describe('NotifySink', () => {
  it('emit() returns at once and sends in order; the session id rides along', async () => {
    const { post, calls } = fakePost([{ ok: true, status: 200 }]);
    const { notify, warnings } = sink(post);
    const started = Date.now();
    notify.emit(sessionStart, T0);
    notify.emit({ type: 'agent', iteration: 1, event: { kind: 'text', text: 'not sent' } }, T0);
    notify.emit({ type: 'session_end', summary: summary() }, T0 + 1);
    expect(Date.now() - started).toBeLessThan(50);
    await notify.close();
    expect(calls.map((call) => [call.body.event, call.body.session])).toEqual([
      ['start', '20261122-020000'],
      ['end', '20261122-020000'],
    ]);
    expect(warnings).toEqual([]);
  });

  it('retries a failure once; a second failure is a warning without the secret URL path', async () => {
    const { post, calls } = fakePost([{ ok: false, status: 500, error: 'HTTP 500' }, { ok: true, status: 200 }, { ok: false, status: 500, error: 'HTTP 500' }]);
    const { notify, warnings } = sink(post);
    notify.emit(sessionStart, T0);
    notify.emit({ type: 'session_end', summary: summary() }, T0);
    await notify.close();
    expect(calls.map((call) => call.body.event)).toEqual(['start', 'start', 'end', 'end']);
    expect(warnings).toEqual(["notify https://hooks.example.test/…: the 'end' notification failed twice: HTTP 500"]);
  });

  it('close() waits at most one timeout for a hanging webhook, then says what was not delivered', async () => {
    const { post, calls } = fakePost(['hang']);
    const { notify, warnings } = sink(post, { timeoutMs: 300 });
    notify.emit(sessionStart, T0);
    notify.emit({ type: 'session_end', summary: summary() }, T0);
    const started = Date.now();
    await notify.close();
    const took = Date.now() - started;
    expect(took).toBeLessThan(1500);
    // Nothing is sent once close() gave up (a retry pending at that moment is dropped, not sent).
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(calls.filter((call) => call.afterAbort)).toEqual([]);
    expect(warnings.at(-1)).toMatch(/^notify https:\/\/hooks\.example\.test\/…: \d notifications? not delivered by the end of the run/);
  });

  it('keeps secrets out of every field', async () => {
    const { post, calls } = fakePost([{ ok: true, status: 200 }]);
    const { notify } = sink(post);
    notify.emit({ type: 'session_end', summary: summary({ status: 'failed', exitCode: 1, message: 'agent error: invalid key sk-secret-value-123' }) }, T0);
    await notify.close();
    expect(JSON.stringify(calls)).not.toContain('sk-secret-value-123');
    expect(calls[0]!.body.text).toMatch(/^agent error: invalid key \[redacted:KEY\]/);
  });

  it('only the chosen events', async () => {
    const { post, calls } = fakePost([{ ok: true, status: 200 }]);
    const { notify } = sink(post, { events: new Set(['end'] as const) });
    notify.emit(sessionStart, T0);
    notify.emit({ type: 'session_end', summary: summary() }, T0);
    await notify.close();
    expect(calls.map((call) => call.body.event)).toEqual(['end']);
  });

  it('a bounded queue: past the limit the oldest go, with one warning', async () => {
    const calls: number[] = [];
    const slow: Post = (_url, body) => {
      calls.push((JSON.parse(body) as { iteration: number }).iteration);
      return new Promise((resolve) => setTimeout(() => resolve({ ok: true, status: 200 }), 20));
    };
    const { notify, warnings } = sink(slow, { maxQueue: 3, timeoutMs: 2000 });
    for (let index = 0; index < 10; index += 1) notify.emit({ type: 'usage_wait', iteration: index, until: T0, reason: 'limit' }, T0);
    await notify.close();
    // The first went out at once; of the nine queued behind it only the last three were kept.
    expect(calls).toEqual([0, 7, 8, 9]);
    expect(warnings).toEqual(['notify https://hooks.example.test/…: 6 notifications dropped: the webhook is slower than the run']);
  });

  it('sends to every webhook, each in its own format', async () => {
    const { post, calls } = fakePost([{ ok: true, status: 200 }]);
    const { notify } = sink(post, { targets: [{ url: new URL('http://a/'), format: 'generic' }, { url: new URL('https://hooks.slack.com/services/x'), format: 'slack' }] });
    notify.emit(sessionStart, T0);
    await notify.close();
    expect(calls.map((call) => [call.url, Object.keys(call.body).includes('text') && Object.keys(call.body).length === 1])).toEqual([
      ['http://a/', false],
      ['https://hooks.slack.com/services/x', true],
    ]);
  });
});
