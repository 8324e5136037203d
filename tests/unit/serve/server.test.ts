import { appendFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp.ts';
import { readRequest } from '../../../lib/control/channel.ts';
import { formatLockInfo } from '../../../lib/repo/lock.ts';
import { eventLine } from '../../../lib/progress/event-log.ts';
import type { PageState } from '../../../lib/serve/feed.ts';
import { startServer, type LiveServer } from '../../../lib/serve/server.ts';
import { answeredFor, recordAsked } from '../../../lib/questions/store.ts';
import { script, sessionStart, T0 } from '../progress/fixtures.ts';

const servers: LiveServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function repo(): string {
  const root = tempDir('ralph-serve-');
  mkdirSync(path.join(root, '.ralph', 'reports'), { recursive: true });
  return root;
}

const events = (root: string): string => path.join(root, '.ralph', 'events.jsonl');
const append = (root: string, count: number, from = 0, session = sessionStart.sessionId): void => {
  for (const [offset, event] of script.slice(from, from + count)) appendFileSync(events(root), eventLine(event, T0 + offset, session));
};

async function serve(root: string, host = '127.0.0.1'): Promise<LiveServer> {
  const server = await startServer({ root, host, port: 0, pollMs: 20 });
  servers.push(server);
  return server;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Reads server-sent events until `until` accepts one; resolves with every state received. `onFirst` runs
 * once the first state came: the stream is open, what changes after it is news to the page.
 */
function sse(url: string, until: (state: PageState) => boolean, onFirst?: () => void): Promise<PageState[]> {
  return new Promise((resolve, reject) => {
    const states: PageState[] = [];
    const req = http.get(`${url}events`, { agent: false }, (response) => {
      expect(response.headers['content-type']).toBe('text/event-stream');
      let buffer = '';
      response.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (!data) continue;
          const state = JSON.parse(data.slice(6)) as PageState;
          states.push(state);
          if (states.length === 1) onFirst?.();
          if (until(state)) {
            req.destroy();
            resolve(states);
          }
        }
      });
    });
    req.on('error', (error) => (states.length > 0 ? undefined : reject(error)));
  });
}

