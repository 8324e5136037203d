// A beads project in a temp folder, driven by the fake bd (tests/fakes/bd) in one of its versions, with
// every bd call ralph makes counted.
import { execFile, execFileSync } from 'node:child_process';
import { resolveConfig } from '../../../../lib/config/index.ts';
import type { Deps, ExecOptions, ExecResult } from '../../../../lib/deps.ts';
import type { SourceContext } from '../../../../lib/sources/types.ts';
import path from 'node:path';
import { fakeBdEnv, seedBeads, type FakeBdVersion, type SeedIssue } from '../../../fakes/bd-seed.ts';
import { writeSandboxBd } from '../../../support/bd-server.ts';
import { tempDir } from '../../../support/temp.ts';

export interface BeadsProject {
  root: string;
  ctx: SourceContext & { warnings: string[] };
  /** ralph's bd calls so far (argv without the trailing --json). */
  calls: string[][];
  /** Runs bd as another process would (not counted). */
  other(...args: string[]): unknown;
}

function run(args: readonly string[], options: ExecOptions): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile('bd', [...args], { cwd: options.cwd, env: options.env, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      resolve({ exitCode: error ? (typeof code === 'number' ? code : 1) : 0, stdout, stderr });
    });
  });
}

/** The standard epic: a closed clarify phase, tasks .2 → .3 → .4 in a chain. */
export function standardIssues(extra: SeedIssue[] = []): SeedIssue[] {
  return [
    { id: 'ws-ep', title: 'Feature: demo', issue_type: 'epic', priority: 1 },
    { id: 'ws-ep.1', title: '[sp:02-clarify] Clarify', status: 'closed' },
    { id: 'ws-ep.2', title: 'Task A' },
    { id: 'ws-ep.3', title: 'Task B', dependencies: ['ws-ep.2'] },
    { id: 'ws-ep.4', title: 'Task C', dependencies: ['ws-ep.3'] },
    ...extra,
  ];
}

/** The standard epic plus `extra` issues, in a project of its own. */
export function beadsProject(version: FakeBdVersion, extra: SeedIssue[] = [], options: { epic?: string } = {}): BeadsProject {
  const root = tempDir('ralph-beads-');
  seedBeads(root, { prefix: 'ws', issues: standardIssues(extra) });
  return projectAt(root, version, options);
}

/**
 * ralph's view of the beads project at `root` (its .beads/ already made): the fake bd through the run's
 * server, as in the e2e sandboxes (tests/support/bd-server.ts). `env` goes to every bd call (e.g.
 * FAKE_BD_SERVERS for server mode); `host` is the --remote host id.
 */
export function projectAt(root: string, version: FakeBdVersion, options: { epic?: string; env?: Record<string, string>; host?: string; now?: () => number } = {}): BeadsProject {
  const bin = tempDir('ralph-beads-bin-');
  writeSandboxBd(bin);
  const env = fakeBdEnv({ FAKE_BD_VERSION: version, FAKE_BD_SERVER: process.env.FAKE_BD_SERVER, ...options.env });
  env.PATH = `${bin}${path.delimiter}${env.PATH}`;
  const calls: string[][] = [];
  const sink = { write: () => true };
  const deps: Deps = {
    cwd: root,
    env,
    now: options.now ?? (() => Date.now()),
    sleep: async () => {},
    random: () => 0.5,
    stdout: sink,
    stderr: sink,
    exec: async (bin, args, opts) => {
      calls.push(args.filter((arg) => arg !== '--json'));
      return run(args, opts);
    },
  };
  const config = resolveConfig({ flags: new Map(), env: {}, file: {} });
  if (options.epic) config.epic = options.epic;
  const warnings: string[] = [];
  return {
    root,
    ctx: { root, branch: '001-demo', config, deps, warn: (message) => warnings.push(message), warnings, ...(options.host === undefined ? {} : { host: options.host }) },
    calls,
    other: (...args) => JSON.parse(execFileSync(path.join(bin, 'bd'), [...args, '--json'], { cwd: root, env, encoding: 'utf8' }) || 'null'),
  };
}
