// Every `npm test` leaves the machine as it found it. Before the suite: a private temp folder becomes
// TMPDIR for the test workers (and, through makeSandbox, for every ralph, agent and helper they start), an
// empty folder inside it becomes their HOME, and the checkout's `git status` is noted. After it: no
// process that belongs to the run is left, the temp folder and that HOME are empty, and `git status` is
// unchanged. Anything left over is listed and the run fails; the processes are then killed and the folder
// removed, so even a failing run cleans up after itself.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBdServer, writeSandboxBd } from './bd-server.ts';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** tsx's compile cache and IPC sockets (`tsx-<uid>/`): its own, not a test's leftover. */
const TOOL_CACHES = /^tsx-\d+$/;
/** The run's own fake-bd client (tests/fakes/bd-seed.ts fakeBdClient): made here, not a test's leftover. */
const BD_CLIENT = 'fake-bd-client';
/** The run's HOME, inside the temp folder: what a test writes to its home directory shows up here. */
const HOME = 'home';
/** How long processes get to finish exiting (a tree kill in flight, a reaped agent) before they count. */
const PROCESS_GRACE_MS = 5000;

interface Leftover {
  pid: number;
  command: string;
}

function read(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Live processes (not zombies) that mention `marker` in their environment, command line or cwd, except this one. */
export function processesOf(marker: string, exclude: Set<number>): Leftover[] {
  const found: Leftover[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || exclude.has(pid)) continue;
    const stat = read(`/proc/${pid}/stat`);
    if (!stat || stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // gone, or not ours to read
    }
    const command = read(`/proc/${pid}/cmdline`).split('\0').join(' ').trim();
    if (cwd.startsWith(marker) || command.includes(marker) || read(`/proc/${pid}/environ`).includes(marker)) found.push({ pid, command: command || `(pid ${pid})` });
  }
  return found;
}

/** The vitest workers (this process's own children running vitest) are not leftovers. */
function ownWorkers(): Set<number> {
  const workers = new Set<number>([process.pid]);
  for (const name of readdirSync('/proc')) {
    const stat = read(`/proc/${name}/stat`);
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === process.pid && read(`/proc/${name}/cmdline`).includes('vitest')) workers.add(Number(name));
  }
  return workers;
}

async function settledProcesses(marker: string): Promise<Leftover[]> {
  const deadline = Date.now() + PROCESS_GRACE_MS;
  for (;;) {
    const left = processesOf(marker, ownWorkers());
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function gitStatus(): string[] {
  try {
    const out = execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: PROJECT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.split('\n').filter((line) => line && !line.startsWith('!! node_modules/'));
  } catch {
    return []; // not a git checkout (an unpacked tarball): nothing to compare
  }
}

/**
 * Where the run's temp folder goes: RALPH_TEST_TMP when set, else /dev/shm when it is a writable memory file
 * system with room (Linux), else the system's temp folder. In memory, the sandboxes' git repositories and
 * ralph's fsync'd state files cost no disk I/O: about 7% of the suite's CPU (system time 14.5 s → 10.9 s over
 * the parallel and beads e2e files), and less waiting on a loaded disk.
 */
function tempBase(): string {
  if (process.env.RALPH_TEST_TMP) return process.env.RALPH_TEST_TMP;
  try {
    accessSync('/dev/shm', constants.W_OK);
    const room = statfsSync('/dev/shm');
    if (room.bavail * room.bsize > 2 * 1024 ** 3) return '/dev/shm';
  } catch {
    // no /dev/shm here (macOS), or not ours to write
  }
  return os.tmpdir();
}

export default async function setup(): Promise<() => Promise<void>> {
  const root = mkdtempSync(path.join(tempBase(), 'ralph-suite-'));
  const outside = { TMPDIR: process.env.TMPDIR, HOME: process.env.HOME };
  // The HOME the suite was started in, for what is found from it: npm's cache (the packed-package test).
  if (outside.HOME) process.env.RALPH_TEST_OUTSIDE_HOME = outside.HOME;
  process.env.TMPDIR = root;
  mkdirSync(path.join(root, HOME));
  process.env.HOME = path.join(root, HOME);
  const gitBefore = new Set(gitStatus());
  // ralph's compiled modules (bin/compile-cache.mjs), built once here by a start of ralph (esbuild's service
  // goes with it): in a clean clone the first starts of six workers would otherwise each build them at once
  // (about a second of CPU each) until one is in place.
  execFileSync(process.execPath, [path.join(PROJECT, 'bin', 'ralph.mjs'), '--version'], { stdio: 'ignore', timeout: 60_000 });
  // The fake bd for the sandboxes: one server for the run (tests/support/bd-server.ts).
  const bdServer = await startBdServer({ ...process.env });
  process.env.FAKE_BD_SERVER = bdServer.address;
  // The fake bd as the sandboxes call it, for the tests that call it themselves (the fake's own tests).
  mkdirSync(path.join(root, BD_CLIENT));
  writeSandboxBd(path.join(root, BD_CLIENT));
  process.env.FAKE_BD_CLIENT = path.join(root, BD_CLIENT, 'bd');
  // Interrupted (Ctrl+C), vitest exits without the teardown below: still stop what the tests started and
  // remove the folder, quietly, as the process goes.
  const onInterrupt = (): void => {
    for (const item of processesOf(root, new Set([process.pid]))) {
      try {
        process.kill(item.pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onInterrupt);

  return async () => {
    process.off('exit', onInterrupt);
    await bdServer.stop();
    delete process.env.FAKE_BD_SERVER;
    delete process.env.FAKE_BD_CLIENT;
    delete process.env.RALPH_TEST_OUTSIDE_HOME;
    for (const [key, value] of Object.entries(outside)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    const problems: string[] = [];
    const processes = await settledProcesses(root);
    if (processes.length > 0) {
      problems.push(`${processes.length} process(es) started by the tests still run (now killed):`, ...processes.map((item) => `  ${item.pid} ${item.command.slice(0, 200)}`));
      for (const item of processes) {
        try {
          process.kill(item.pid, 'SIGKILL');
        } catch {
          // exited meanwhile
        }
      }
    }
    const files = readdirSync(root).filter((name) => !TOOL_CACHES.test(name) && name !== HOME && name !== BD_CLIENT);
    // What each one holds (a few paths) names the test that left it: its sandbox's files say what ran there.
    const holds = (name: string): string => {
      try {
        const inside = readdirSync(path.join(root, name), { recursive: true, encoding: 'utf8' }).sort();
        return inside.length > 0 ? ` (holds ${inside.length}: ${inside.slice(0, 6).join(', ')}${inside.length > 6 ? ', …' : ''})` : ' (empty)';
      } catch {
        return '';
      }
    };
    if (files.length > 0) problems.push(`${files.length} temp file(s) or folder(s) left in ${root} (now removed):`, ...files.sort().map((name) => `  ${name}${holds(name)}`));
    const home = readdirSync(path.join(root, HOME), { recursive: true, encoding: 'utf8' });
    if (home.length > 0) problems.push(`the tests wrote into the home directory (HOME=${path.join(root, HOME)}; now removed):`, ...home.sort().slice(0, 20).map((name) => `  ~/${name}`));
    rmSync(root, { recursive: true, force: true });
    const changed = gitStatus().filter((line) => !gitBefore.has(line));
    if (changed.length > 0) problems.push(`the tests changed the checkout ${PROJECT} (git status --ignored):`, ...changed.map((line) => `  ${line}`));
    if (problems.length > 0) {
      console.error(['', '✗ the test run did not leave the machine as it found it:', ...problems, ''].join('\n'));
      process.exitCode = 1;
    }
  };
}
