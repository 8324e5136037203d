// A local webhook receiver for tests: records every POST (time, headers, body) and answers as told.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown> | undefined;
}

/** How to answer the n-th request (0-based) with this body: a status, or 'hang' to never answer. */
export type Answer = (request: Received, index: number, sameBodyBefore: number) => number | 'hang';

export interface Webhook {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function startWebhook(answer: Answer = () => 200): Promise<Webhook> {
  const received: Received[] = [];
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      const entry: Received = { at: Date.now(), path: request.url ?? '/', headers: request.headers, body, json };
      const before = received.filter((item) => item.body === body).length;
      received.push(entry);
      const verdict = answer(entry, received.length - 1, before);
      if (verdict === 'hang') {
        hanging.push(response);
        return;
      }
      response.writeHead(verdict, { 'content-type': 'text/plain' });
      response.end(verdict < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    async close() {
      for (const response of hanging) response.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** The generic-format messages received, in order, as parsed JSON. */
export function events(hook: Webhook): Array<Record<string, unknown>> {
  return hook.received.map((item) => item.json ?? {});
}
