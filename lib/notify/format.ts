// The shapes webhooks expect: a generic JSON object, Slack's and Discord's incoming webhooks, ntfy's
// JSON publishing. Pure: a notice in, an HTTP request description out.
import type { Notice } from './message.ts';

export const NOTIFY_FORMATS = ['generic', 'slack', 'discord', 'ntfy'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

export interface Delivery {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** The format a URL asks for: Slack, Discord and ntfy are known by their hosts, the rest is generic. */
export function formatFor(url: URL): NotifyFormat {
  const host = url.hostname.toLowerCase();
  if (host === 'hooks.slack.com') return 'slack';
  if (/(^|\.)discord(app)?\.com$/.test(host) && url.pathname.startsWith('/api/webhooks/')) return 'discord';
  if (host === 'ntfy.sh' || host.startsWith('ntfy.')) return 'ntfy';
  return 'generic';
}

const DISCORD_MAX = 2000;
const ICON: Record<Notice['level'], string> = { info: 'ℹ️', success: '✅', warning: '⚠️', error: '❌' };
const NTFY_TAGS: Record<Notice['level'], string> = { info: 'information_source', success: 'white_check_mark', warning: 'warning', error: 'x' };

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const json = (url: string, data: unknown): Delivery => ({ url, body: JSON.stringify(data), headers: { 'content-type': 'application/json' } });

/** The request that carries `notice` to `url` in `format`. */
export function deliveryFor(url: URL, format: NotifyFormat, notice: Notice): Delivery {
  switch (format) {
    case 'generic':
      return json(url.href, { source: 'ralph', event: notice.event, level: notice.level, title: notice.title, text: notice.text, at: notice.at, ...notice.fields });
    case 'slack':
      return json(url.href, { text: `${ICON[notice.level]} *${notice.title}*\n${notice.text}` });
    case 'discord':
      return json(url.href, { username: 'ralph', content: cut(`${ICON[notice.level]} **${notice.title}**\n${notice.text}`, DISCORD_MAX), allowed_mentions: { parse: [] } });
    case 'ntfy': {
      // ntfy takes JSON at its root with the topic inside: https://ntfy.sh/mytopic → POST https://ntfy.sh/ {topic: "mytopic"}.
      const parts = url.pathname.split('/').filter(Boolean);
      const topic = parts.pop() ?? '';
      const root = new URL(url.href);
      root.pathname = `/${parts.map((part) => `${part}/`).join('')}`;
      root.search = '';
      return json(root.href, { topic: decodeURIComponent(topic), title: notice.title, message: notice.text, tags: [NTFY_TAGS[notice.level]], priority: notice.level === 'error' ? 4 : 3 });
    }
  }
}

/** A URL for messages: scheme and host only, since a webhook's path or query is often its secret. */
export function safeUrl(url: URL): string {
  return `${url.protocol}//${url.host}/…`;
}
