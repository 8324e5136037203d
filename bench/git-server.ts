// A git remote for the benchmarks: a bare copy of a sandbox's repository served by a real `git daemon`
// (receive-pack on) on a free loopback port, as tests/e2e/hosts.ts does, but started through runTimed so an
// interrupted bench kills it with everything else it started; its --verbose log counts what it served.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { answers, freePort } from '../tests/e2e/hosts.ts';
import { runTimed } from './process.ts';
import { linesOf, type BenchSandbox } from './sandbox.ts';

export interface GitServer {
  url: string;
  /** The bare repository (what the remote holds). */
  bare: string;
  /** Stops the daemon (again: nothing); the fetches (upload-pack) and pushes (receive-pack) it served. */
  stop(): Promise<{ fetches: number; pushes: number }>;
}

/** Serves `sandbox.repo` (as `feature.git`) until stop(); at most `limitMs`. */
export async function serveRepository(sandbox: BenchSandbox, limitMs: number): Promise<GitServer> {
  const base = path.join(sandbox.root, 'server');
  mkdirSync(base, { recursive: true });
  const bare = path.join(base, 'feature.git');
  execFileSync('git', ['clone', '-q', '--bare', sandbox.repo, bare], { env: sandbox.env, stdio: 'ignore' });
  const port = await freePort();
  const log = path.join(sandbox.root, 'git-daemon.log');
  let pid: number | undefined;
  const args = ['daemon', '--verbose', '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${base}`, '--listen=127.0.0.1', `--port=${port}`, base];
  const daemon = runTimed('git', args, { cwd: base, env: sandbox.env, timeoutMs: limitMs, stderrFile: log, onStart: (started) => (pid = started) });
  const deadline = Date.now() + 20_000;
  while (!(await answers(port))) {
    if (Date.now() > deadline) throw new Error(`git daemon did not listen on port ${port}: ${linesOf(log).join(' / ')}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    url: `git://127.0.0.1:${port}/feature.git`,
    bare,
    async stop() {
      if (pid !== undefined) {
        // Its own process group (runTimed): the daemon and the child serving each connection.
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone already (its time limit)
        }
        pid = undefined;
      }
      await daemon;
      const requests = linesOf(log);
      return { fetches: requests.filter((line) => /Request upload-pack/.test(line)).length, pushes: requests.filter((line) => /Request receive-pack/.test(line)).length };
    },
  };
}
