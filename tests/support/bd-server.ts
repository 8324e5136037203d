// The run's fake-bd server (tests/fakes/bd-server.mjs): started once by the global setup, which hands its
// address to the test workers as FAKE_BD_SERVER; makeSandbox passes it on to what runs in a sandbox, whose
// `bd` (writeSandboxBd) then asks the server instead of starting node.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FAKES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fakes');

export interface BdServer {
  /** `<port>:<token>`, the value of FAKE_BD_SERVER. */
  address: string;
  stop(): Promise<void>;
}

export async function startBdServer(env: NodeJS.ProcessEnv): Promise<BdServer> {
  const token = randomBytes(16).toString('hex');
  // The token goes in the environment, not the command line, which every user can read.
  const child: ChildProcess = spawn(process.execPath, [path.join(FAKES, 'bd-server.mjs')], { env: { ...env, FAKE_BD_SERVER_TOKEN: token }, stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = /^(\d+)\n/.exec(text);
      if (line) resolve(Number(line[1]));
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the fake bd server exited (${code}) before it listened`)));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    address: `${port}:${token}`,
    async stop() {
      child.stdin!.end();
      await exited;
    },
  };
}

const quoted = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** A sandbox's `bd`: the fake, through the run's server when there is one (tests/fakes/bd-client.bash). */
export function writeSandboxBd(bin: string): void {
  const lines = [
    // -p: no BASH_ENV, ENV, SHELLOPTS or exported functions, as the real bd (a Go binary) reads none.
    '#!/bin/bash -p',
    '# The fake bd (tests/fakes/bd), asked through the test run\'s bd server when there is one.',
    `FAKE_BD_SCRIPT=${quoted(path.join(FAKES, 'bd'))}`,
    `. ${quoted(path.join(FAKES, 'bd-client.bash'))}`,
    '',
  ];
  writeFileSync(path.join(bin, 'bd'), lines.join('\n'), { mode: 0o755 });
}
