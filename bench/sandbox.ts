// Benchmark sandboxes: the e2e tests' temp git repo (own HOME, fakes on PATH), with the bench's own
// shell agent as `claude` and a timing shim in front of the fake bd.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAKES, makeSandbox, PROJECT, RALPH as PROJECT_RALPH, type Sandbox } from '../tests/e2e/helpers.ts';

export { PROJECT, TSX, seedBeads, standardEpic, type Sandbox } from '../tests/e2e/helpers.ts';

/** The ralph.ts under test; BENCH_RALPH points at another checkout's to compare (this project's tsx runs it). */
export const RALPH = process.env.BENCH_RALPH ? path.resolve(process.env.BENCH_RALPH) : PROJECT_RALPH;
/** That checkout's package bin, what `ralph.ts` run as a program (its shebang) and `npm link` start. */
export const RALPH_BIN = path.join(path.dirname(RALPH), 'bin', 'ralph.mjs');

export const BENCH = path.dirname(fileURLToPath(import.meta.url));
export const AGENTS = path.join(BENCH, 'agents');
const RECORDING = path.join(PROJECT, 'tests', 'fixtures', 'recordings', 'claude-ok.jsonl');

const open = new Set<() => void>();

/** Removes every sandbox not cleaned up yet (bench interrupted or out of time). */
export function removeSandboxes(): void {
  for (const cleanup of open) cleanup();
  open.clear();
}

export interface BenchSandbox extends Sandbox {
  agentTimes: string;
  bdTimes: string;
}

/**
 * A sandbox whose `claude` is `agent` (a script in bench/agents, or an absolute path) and whose `bd` is the
 * fake bd behind the timing shim. The agent answers with claude-ok.jsonl, claiming completion only when
 * it finished the last task (so a bash loop stops at the right time).
 */
export function benchSandbox(agent: string, branch: string): BenchSandbox {
  const sandbox = makeSandbox({ agents: [], bd: false, branch });
  // git as users have it: the tests' sandboxes turn its automatic maintenance off, a bench measures with it on.
  rmSync(path.join(sandbox.home, '.gitconfig'), { force: true });
  symlinkSync(path.isAbsolute(agent) ? agent : path.join(AGENTS, agent), path.join(sandbox.bin, 'claude'));
  symlinkSync(path.join(AGENTS, 'bd-timing.sh'), path.join(sandbox.bin, 'bd'));
  const done = path.join(sandbox.root, 'answer-done.jsonl');
  const answer = path.join(sandbox.root, 'answer.jsonl');
  const recording = readFileSync(RECORDING, 'utf8');
  writeFileSync(done, recording);
  writeFileSync(answer, recording.replaceAll('Work done. <promise>COMPLETE</promise>', 'Work done.'));
  const agentTimes = path.join(sandbox.root, 'agent-times.txt');
  const bdTimes = path.join(sandbox.root, 'bd-times.txt');
  Object.assign(sandbox.env, {
    BENCH_REAL_BD: path.join(FAKES, 'bd'),
    BENCH_BD_TIMES: bdTimes,
    BENCH_AGENT_TIMES: agentTimes,
    BENCH_STATE: path.join(sandbox.root, 'agent-state'),
    BENCH_ANSWER: answer,
    BENCH_ANSWER_DONE: done,
  });
  delete sandbox.env.FAKE_BD_LOG;
  delete sandbox.env.FAKE_AGENT_LOG;
  const cleanup = (): void => {
    open.delete(cleanup);
    sandbox.cleanup();
  };
  open.add(cleanup);
  return { ...sandbox, agentTimes, bdTimes, cleanup };
}

/** Commits everything in the sandbox repo (the seed), so git status stays as small as in a real project. */
export function commitAll(sandbox: Sandbox, message: string): void {
  execFileSync('git', ['add', '-A'], { cwd: sandbox.repo, env: sandbox.env, stdio: 'ignore' });
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', message], { cwd: sandbox.repo, env: sandbox.env, stdio: 'ignore' });
}

/** The lines of a file the bench's shims append to; none when it was never written. */
export function linesOf(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch {
    return [];
  }
}

/** Lines of a `<start ns> <end ns> …` timing file as milliseconds. */
export function readSpans(file: string): Array<{ start: number; end: number; what: string }> {
  return linesOf(file)
    .filter((line) => /^\d+ \d+( |$)/.test(line))
    .map((line) => {
      const [start, end, what] = line.split(' ');
      return { start: Number(BigInt(start!) / 1000n) / 1000, end: Number(BigInt(end!) / 1000n) / 1000, what: what ?? '' };
    });
}
