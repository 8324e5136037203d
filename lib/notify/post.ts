// One HTTP POST with a hard time limit, as data: never throws, never outlives its timeout or signal.
import http from 'node:http';
import https from 'node:https';

export interface PostResult {
  ok: boolean;
  status?: number;
  /** Why it failed: `HTTP 500`, `timed out after 5s`, `ECONNREFUSED`. */
  error?: string;
}

export type Post = (url: string, body: string, headers: Record<string, string>, options: { timeoutMs: number; signal: AbortSignal }) => Promise<PostResult>;

/** POSTs `body` to `url`; resolves once the answer's status is known (its body is not awaited). */
export const post: Post = (url, body, headers, options) =>
  new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ ok: false, error: 'invalid URL' });
      return;
    }
    const auth = target.username ? `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}` : undefined;
    target.username = '';
    target.password = '';
    const client = target.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (result: PostResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'ralph', ...(auth ? { authorization: auth } : {}) },
      // A fresh connection per message: nothing keeps the process alive after the run.
      agent: false,
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ ok: false, error: `timed out after ${Math.round(options.timeoutMs / 100) / 10}s` });
    }, options.timeoutMs);
    const onAbort = (): void => {
      request.destroy();
      finish({ ok: false, error: 'abandoned at exit' });
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    request.on('response', (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      finish(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` });
    });
    request.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, error: error.code ?? error.message }));
    request.end(body);
    if (options.signal.aborted) onAbort();
  });
