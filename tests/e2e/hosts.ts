// Several hosts on one machine: a bare repository served by a real `git daemon` on 127.0.0.1 (receive-pack
// on), and one clone per host, each run by its own ralph process. The tests start and stop the server
// themselves (a stopped server is an unreachable remote).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Sandbox } from './helpers.ts';

export interface GitServer {
  port: number;
  url(name: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** `git daemon` exporting every repository under `base` (receive-pack on) on a free loopback port. */
export async function startGitServer(base: string): Promise<GitServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn('git', ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${base}`, '--listen=127.0.0.1', `--port=${port}`, base], { stdio: 'ignore' });
    const deadline = Date.now() + 20_000;
    while (!(await answers(port))) {
      if (Date.now() > deadline) throw new Error(`git daemon did not listen on ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  await start();
  return {
    port,
    url: (name) => `git://127.0.0.1:${port}/${name}`,
    start,
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      await exited;
      // git daemon serves each connection in a child of its own: wait until nothing answers.
      while (await answers(port)) await new Promise((resolve) => setTimeout(resolve, 25));
    },
  };
}

export interface Hosts {
  server: GitServer;
  /** The bare repository the server serves. */
  bare: string;
  hosts: Sandbox[];
  /** git in the bare repository (what the remote holds). */
  remote(args: string[]): string;
  stop(): Promise<void>;
}

/**
 * `count` hosts of the project in `box` (committed, on its branch): the repository goes to a bare one
 * served over git://, and each host is a clone of it with its own agent log and state, named host1…N.
 */
export async function makeHosts(box: Sandbox, count: number): Promise<Hosts> {
  const base = path.join(box.root, 'server');
  mkdirSync(base, { recursive: true });
  const bare = path.join(base, 'feature.git');
  execFileSync('git', ['clone', '-q', '--bare', box.repo, bare], { env: box.env });
  const server = await startGitServer(base);
  const branch = execFileSync('git', ['branch', '--show-current'], { cwd: box.repo, encoding: 'utf8' }).trim();
  const hosts: Sandbox[] = [];
  for (let index = 1; index <= count; index += 1) {
    const dir = path.join(box.root, `host${index}`);
    execFileSync('git', ['clone', '-q', '-b', branch, server.url('feature.git'), dir], { env: box.env });
    const log = (name: string) => path.join(box.root, `host${index}-${name}`);
    hosts.push({
      ...box,
      repo: dir,
      agentLog: log('agent.log'),
      pidsFile: log('agent.pids'),
      env: { ...box.env, FAKE_AGENT_LOG: log('agent.log'), FAKE_AGENT_STATE: log('agent.state'), FAKE_AGENT_PIDS: log('agent.pids'), RALPH_HOST_NAME: `host${index}` },
    });
  }
  return {
    server,
    bare,
    hosts,
    remote: (args) => execFileSync('git', args, { cwd: bare, encoding: 'utf8' }),
    stop: () => server.stop(),
  };
}
