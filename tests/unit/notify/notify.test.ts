import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../lib/config/index.ts';
import { parseArgv } from '../../../lib/cli/argv.ts';
import { deliveryFor, formatFor, safeUrl } from '../../../lib/notify/format.ts';
import { notifySettings } from '../../../lib/notify/index.ts';
import { noticeFor, type Notice } from '../../../lib/notify/message.ts';
import { record, sessionStart, summary, T0 } from '../progress/fixtures.ts';

const context = { repo: 'shop', host: 'box', session: '20261122-020000' };

describe('noticeFor', () => {
  it('start: what runs where', () => {
    expect(noticeFor(sessionStart, T0, context)).toEqual({
      event: 'start',
      level: 'info',
      title: 'ralph started (shop)',
      text: 'session 20261122-020000: beads mode, epic ws-9w6 "Feature: ralph-automation", agent claude, up to 50 iterations, branch 001-ralph-automation, on box',
      at: new Date(T0).toISOString(),
      fields: { repo: 'shop', host: 'box', session: '20261122-020000', mode: 'beads', target: 'epic ws-9w6 "Feature: ralph-automation"', agent: 'claude', branch: '001-ralph-automation', maxIterations: 50 },
    });
  });

  it('end: the result, its level by exit code', () => {
    expect(noticeFor({ type: 'session_end', summary: summary() }, T0, context)).toMatchObject({ event: 'end', level: 'success', title: 'ralph completed (shop)', fields: { status: 'completed', exitCode: 0, iterations: 1, costUsd: 0.25 } });
    expect(noticeFor({ type: 'session_end', summary: summary({ status: 'limit_reached', exitCode: 2 }) }, T0, context)).toMatchObject({ level: 'warning', title: 'ralph limit reached (shop)' });
    expect(noticeFor({ type: 'session_end', summary: summary({ status: 'failed', exitCode: 1, message: 'agent still failing' }) }, T0, context)?.text).toMatch(/^agent still failing: 1 iteration, 1 task done, 0 remaining, 2m 00s, \$0\.25; exit 1$/);
  });

  it('failure: only failed iterations, with the reason', () => {
    expect(noticeFor({ type: 'iteration_end', record: record() }, T0, context)).toBeUndefined();
    expect(noticeFor({ type: 'iteration_end', record: record({ outcome: 'no_change' }) }, T0, context)).toBeUndefined();
    expect(noticeFor({ type: 'iteration_end', record: record({ outcome: 'fail', reason: 'tests failed' }) }, T0, context)).toMatchObject({ event: 'failure', level: 'error', title: 'iteration 1 failed (shop)', text: 'ws-9w6.2 Task 1: build part 1: tests failed (2 attempts, 1m 00s)', fields: { taskId: 'ws-9w6.2', reason: 'tests failed' } });
  });

  it('question: the task, the question and how to answer it', () => {
    const notice = noticeFor({ type: 'iteration_end', record: record({ outcome: 'question', reason: 'asked: 404 or 410?', question: '404 or 410?' }) }, T0, context);
    expect(notice).toMatchObject({ event: 'question', level: 'warning', title: 'ws-9w6.2 waits for your answer (shop)', fields: { taskId: 'ws-9w6.2', question: '404 or 410?', iteration: 1 } });
    expect(notice?.text).toBe('iteration 1, ws-9w6.2 Task 1: build part 1: 404 or 410?\nAnswer with: ralph answer ws-9w6.2 "…"; the run goes on with other tasks.');
  });

  it('usage limit: with the reset time', () => {
    const notice = noticeFor({ type: 'usage_wait', iteration: 2, until: T0 + 3_600_000, reason: 'usage limit (five_hour)' }, T0, context);
    expect(notice).toMatchObject({ event: 'usage-limit', fields: { resetAt: new Date(T0 + 3_600_000).toISOString(), iteration: 2 } });
    expect(notice?.text).toMatch(/^waiting until 2026-11-22 \d\d:00:00 [+-]\d\d:\d\d \(1h 00m\) in iteration 2: usage limit \(five_hour\)$/);
  });

  it('stop, pause and resume; nothing for agent chatter', () => {
    expect(noticeFor({ type: 'control', request: 'stop', requestedAt: T0, by: 'ralph stop (PID 9)' }, T0, context)).toMatchObject({ event: 'stop', text: 'by ralph stop (PID 9): the run ends after its current iteration' });
    expect(noticeFor({ type: 'control', request: 'pause', requestedAt: T0, by: 'ralph pause (PID 9)' }, T0, context)).toMatchObject({ event: 'pause', fields: { paused: true } });
    expect(noticeFor({ type: 'control', request: 'unpause', requestedAt: T0, by: 'x' }, T0, context)).toBeUndefined();
    expect(noticeFor({ type: 'resumed', pausedMs: 90_000 }, T0, context)).toMatchObject({ event: 'pause', text: 'after a pause of 1m 30s', fields: { paused: false } });
    expect(noticeFor({ type: 'agent', iteration: 1, event: { kind: 'text', text: 'hi' } }, T0, context)).toBeUndefined();
    expect(noticeFor({ type: 'paused', since: T0 }, T0, context)).toBeUndefined();
  });
});