describe('ralph serve', () => {
  it('serves one self-contained page: inline style and script under a nonce CSP, nothing from elsewhere', async () => {
    const server = await serve(repo());
    const page = await request(server.url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(page.headers['content-security-policy']);
    const nonce = /'nonce-([\w-]+)'/.exec(csp)?.[1];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.body).toContain(`<script nonce="${nonce}">`);
    expect(page.body).toContain(`<style nonce="${nonce}">`);
    expect(page.body).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(page.body).not.toMatch(/\{\{[A-Z]+\}\}/);
    expect(page.body).toMatch(/<meta name="ralph-token" content="[\w-]{20,}">/);
    // A second load gets another nonce.
    expect((await request(server.url)).headers['content-security-policy']).not.toBe(csp);
  });

  it('streams the state: the run as it grows, then a new session', async () => {
    const root = repo();
    append(root, 2);
    const server = await serve(root);
    const initial = JSON.parse((await request(`${server.url}api/state`)).body) as PageState;
    expect(initial).toMatchObject({ repo: path.basename(root), alive: false, control: true, model: { session: { id: '20261122-020000' }, timeline: [{ iteration: 1, outcome: 'running' }] } });
    const states = await sse(server.url, (state) => state.model.end !== null, () => append(root, 20, 2));
    expect(states[0]!.model.end).toBeNull();
    expect(states.at(-1)!.model.timeline[0]).toMatchObject({ outcome: 'pass' });

    const next = sse(server.url, (state) => state.model.session?.id === 'second', () => appendFileSync(events(root), eventLine({ ...sessionStart, sessionId: 'second' }, T0 + 9e6, 'second')));
    const after = await next;
    expect(after[0]!.model.session?.id).toBe('20261122-020000');
    expect(after.at(-1)!.model).toMatchObject({ session: { id: 'second' }, timeline: [], end: null });
  });

  it('starts from the last session and follows a replaced events.jsonl', async () => {
    const root = repo();
    append(root, 20);
    appendFileSync(events(root), eventLine({ ...sessionStart, sessionId: 'later' }, T0 + 9e6, 'later'));
    const server = await serve(root);
    expect((JSON.parse((await request(`${server.url}api/state`)).body) as PageState).model.session?.id).toBe('later');
    const seen = await sse(
      server.url,
      (state) => state.model.session?.id === '20261122-020000',
      () => {
        writeFileSync(`${events(root)}.new`, '');
        for (const [offset, event] of script) appendFileSync(`${events(root)}.new`, eventLine(event, T0 + offset, sessionStart.sessionId));
        // A fresh file under the same name (a user cleaned up): the page starts over from it.
        renameSync(`${events(root)}.new`, events(root));
      },
    );
    expect(seen[0]!.model.session?.id).toBe('later');
    expect(seen.at(-1)!.model.end).toMatchObject({ status: 'completed' });
  });

  it('links and serves past reports; nothing outside .ralph/reports', async () => {
    const root = repo();
    writeFileSync(path.join(root, '.ralph', 'reports', '20261122-020000.html'), '<p>report</p>');
    writeFileSync(path.join(root, '.ralph', 'reports', '20261122-020000.md'), '# report');
    writeFileSync(path.join(root, '.ralph', 'secret.html'), 'no');
    const server = await serve(root);
    const state = JSON.parse((await request(`${server.url}api/state`)).body) as PageState;
    expect(state.reports).toEqual([{ session: '20261122-020000', html: 'reports/20261122-020000.html', markdown: 'reports/20261122-020000.md' }]);
    const html = await request(`${server.url}reports/20261122-020000.html`);
    expect([html.status, html.body, html.headers['content-type']]).toEqual([200, '<p>report</p>', 'text/html; charset=utf-8']);
    for (const bad of ['reports/..%2Fsecret.html', 'reports/../secret.html', 'reports/.x.html', 'reports/nope.html', 'reports/20261122-020000.json']) {
      expect((await request(`${server.url}${bad}`)).status, bad).toBe(404);
    }
  });

  it('control: needs the page token and a local Host; uses the same channel as ralph stop', async () => {
    const root = repo();
    const server = await serve(root);
    const token = /name="ralph-token" content="([\w-]+)"/.exec((await request(server.url)).body)![1]!;
    const post = (body: unknown, headers: Record<string, string> = { 'x-ralph-token': token }) => request(`${server.url}api/control`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    expect((await post({ action: 'pause' }, {})).status).toBe(403);
    expect((await post({ action: 'pause' }, { 'x-ralph-token': 'guess' })).status).toBe(403);
    expect((await post({ action: 'pause' }, { 'x-ralph-token': token, host: 'evil.example:80' })).status).toBe(403);
    expect((await request(server.url, { headers: { host: 'evil.example' } })).status).toBe(403);
    expect((await post({ action: 'explode' })).status).toBe(400);
    const none = await post({ action: 'pause' });
    expect([none.status, JSON.parse(none.body)]).toEqual([409, { ok: false, message: `no ralph run in progress in ${root}` }]);
    writeFileSync(path.join(root, '.ralph.lock'), formatLockInfo({ pid: process.pid, startedAt: new Date().toISOString(), branch: 'main' }));
    const paused = await post({ action: 'pause' });
    expect(paused.status).toBe(200);
    expect(readRequest(root, 'pause')?.request).toMatchObject({ kind: 'pause', by: `ralph serve (PID ${process.pid})`, target: { pid: process.pid } });
    expect((await post({ action: 'unpause' })).status).toBe(200);
    expect(existsSync(path.join(root, '.ralph', 'control', 'pause'))).toBe(false);
  });

  it('answers: the page lists the questions; POST /api/answer records an answer like ralph answer, with the same token rule', async () => {
    const root = repo();
    recordAsked(root, { source: 'speckit', scope: '001-demo', taskId: 'T002', taskTitle: 'Write greet()', question: '404 or 410?', iteration: 1, askedAt: new Date(T0).toISOString() });
    const server = await serve(root);
    const token = /name="ralph-token" content="([\w-]+)"/.exec((await request(server.url)).body)![1]!;
    const post = (body: unknown, headers: Record<string, string> = { 'x-ralph-token': token }) => request(`${server.url}api/answer`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const state = JSON.parse((await request(`${server.url}api/state`)).body) as PageState;
    expect(state.questions).toMatchObject([{ taskId: 'T002', question: '404 or 410?', scope: '001-demo' }]);
    expect((await post({ task: 'T002', answer: '410' }, {})).status).toBe(403);
    expect((await post({ task: 'T002', answer: '410' }, { 'x-ralph-token': token, host: 'evil.example' })).status).toBe(403);
    expect((await post({ task: 'T002' })).status).toBe(400);
    const unknown = await post({ task: 'T999', answer: '410' });
    expect([unknown.status, JSON.parse(unknown.body).ok]).toEqual([409, false]);
    // No run needs to be alive: the next run (or the running one) takes the task again.
    const answered = await post({ task: '001-demo/T002', answer: '410' });
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body).message).toMatch(/^answered T002: "404 or 410\?" → "410"/);
    expect(answeredFor(root, { source: 'speckit', scope: '001-demo', taskId: 'T002' })).toMatchObject([{ answer: '410', answeredBy: `ralph serve (PID ${process.pid})` }]);
    await sse(server.url, (next) => next.questions[0]?.answer === '410');
  });

  it('beyond loopback: read-only, no token on the page, control refused', async () => {
    const server = await serve(repo(), '0.0.0.0');
    expect(server.control).toBe(false);
    const url = server.url.replace('0.0.0.0', '127.0.0.1');
    expect((await request(url)).body).toContain('<meta name="ralph-token" content="">');
    expect((await request(`${url}api/control`, { method: 'POST', body: '{"action":"stop"}' })).status).toBe(403);
    expect((await request(`${url}api/answer`, { method: 'POST', body: '{"task":"T002","answer":"410"}' })).status).toBe(403);
  });

  it('a taken port is an error the command can name', async () => {
    const server = await serve(repo());
    const port = Number(new URL(server.url).port);
    await expect(startServer({ root: repo(), host: '127.0.0.1', port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
