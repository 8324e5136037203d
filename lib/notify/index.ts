// `--notify URL`: the webhooks of a run, read from the config and checked before the run starts.
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config/index.ts';
import { UsageError } from '../errors.ts';
import { formatFor, NOTIFY_FORMATS, type NotifyFormat } from './format.ts';
import { NOTIFY_EVENTS, type NotifyEvent } from './message.ts';
import { NotifySink, type NotifyTarget } from './sink.ts';

export const DEFAULT_NOTIFY_TIMEOUT_MS = 5_000;

export interface NotifySettings {
  targets: NotifyTarget[];
  events: Set<NotifyEvent>;
  timeoutMs: number;
}

/** Reads and checks the notify options; undefined when no webhook is set. Bad values are usage errors naming them. */
export function notifySettings(config: Config): NotifySettings | undefined {
  const urls = (config.extra.get('notify') as string[] | undefined) ?? [];
  if (urls.length === 0) return undefined;
  const forced = config.extra.get('notify-format') as NotifyFormat | undefined;
  if (forced && !NOTIFY_FORMATS.includes(forced)) throw new UsageError(`--notify-format: unknown format ${JSON.stringify(forced)}: expected ${NOTIFY_FORMATS.join(', ')}`);
  const targets = urls.map((text): NotifyTarget => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new UsageError(`--notify: not a URL: ${JSON.stringify(text)}`, 'give the webhook as http://… or https://…');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--notify: only http and https webhooks are supported, not ${url.protocol.replace(':', '')}`);
    return { url, format: forced ?? formatFor(url) };
  });
  const listed = ((config.extra.get('notify-events') as string[] | undefined) ?? [])
    .flatMap((item) => item.split(','))
    .map((item) => item.trim().toLowerCase().replace('_', '-'))
    .filter(Boolean);
  for (const name of listed) {
    if (!(NOTIFY_EVENTS as readonly string[]).includes(name)) throw new UsageError(`--notify-events: unknown event ${JSON.stringify(name)}: expected some of ${NOTIFY_EVENTS.join(', ')}`);
  }
  const events = new Set<NotifyEvent>(listed.length > 0 ? (listed as NotifyEvent[]) : NOTIFY_EVENTS);
  const timeoutMs = (config.extra.get('notify-timeout') as number | undefined) ?? DEFAULT_NOTIFY_TIMEOUT_MS;
  return { targets, events, timeoutMs };
}

/** The sink that sends a session's notices. */
export function createNotifySink(settings: NotifySettings, root: string, redact: (text: string) => string, warn: (message: string) => void): NotifySink {
  return new NotifySink({
    ...settings,
    context: { repo: path.basename(root), host: os.hostname() },
    redact,
    warn,
  });
}
