import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { post } from '../../../lib/notify/post.ts';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A local server answering `status` ('hang': never), recording what it got. */
async function serve(status: number | 'hang'): Promise<{ url: string; got: Array<{ headers: http.IncomingHttpHeaders; body: string }> }> {
  const got: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      got.push({ headers: request.headers, body });
      if (status !== 'hang') response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://user:p%40ss@127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

const options = (timeoutMs = 2000, signal = new AbortController().signal) => ({ timeoutMs, signal });

describe('post', () => {
  it('sends the body with its headers and basic auth from the URL; 2xx is ok', async () => {
    const { url, got } = await serve(204);
    expect(await post(url, '{"a":1}', { 'content-type': 'application/json' }, options())).toEqual({ ok: true, status: 204 });
    expect(got[0]).toMatchObject({ body: '{"a":1}', headers: { 'content-type': 'application/json', 'user-agent': 'ralph', authorization: `Basic ${Buffer.from('user:p@ss').toString('base64')}` } });
  });

  it('a 500 is a failure with its status', async () => {
    const { url } = await serve(500);
    expect(await post(url, '{}', {}, options())).toEqual({ ok: false, status: 500, error: 'HTTP 500' });
  });

  it('a server that never answers times out', async () => {
    const { url } = await serve('hang');
    expect(await post(url, '{}', {}, options(150))).toEqual({ ok: false, error: 'timed out after 0.2s' });
  });

  it('a refused connection and an abort are data, not exceptions', async () => {
    const { url } = await serve(200);
    const port = new URL(url).port;
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    expect(await post(`http://127.0.0.1:${port}/`, '{}', {}, options())).toEqual({ ok: false, error: 'ECONNREFUSED' });
    const hang = await serve('hang');
    const abort = new AbortController();
    const arrived = new Promise((resolve) => server!.once('request', resolve));
    const pending = post(hang.url, '{}', {}, options(10_000, abort.signal));
    // Abandoned while the server holds the request, not before it was sent.
    await arrived;
    abort.abort();
    expect(await pending).toEqual({ ok: false, error: 'abandoned at exit' });
    expect(await post('not a url', '{}', {}, options())).toEqual({ ok: false, error: 'invalid URL' });
  });
});
