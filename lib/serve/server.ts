// `ralph serve`: a small node:http server for the live page. GET / (the page, everything inline, no
// network beyond this server), GET /events (server-sent events: the whole state on each change),
// GET /api/state, GET /reports/<file>; POST /api/control (pause, unpause, stop) through the same
// channel as `ralph stop`, and POST /api/answer (`{"task": "T003", "answer": "410"}`) as `ralph answer`
// does: only when bound to loopback, only with the page's token and a local Host.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { requestControl, type ControlAction } from '../control/request.ts';
import { answerQuestion, ANSWER_MAX_CHARS } from '../questions/answer.ts';
import { reportsDir } from '../report/index.ts';
import type { Deps } from '../deps.ts';
import { LiveFeed } from './feed.ts';
import { RemoteWatch } from './remote-watch.ts';
import { renderPage } from './page.ts';

export interface ServeOptions {
  root: string;
  host: string;
  port: number;
  /** How often the files are looked at. */
  pollMs?: number;
  /** --remote (else the shown run's own remote): the claims there, looked at in the background with `deps`. */
  remote?: { name?: string; leaseMs: number; deps: Deps; everyMs?: number };
}

export interface LiveServer {
  url: string;
  /** Whether the page offers the pause and stop buttons. */
  control: boolean;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const KEEPALIVE_MS = 15_000;
const ACTIONS: readonly ControlAction[] = ['stop', 'pause', 'unpause'];

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

/** Starts the server; resolves once it listens (rejects when the port is taken). */
export async function startServer(options: ServeOptions): Promise<LiveServer> {
  const control = isLoopback(options.host);
  const token = randomBytes(18).toString('base64url');
  const feed = new LiveFeed(options.root, { control });
  const watch = options.remote ? remoteWatch(options.root, feed, options.remote) : undefined;
  const clients = new Set<http.ServerResponse>();
  let port = options.port;

  // A page on another origin must not reach this one through the user's browser (DNS rebinding).
  const localHost = (header: string | undefined): boolean => {
    if (!control) return true;
    const name = (header ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    return isLoopback(name);
  };

  const send = (response: http.ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void => {
    response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...extra });
    response.end(body);
  };

  const broadcast = (): void => {
    const data = `data: ${JSON.stringify(feed.state())}\n\n`;
    for (const client of clients) client.write(data);
  };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (!localHost(request.headers.host)) return send(response, 403, 'text/plain; charset=utf-8', 'ralph serve answers only to localhost\n');
    if (request.method === 'GET' && url.pathname === '/') {
      const nonce = randomBytes(12).toString('base64url');
      const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
      return send(response, 200, 'text/html; charset=utf-8', renderPage({ nonce, token: control ? token : '' }), { 'content-security-policy': csp });
    }
    if (request.method === 'GET' && url.pathname === '/events') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      response.write(`retry: 2000\ndata: ${JSON.stringify(feed.state())}\n\n`);
      clients.add(response);
      request.on('close', () => clients.delete(response));
      return;
    }
    if (request.method === 'GET' && url.pathname === '/api/state') return send(response, 200, 'application/json', JSON.stringify(feed.state()));
    if (request.method === 'GET' && url.pathname.startsWith('/reports/')) {
      const name = decodeURIComponent(url.pathname.slice('/reports/'.length));
      if (!/^[\w.-]+\.(html|md)$/.test(name) || name.startsWith('.')) return send(response, 404, 'text/plain; charset=utf-8', 'no such report\n');
      try {
        const body = readFileSync(path.join(reportsDir(options.root), name));
        // Reports are self-contained: their own inline styles, no scripts, nothing fetched.
        const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
        return send(response, 200, name.endsWith('.html') ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8', body, { 'content-security-policy': csp });
      } catch {
        return send(response, 404, 'text/plain; charset=utf-8', 'no such report\n');
      }
    }
    if (request.method === 'POST' && url.pathname === '/api/control') return handlePost(request, response, 1024, (data) => steer(data));
    if (request.method === 'POST' && url.pathname === '/api/answer') return handlePost(request, response, 4 * ANSWER_MAX_CHARS, (data) => answer(data));
    return send(response, 404, 'text/plain; charset=utf-8', 'not found\n');
  });

  /** A POST of the page: loopback only, with the page's token, a small JSON body; `act` answers it. */
  const handlePost = (request: http.IncomingMessage, response: http.ServerResponse, limit: number, act: (data: Record<string, unknown>) => { status: number; body: unknown }): void => {
    const json = (status: number, data: unknown): void => send(response, status, 'application/json', JSON.stringify(data));
    if (!control) return json(403, { ok: false, message: 'this page is read-only (ralph serve listens beyond loopback)' });
    if (request.headers['x-ralph-token'] !== token) return json(403, { ok: false, message: 'missing or wrong page token: reload the page' });
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > limit) request.destroy();
    });
    request.on('end', () => {
      let data: unknown;
      try {
        data = JSON.parse(body);
      } catch {
        data = undefined;
      }
      const answer = act(typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {});
      json(answer.status, answer.body);
    });
  };

  const steer = (data: Record<string, unknown>): { status: number; body: unknown } => {
    const action = data.action;
    if (!ACTIONS.includes(action as ControlAction)) return { status: 400, body: { ok: false, message: `expected {"action": ${ACTIONS.map((name) => `"${name}"`).join(' | ')}}` } };
    const result = requestControl(options.root, action as ControlAction, { by: `ralph serve (PID ${process.pid})` });
    return { status: result.exitCode === 0 ? 200 : 409, body: { ok: result.exitCode === 0, message: result.message } };
  };

  // Answering needs no run in progress: the next run (or the running one) takes the task again.
  const answer = (data: Record<string, unknown>): { status: number; body: unknown } => {
    if (typeof data.task !== 'string' || typeof data.answer !== 'string') return { status: 400, body: { ok: false, message: 'expected {"task": "T003", "answer": "…"}' } };
    const result = answerQuestion(options.root, data.task, data.answer, { by: `ralph serve (PID ${process.pid})`, now: Date.now() });
    return { status: result.exitCode === 0 ? 200 : 409, body: { ok: result.exitCode === 0, message: result.message } };
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      port = (server.address() as AddressInfo).port;
      resolve();
    });
  });

  watch?.start();
  let lastSent = feed.changes;
  const timer = setInterval(() => {
    feed.poll();
    if (feed.changes !== lastSent) {
      lastSent = feed.changes;
      broadcast();
    }
  }, options.pollMs ?? 250);
  const keepAlive = setInterval(() => {
    for (const client of clients) client.write(': keep-alive\n\n');
  }, KEEPALIVE_MS);

  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shownHost}:${port}/`,
    control,
    async close() {
      clearInterval(timer);
      clearInterval(keepAlive);
      watch?.close();
      for (const client of clients) client.end();
      clients.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** The claims of the remote --remote names, else of the shown run's; none when neither is known. */
function remoteWatch(root: string, feed: LiveFeed, remote: NonNullable<ServeOptions['remote']>): RemoteWatch {
  return new RemoteWatch({
    root,
    deps: remote.deps,
    leaseMs: remote.leaseMs,
    ...(remote.everyMs ? { everyMs: remote.everyMs } : {}),
    target: () => {
      const session = feed.sessionRemote();
      const name = remote.name ?? session?.name;
      if (!name) return undefined;
      return session?.name === name ? { name, branch: session.branch } : { name };
    },
    changed: (view) => feed.setRemote(view),
  });
}
