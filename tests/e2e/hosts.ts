// Several hosts on one machine: a bare repository served on 127.0.0.1 by a real `git daemon` (git://,
// receive-pack on) or a real `sshd` of the test's own (ssh://, its own host key, user key and
// AuthorizedKeysFile), or reached by its path; and one clone per host, each run by its own ralph process.
// The tests start and stop the servers themselves (a stopped server is an unreachable remote).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { needsTool } from '../support/needs-tool.ts';
import type { Sandbox } from './helpers.ts';

/** How the hosts reach the bare repository. */
export type Transport = 'git' | 'ssh' | 'path';
export const TRANSPORTS: readonly Transport[] = ['git', 'ssh', 'path'];

/** sshd (openssh-server): in /usr/sbin, which a user's PATH may lack. */
export const sshd = needsTool('sshd', { apt: 'openssh-server openssh-client', env: { ...process.env, PATH: `${process.env.PATH ?? ''}${path.delimiter}/usr/sbin` } });

export interface GitServer {
  port: number;
  url(name: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A port nothing listens on now, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
/**
 * Stops a server the tests started (git daemon, sshd): SIGTERM, its exit, then until nothing answers on its
 * port, since both serve each connection under way in a process of its own.
 */
async function stopServer(running: ChildProcess | undefined, port: number): Promise<void> {
  if (!running || running.exitCode !== null) return;
  const exited = new Promise((resolve) => running.once('exit', resolve));
  running.kill('SIGTERM');
  await exited;
  while (await answers(port)) await new Promise((resolve) => setTimeout(resolve, 25));
}

export async function answers(port: number): Promise<boolean> {
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
      await stopServer(running, port);
    },
  };
}

export interface SshServer extends GitServer {
  /** GIT_SSH_COMMAND for git (and ralph, and its git) to reach this server with the test's key. */
  env: { GIT_SSH_COMMAND: string };
}

/**
 * An `sshd` of the test's own on a free loopback port: its own config, host key, user key and
 * AuthorizedKeysFile under `dir`, the current user let in with the key only. `url(name)` is `base/name`.
 */
export async function startSshServer(dir: string, base: string): Promise<SshServer> {
  mkdirSync(dir, { recursive: true });
  const keygen = (file: string): void => void (existsSync(file) || execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]));
  keygen(path.join(dir, 'host_key'));
  keygen(path.join(dir, 'user_key'));
  const authorized = path.join(dir, 'authorized_keys');
  writeFileSync(authorized, readFileSync(path.join(dir, 'user_key.pub')));
  chmodSync(authorized, 0o600);
  // sshd refuses to start without its privilege separation folder (made by the package's service, not by sshd).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  writeFileSync(config, [`Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${path.join(dir, 'host_key')}`, `AuthorizedKeysFile ${authorized}`, `PidFile ${path.join(dir, 'sshd.pid')}`, 'StrictModes no', 'UsePAM no', 'PermitRootLogin prohibit-password', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'LogLevel ERROR', ''].join('\n'));
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn(sshd.bin(), ['-D', '-e', '-f', config], { stdio: 'ignore' });
    const deadline = Date.now() + 20_000;
    while (!(await answers(port))) {
      if (child.exitCode !== null) throw new Error(`sshd exited with ${child.exitCode} (sshd -D -e -f ${config})`);
      if (Date.now() > deadline) throw new Error(`sshd did not listen on ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  await start();
  const user = os.userInfo().username;
  return {
    port,
    url: (name) => `ssh://${user}@127.0.0.1${path.join(base, name)}`,
    env: { GIT_SSH_COMMAND: `ssh -i ${path.join(dir, 'user_key')} -p ${port} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes` },
    start,
    async stop() {
      const running = child;
      child = undefined;
      await stopServer(running, port);
    },
  };
}

