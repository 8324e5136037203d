// Headless Chromium driven over the DevTools protocol through a pipe (--remote-debugging-pipe: commands
// on fd 3, answers on fd 4, each a JSON message ended by NUL): enough to open a page, read its DOM and
// screenshot it while it keeps running, with no WebSocket client and no dependency.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

interface Message {
  id?: number;
  result?: Record<string, unknown>;
  error?: { message: string };
  method?: string;
  sessionId?: string;
}

export interface Page {
  /** Evaluates an expression in the page and returns its value (JSON-serialisable). */
  evaluate<T>(expression: string): Promise<T>;
  /** A PNG of the viewport. */
  screenshot(): Promise<Buffer>;
}

export interface Browser {
  open(url: string, size: { width: number; height: number }): Promise<Page>;
  /** Kills Chromium and every process it started. */
  close(): void;
  /** Chromium's stderr so far, for failure messages. */
  log(): string;
}

export function launchChromium(bin: string, profileDir: string): Browser {
  const tmp = path.join(profileDir, 'chromium-tmp');
  const home = path.join(profileDir, 'chromium-home');
  mkdirSync(tmp, { recursive: true });
  mkdirSync(home, { recursive: true });
  const child: ChildProcess = spawn(
    bin,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--hide-scrollbars',
      '--force-device-scale-factor=1',
      `--user-data-dir=${path.join(profileDir, 'profile')}`,
      '--remote-debugging-pipe',
      'about:blank',
    ],
    // Its own process group, so close() ends the renderer and helper processes too; its own TMPDIR (a killed
    // Chromium leaves its shared-memory files behind) and HOME (it writes ~/.config and ~/.cache).
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, TMPDIR: tmp, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache') } },
  );
  const input = child.stdio[3] as Writable;
  const output = child.stdio[4] as Readable;
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let nextId = 0;
  const waiting = new Map<number, { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void }>();
  let buffer = Buffer.alloc(0);
  output.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (let end = buffer.indexOf(0); end !== -1; end = buffer.indexOf(0)) {
      const message = JSON.parse(buffer.subarray(0, end).toString('utf8')) as Message;
      buffer = buffer.subarray(end + 1);
      if (message.id === undefined) continue;
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) pending?.reject(new Error(`chromium: ${message.error.message}`));
      else pending?.resolve(message.result ?? {});
    }
  });
  child.on('exit', (code, signal) => {
    for (const pending of waiting.values()) pending.reject(new Error(`chromium exited (${code ?? signal}): ${stderr.slice(-1500)}`));
    waiting.clear();
  });
  input.on('error', () => undefined);

  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      nextId += 1;
      waiting.set(nextId, { resolve, reject });
      input.write(`${JSON.stringify({ id: nextId, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });

  return {
    async open(url, size) {
      const { targetId } = (await send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
      const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
      await send('Emulation.setDeviceMetricsOverride', { width: size.width, height: size.height, deviceScaleFactor: 1, mobile: false }, sessionId);
      await send('Page.enable', {}, sessionId);
      await send('Page.navigate', { url }, sessionId);
      return {
        async evaluate<T>(expression: string): Promise<T> {
          const answer = (await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId)) as { result: { value?: T }; exceptionDetails?: { text: string; exception?: { description?: string } } };
          if (answer.exceptionDetails) throw new Error(`in the page: ${answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text}`);
          return answer.result.value as T;
        },
        async screenshot() {
          const { data } = (await send('Page.captureScreenshot', { format: 'png' }, sessionId)) as { data: string };
          return Buffer.from(data, 'base64');
        },
      };
    },
    close() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    },
    log: () => stderr,
  };
}