describe('formats', () => {
  const notice: Notice = { event: 'failure', level: 'error', title: 'iteration 3 failed (shop)', text: 'T004: tests failed', at: '2026-11-22T02:00:00.000Z', fields: { repo: 'shop', iteration: 3 } };

  it.each([
    ['https://hooks.slack.com/services/T0/B0/xyz', 'slack'],
    ['https://discord.com/api/webhooks/1/abc', 'discord'],
    ['https://discordapp.com/api/webhooks/1/abc', 'discord'],
    ['https://discord.com/channels/1', 'generic'],
    ['https://ntfy.sh/my-topic', 'ntfy'],
    ['https://ntfy.example.org/alerts', 'ntfy'],
    ['http://127.0.0.1:9000/hook', 'generic'],
  ])('%s → %s', (url, format) => {
    expect(formatFor(new URL(url))).toBe(format);
  });

  it('generic: the notice and its fields as one JSON object', () => {
    const delivery = deliveryFor(new URL('http://127.0.0.1/hook'), 'generic', notice);
    expect(delivery.url).toBe('http://127.0.0.1/hook');
    expect(delivery.headers).toEqual({ 'content-type': 'application/json' });
    expect(JSON.parse(delivery.body)).toEqual({ source: 'ralph', event: 'failure', level: 'error', title: 'iteration 3 failed (shop)', text: 'T004: tests failed', at: '2026-11-22T02:00:00.000Z', repo: 'shop', iteration: 3 });
  });

  it('slack: text with a bold title; discord: content, no mentions, at most 2000 characters', () => {
    expect(JSON.parse(deliveryFor(new URL('https://hooks.slack.com/services/x'), 'slack', notice).body)).toEqual({ text: '❌ *iteration 3 failed (shop)*\nT004: tests failed' });
    const discord = JSON.parse(deliveryFor(new URL('https://discord.com/api/webhooks/1/a'), 'discord', { ...notice, text: 'x'.repeat(5000) }).body) as { content: string; allowed_mentions: unknown };
    expect(discord.content).toHaveLength(2000);
    expect(discord.allowed_mentions).toEqual({ parse: [] });
  });

  it('ntfy: JSON publishing at the server root with the topic inside', () => {
    const delivery = deliveryFor(new URL('https://ntfy.example.org/sub/alerts?x=1'), 'ntfy', notice);
    expect(delivery.url).toBe('https://ntfy.example.org/sub/');
    expect(JSON.parse(delivery.body)).toEqual({ topic: 'alerts', title: 'iteration 3 failed (shop)', message: 'T004: tests failed', tags: ['x'], priority: 4 });
  });

  it('a webhook URL is shown without its secret path', () => {
    expect(safeUrl(new URL('https://hooks.slack.com/services/T0/B0/secret'))).toBe('https://hooks.slack.com/…');
  });
});

describe('notifySettings', () => {
  const settings = (argv: string[], file: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}) => notifySettings(resolveConfig({ flags: parseArgv(argv).flags, env, file }));

  it('none without --notify', () => {
    expect(settings([])).toBeUndefined();
  });

  it('repeatable URLs, each with its format; --notify-format forces one; events default to all', () => {
    const result = settings(['--notify', 'https://hooks.slack.com/services/x', '--notify', 'http://127.0.0.1:9/h']);
    expect(result?.targets.map((target) => [target.url.href, target.format])).toEqual([
      ['https://hooks.slack.com/services/x', 'slack'],
      ['http://127.0.0.1:9/h', 'generic'],
    ]);
    expect([...result!.events]).toEqual(['start', 'end', 'failure', 'usage-limit', 'stop', 'pause', 'question']);
    expect(result?.timeoutMs).toBe(5000);
    expect(settings(['--notify', 'http://a/', '--notify-format', 'ntfy'])?.targets[0]?.format).toBe('ntfy');
  });

  it('reads the config file and the environment', () => {
    expect(settings([], { notify: ['http://from-file/'], notifyEvents: ['end'] })?.targets[0]?.url.href).toBe('http://from-file/');
    expect([...settings([], { notify: 'http://from-file/', notifyEvents: 'end,failure' })!.events]).toEqual(['end', 'failure']);
    expect(settings([], {}, { RALPH_NOTIFY: 'http://env/', RALPH_NOTIFY_TIMEOUT: '2s' })).toMatchObject({ timeoutMs: 2000 });
  });

  it('--notify-events picks; usage_limit is read as usage-limit', () => {
    expect([...settings(['--notify', 'http://a/', '--notify-events', 'end, usage_limit', '--notify-events', 'stop'])!.events]).toEqual(['end', 'usage-limit', 'stop']);
  });

  it('bad values are one-line errors naming the value', () => {
    expect(() => settings(['--notify', 'not a url'])).toThrow('--notify: not a URL: "not a url"');
    expect(() => settings(['--notify', 'ftp://host/x'])).toThrow('--notify: only http and https webhooks are supported, not ftp');
    expect(() => settings(['--notify', 'http://a/', '--notify-events', 'end,explode'])).toThrow('--notify-events: unknown event "explode": expected some of start, end, failure, usage-limit, stop, pause');
    expect(() => settings(['--notify', 'http://a/', '--notify-format', 'teams'])).toThrow(/--notify-format: invalid value "teams": expected one of generic, slack, discord, ntfy/);
  });
});