/** No server: the hosts reach the bare repository by its path ("stopped" is not a state a path has). */
function pathServer(base: string): GitServer {
  return { port: 0, url: (name) => path.join(base, name), start: async () => undefined, stop: async () => undefined };
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
 * served over `transport` (git:// by default), and each host is a clone of it with its own agent log and
 * state, named host1…N (over ssh, with GIT_SSH_COMMAND in its environment).
 */
export async function makeHosts(box: Sandbox, count: number, transport: Transport = 'git'): Promise<Hosts> {
  const base = path.join(box.root, 'server');
  mkdirSync(base, { recursive: true });
  const bare = path.join(base, 'feature.git');
  execFileSync('git', ['clone', '-q', '--bare', box.repo, bare], { env: box.env });
  const server = transport === 'git' ? await startGitServer(base) : transport === 'ssh' ? await startSshServer(path.join(box.root, 'sshd'), base) : pathServer(base);
  const reach = 'env' in server ? (server as SshServer).env : {};
  const branch = execFileSync('git', ['branch', '--show-current'], { cwd: box.repo, encoding: 'utf8' }).trim();
  const hosts: Sandbox[] = [];
  for (let index = 1; index <= count; index += 1) {
    const dir = path.join(box.root, `host${index}`);
    execFileSync('git', ['clone', '-q', '-b', branch, server.url('feature.git'), dir], { env: { ...box.env, ...reach } });
    const log = (name: string) => path.join(box.root, `host${index}-${name}`);
    hosts.push({
      ...box,
      repo: dir,
      agentLog: log('agent.log'),
      pidsFile: log('agent.pids'),
      env: { ...box.env, ...reach, FAKE_AGENT_LOG: log('agent.log'), FAKE_AGENT_STATE: log('agent.state'), FAKE_AGENT_PIDS: log('agent.pids'), RALPH_HOST_NAME: `host${index}` },
    });
  }
  return {
    server,
    bare,
    hosts,
    remote: (args) => execFileSync('git', args, { cwd: bare, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    stop: () => server.stop(),
  };
}

/**
 * beads 1.x in server mode for the project in `box`: .beads/metadata.json (committed) names one dolt server,
 * played by the fake bd's FAKE_BD_SERVERS folder, whose database `ws` holds `issues`. Every host made from
 * `box` afterwards talks to it. Returns the database's seed file, which the fake keeps current.
 */
export function beadsServer(box: Sandbox, issues: unknown[]): string {
  const servers = path.join(box.root, 'dolt');
  const database = path.join(servers, '127.0.0.1_3307', 'ws');
  mkdirSync(database, { recursive: true });
  writeFileSync(path.join(database, 'fake-db.json'), JSON.stringify({ prefix: 'ws', issues }));
  mkdirSync(path.join(box.repo, '.beads'), { recursive: true });
  writeFileSync(path.join(box.repo, '.beads', 'metadata.json'), JSON.stringify({ database: 'dolt', backend: 'dolt', dolt_mode: 'server', dolt_server_host: '127.0.0.1', dolt_server_port: 3307, dolt_database: 'ws' }));
  execFileSync('git', ['add', '-f', '.beads/metadata.json'], { cwd: box.repo, env: box.env });
  execFileSync('git', ['commit', '-qm', 'beads in server mode'], { cwd: box.repo, env: box.env });
  box.env.FAKE_BD_SERVERS = servers;
  return path.join(database, 'fake-db.json');
}

/** The standard epic with a closed clarify phase and `count` independent tasks ws-9w6.2…. */
export function independentEpic(count: number): Array<Record<string, unknown>> {
  return [
    { id: 'ws-9w6', title: 'Feature: ralph-automation', issue_type: 'epic', priority: 1 },
    { id: 'ws-9w6.1', title: '[sp:02-clarify] Clarify the spec', parent: 'ws-9w6', status: 'closed', priority: 1 },
    ...Array.from({ length: count }, (_, index) => ({ id: `ws-9w6.${index + 2}`, title: `Task ${index + 1}: build part ${index + 1}`, parent: 'ws-9w6', priority: 2 })),
  ];
}
