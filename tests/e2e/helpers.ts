// Shared set-up for end-to-end tests: a temp git repo with its own HOME and fake CLIs on PATH,
// and ralph.ts started through this project's own tsx (never resolved from the temp folder).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSandboxBd } from '../support/bd-server.ts';

export const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TSX = path.join(PROJECT, 'node_modules', '.bin', 'tsx');
export const RALPH = path.join(PROJECT, 'ralph.ts');
/** The package's bin: ralph in one node process (tsx registered in it), for tests not about how ralph starts. */
export const RALPH_BIN = path.join(PROJECT, 'bin', 'ralph.mjs');
export const FAKES = path.join(PROJECT, 'tests', 'fakes');

export interface Sandbox {
  root: string;
  repo: string;
  home: string;
  bin: string;
  agentLog: string;
  bdLog: string;
  pidsFile: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

export interface SandboxOptions {
  branch?: string;
  /** Agent names to put on PATH as the fake agent (default: claude). */
  agents?: string[];
  bd?: boolean;
  /** Leave git identity unset. */
  noIdentity?: boolean;
}

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv): void {
  execFileSync('git', args, { cwd, env, stdio: 'ignore' });
}

/** A fresh repo on `branch` with one commit, a private HOME and a bin folder of fakes. */
export function makeSandbox(options: SandboxOptions = {}): Sandbox {
  const root = mkdtempSync(path.join(os.tmpdir(), 'ralph-e2e-'));
  const repo = path.join(root, 'repo');
  const home = path.join(root, 'home');
  const bin = path.join(root, 'bin');
  for (const dir of [repo, home, bin]) mkdirSync(dir, { recursive: true });
  for (const agent of options.agents ?? ['claude']) symlinkSync(path.join(FAKES, 'fake-agent.mjs'), path.join(bin, agent));
  if (options.bd !== false) writeSandboxBd(bin);
  // No automatic housekeeping after each commit, merge and fetch (git's `maintenance run --auto`, a process
  // each time: about 2,000 in the suite): these repositories live a few seconds.
  writeFileSync(path.join(home, '.gitconfig'), '[maintenance]\n\tauto = false\n');
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`,
    HOME: home,
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    // The suite's private temp folder (tests/support/global-setup.ts): what ralph and the fakes leave there is seen.
    TMPDIR: os.tmpdir(),
    IS_SANDBOX: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    FAKE_AGENT_LOG: path.join(root, 'agent.log'),
    FAKE_AGENT_STATE: path.join(root, 'agent.state'),
    FAKE_AGENT_PIDS: path.join(root, 'agent.pids'),
    FAKE_BD_LOG: path.join(root, 'bd.log'),
  };
  // The run's fake-bd server (tests/support/bd-server.ts), when the suite started one.
  if (process.env.FAKE_BD_SERVER) env.FAKE_BD_SERVER = process.env.FAKE_BD_SERVER;
  if (!options.noIdentity) {
    env.GIT_AUTHOR_NAME = 'Ralph Test';
    env.GIT_AUTHOR_EMAIL = 'ralph@example.test';
    env.GIT_COMMITTER_NAME = 'Ralph Test';
    env.GIT_COMMITTER_EMAIL = 'ralph@example.test';
  }
  const setupEnv = { ...env, GIT_AUTHOR_NAME: 'Ralph Test', GIT_AUTHOR_EMAIL: 'ralph@example.test', GIT_COMMITTER_NAME: 'Ralph Test', GIT_COMMITTER_EMAIL: 'ralph@example.test' };
  git(repo, ['init', '-q', '-b', options.branch ?? '001-ralph-automation'], setupEnv);
  writeFileSync(path.join(repo, 'README.md'), '# sample project\n');
  // Nothing of ralph's own here: ralph keeps .ralph/ and its lock out of git by itself (.git/info/exclude,
  // .ralph/.gitignore), and a project's .gitignore would hide it if it did not.
  writeFileSync(path.join(repo, '.gitignore'), '.beads/\n');
  git(repo, ['add', '-A'], setupEnv);
  git(repo, ['commit', '-q', '-m', 'initial'], setupEnv);
  return {
    root,
    repo,
    home,
    bin,
    agentLog: env.FAKE_AGENT_LOG!,
    bdLog: env.FAKE_BD_LOG!,
    pidsFile: env.FAKE_AGENT_PIDS!,
    env,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface SeedIssue {
  id: string;
  title: string;
  status?: string;
  priority?: number;
  issue_type?: string;
  parent?: string;
  dependencies?: Array<string | Record<string, string>>;
  assignee?: string;
  labels?: string[];
  /** The lease line (bd main): when the claim's lease ends. */
  lease_expires_at?: string;
  heartbeat_at?: string;
  close_reason?: string;
}

/** Writes the fake bd database (see tests/fakes/bd for the shape). */
export function seedBeads(sandbox: Sandbox, issues: SeedIssue[], prefix = 'ws'): void {
  mkdirSync(path.join(sandbox.repo, '.beads'), { recursive: true });
  writeFileSync(path.join(sandbox.repo, '.beads', 'fake-db.json'), JSON.stringify({ prefix, issues }, null, 2));
}

/** The standard ralph.sh epic: a closed clarify phase and `count` ready-in-order tasks. */
export function standardEpic(count = 3, clarifyStatus = 'closed'): SeedIssue[] {
  const issues: SeedIssue[] = [
    { id: 'ws-9w6', title: 'Feature: ralph-automation', issue_type: 'epic', priority: 1 },
    { id: 'ws-9w6.1', title: '[sp:02-clarify] Clarify the spec', parent: 'ws-9w6', status: clarifyStatus, priority: 1 },
  ];
  for (let index = 0; index < count; index += 1) {
    const id = `ws-9w6.${index + 2}`;
    issues.push({ id, title: `Task ${index + 1}: build part ${index + 1}`, parent: 'ws-9w6', priority: 2, dependencies: index === 0 ? [] : [`ws-9w6.${index + 1}`] });
  }
  return issues;
}

export function readBeads(sandbox: Sandbox): Array<SeedIssue & { status: string }> {
  return (JSON.parse(readFileSync(path.join(sandbox.repo, '.beads', 'fake-db.json'), 'utf8')) as { issues: Array<SeedIssue & { status: string }> }).issues;
}

export function scenario(sandbox: Sandbox, steps: unknown[]): void {
  const file = path.join(sandbox.root, 'scenario.json');
  writeFileSync(file, JSON.stringify({ steps }));
  sandbox.env.FAKE_AGENT_SCENARIO = file;
}

/** A step in which the agent closes a beads task and answers like the recorded success. */
export function closeStep(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { run: [['bd', 'close', id, '--reason', 'implemented by the fake agent', '--json']], replay: 'claude-ok.jsonl', ...extra };
}

export interface AgentCall {
  name: string;
  call: number;
  argv: string[];
  stdin: string;
  cwd: string;
  env: Record<string, string>;
  pid: number;
  /** When the fake started (ISO). */
  time: string;
}

export function agentCalls(sandbox: Sandbox): AgentCall[] {
  if (!existsSync(sandbox.agentLog)) return [];
  return readFileSync(sandbox.agentLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as AgentCall);
}

export function bdCalls(sandbox: Sandbox): string[][] {
  if (!existsSync(sandbox.bdLog)) return [];
  return readFileSync(sandbox.bdLog, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { argv: string[] }).argv);
}

export interface RalphResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts ralph in the sandbox repo as `node bin/ralph.mjs` (one process: the child is ralph itself, so a
 * signal or a SIGKILL reaches ralph, not tsx's wrapper); resolves when it exits. Tests about how ralph starts
 * (tests/e2e/cli.test.ts, start-anywhere.test.ts, recipes.test.ts) start it through tsx themselves.
 */
export function startRalph(sandbox: Sandbox, args: string[], extraEnv: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<RalphResult>; output: () => { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [RALPH_BIN, ...args], { cwd: sandbox.repo, env: { ...sandbox.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<RalphResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, output: () => ({ stdout, stderr }) };
}

export function runRalph(sandbox: Sandbox, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<RalphResult> {
  return startRalph(sandbox, args, extraEnv).done;
}

/**
 * How long any marker wait holds out at least. The deadline only turns a hang into a clear message: on the
 * shared 2-core machine running seven suites at once, steps that take a second alone took 20 s and more.
 */
export const MIN_WAIT_MS = 45_000;

/** Polls until `check` is true (or throws after `timeoutMs`, never less than MIN_WAIT_MS). */
export async function waitFor(check: () => boolean, timeoutMs = MIN_WAIT_MS, what = 'condition'): Promise<void> {
  const deadline = Date.now() + Math.max(timeoutMs, MIN_WAIT_MS);
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The PID of the real ralph process, read from its lock (started through tsx, tsx's wrapper is its parent). */
export const ralphPid = (box: Sandbox): number => Number(readFileSync(path.join(box.repo, '.ralph.lock'), 'utf8').split('\n')[0]);

/**
 * Sends a signal to the real ralph process, as `kill <pid>` with the PID `ralph status` shows. Not to tsx's
 * wrapper: it relays a signal, then SIGKILLs its child when the child does not confirm within 30 ms, which
 * happens on a loaded machine and would test tsx rather than ralph.
 */
export function signalRalph(box: Sandbox, signal: NodeJS.Signals): void {
  process.kill(ralphPid(box), signal);
}

export function agentPids(sandbox: Sandbox): number[] {
  if (!existsSync(sandbox.pidsFile)) return [];
  return readFileSync(sandbox.pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
}

/** Fast backoff for tests: retries take milliseconds. */
export const FAST = ['--retry-delay', '10ms', '--retry-max-delay', '50ms', '--kill-grace', '500ms'];
