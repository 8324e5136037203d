// Benchmark 1: what ralph adds per iteration around an agent that finishes at once, in each mode, side
// by side with bench/ralph-min.sh (the classic bash loop) against the same agent and task source.
//
// Overhead of iteration i = start of agent run i+1 − end of agent run i (both written by the agent
// itself), i.e. the iteration's period minus the agent's own run time. In beads mode the fake bd is a
// node process (~100 ms a call) that a real bd does not cost: the timing shim logs each call, and the
// bd time inside a gap (and the shim's own start-up, calibrated) is subtracted to give ralph's own overhead.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTimed, type TimedRun } from './process.ts';
import { info, judged, max, median, ms, quantile, type Benchmark, type Row } from './report.ts';
import { AGENTS, BENCH, benchSandbox, commitAll, PROJECT, RALPH, readSpans, seedBeads, standardEpic, TSX, type BenchSandbox } from './sandbox.ts';
import { PLAN_MD, prdJson, SPEC_MD, tasksMd } from './fixtures.ts';
import { gitCalls } from './git-calls.ts';

const ITERATIONS = 100;
/** Which bd the fake behaves like in beads mode (FAKE_BD_VERSION): 0.50 as recorded on a real bd, or 1.x. */
const BD_VERSION = process.env.BENCH_BD_VERSION ?? '0.50';
const BD_CALLS_PER_ITERATION = 2;
const BD_CALLS_DRY_RUN = 4;
const RALPH_TIMEOUT_MS = 180_000;
const SEED_GAP_MS = 2000;
const OVERHEAD_TARGET_MS = 100;
/** PRD mode: ralph's own work around an iteration (git status, add, commit; prd.json, history, progress). */
const PRD_OVERHEAD_TARGET_MS = 50;
/** PRD mode: at most this many times the bash loop doing the same git work (add and commit). */
const PRD_BASH_RATIO = 2;
const PRD_GIT_CALLS = 3;

type Mode = 'beads' | 'speckit' | 'prd';

interface ModeSetup {
  mode: Mode;
  agent: string;
  branch: string;
  /** The module that must exist for the mode to be benchmarked. */
  module?: string;
  /** Seeds the task source with `count` tasks; returns the environment the agent and bash loop need. */
  seed(sandbox: BenchSandbox, count: number): Record<string, string>;
}

const MODES: ModeSetup[] = [
  {
    mode: 'beads',
    agent: 'beads-agent.sh',
    branch: '001-ralph-automation',
    seed(sandbox, count) {
      seedBeads(sandbox, standardEpic(count));
      return { BENCH_EPIC: 'ws-9w6' };
    },
  },
  {
    mode: 'speckit',
    agent: 'speckit-agent.sh',
    branch: '001-bench',
    module: 'lib/sources/speckit/index.ts',
    seed(sandbox, count) {
      const dir = path.join(sandbox.repo, 'specs', '001-bench');
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'spec.md'), SPEC_MD);
      writeFileSync(path.join(dir, 'plan.md'), PLAN_MD);
      writeFileSync(path.join(dir, 'tasks.md'), tasksMd(count, 10));
      return { BENCH_TASKS_FILE: path.join(dir, 'tasks.md') };
    },
  },
  {
    mode: 'prd',
    agent: 'prd-agent.sh',
    branch: 'ralph/bench',
    module: 'lib/sources/prd/source.ts',
    seed(sandbox, count) {
      writeFileSync(path.join(sandbox.repo, 'prd.json'), prdJson(count));
      return { BENCH_PRD_FILE: path.join(sandbox.repo, 'prd.json') };
    },
  },
];

function prepareSandbox(setup: ModeSetup, count: number): BenchSandbox {
  const sandbox = benchSandbox(setup.agent, setup.branch);
  Object.assign(sandbox.env, setup.seed(sandbox, count), { BENCH_TASKS: String(count), FAKE_BD_VERSION: BD_VERSION });
  commitAll(sandbox, 'seed the task source');
  return sandbox;
}

interface Gaps {
  /** Agent end → next agent start, per iteration boundary. */
  gaps: number[];
  /** The same minus the bd calls inside each gap. */
  own: number[];
  bdCallsPerGap: number[];
  bdCallMs: number[];
  agentMs: number[];
  firstAgentStart?: number;
}

/** Gaps between agent runs; bd calls inside a gap are subtracted with `shimMs` each for the timing shim. */
function measureGaps(sandbox: BenchSandbox, shimMs: number): Gaps {
  const agent = readSpans(sandbox.agentTimes);
  const bd = readSpans(sandbox.bdTimes);
  const result: Gaps = { gaps: [], own: [], bdCallsPerGap: [], bdCallMs: bd.map((call) => call.end - call.start), agentMs: agent.map((run) => run.end - run.start), firstAgentStart: agent[0]?.start };
  for (let index = 0; index + 1 < agent.length; index += 1) {
    const from = agent[index]!.end;
    const to = agent[index + 1]!.start;
    const inside = bd.filter((call) => call.start >= from && call.end <= to);
    const bdMs = inside.reduce((sum, call) => sum + (call.end - call.start) + shimMs, 0);
    result.gaps.push(to - from);
    result.own.push(to - from - bdMs);
    result.bdCallsPerGap.push(inside.length);
  }
  return result;
}

/** Checks that the mode works at all: a dry run in a seeded sandbox. Says why not, and how many bd calls it made. */
async function dryRun(setup: ModeSetup): Promise<{ unavailable?: string; bdCalls: number }> {
  if (setup.module && !existsSync(path.join(PROJECT, setup.module))) return { unavailable: `${setup.module} does not exist yet`, bdCalls: 0 };
  const sandbox = prepareSandbox(setup, 3);
  try {
    const run = await runTimed(TSX, [RALPH, '--dry-run', '--source', setup.mode], { cwd: sandbox.repo, env: sandbox.env, timeoutMs: 60_000 });
    const bdCalls = readSpans(sandbox.bdTimes).length;
    if (run.code === 0) return { bdCalls };
    const said = `${run.stdout}\n${run.stderrTail}`.split('\n').filter((line) => line.trim()).slice(-2).join(' / ');
    return { unavailable: `dry run exited ${run.code ?? run.signal}: ${said.slice(0, 200)}`, bdCalls };
  } finally {
    sandbox.cleanup();
  }
}

function ralphSummary(run: TimedRun): { iterations: number; passed: number } {
  try {
    const records = (JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as { records?: Array<{ outcome: string }> }).records ?? [];
    return { iterations: records.length, passed: records.filter((item) => item.outcome === 'pass').length };
  } catch {
    return { iterations: 0, passed: 0 };
  }
}

/**
 * What the timing shim adds to each bd call beyond the span it logs (sh start-up, the `date` calls):
 * wall time of the shim around /bin/true minus that of /bin/true, both started from node.
 */
async function shimOverheadMs(): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-shim-'));
  try {
    const env = { PATH: process.env.PATH, BENCH_REAL_BD: '/bin/true', BENCH_BD_TIMES: path.join(dir, 'times') };
    const shim: number[] = [];
    const plain: number[] = [];
    for (let run = 0; run < 20; run += 1) {
      shim.push((await runTimed(path.join(AGENTS, 'bd-timing.sh'), ['ready'], { cwd: dir, env, timeoutMs: 10_000 })).wallMs);
      plain.push((await runTimed('/bin/true', [], { cwd: dir, env, timeoutMs: 10_000 })).wallMs);
    }
    return Math.max(0, median(shim) - median(plain));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `bin args` in a fresh sandbox of the mode and measures the gaps between its agent runs. */
async function measureLoop(setup: ModeSetup, shimMs: number, bin: string, args: string[]): Promise<{ run: TimedRun; gaps: Gaps; spawnedAt: number }> {
  const sandbox = prepareSandbox(setup, ITERATIONS);
  try {
    const spawnedAt = performance.timeOrigin + performance.now();
    const run = await runTimed(bin, args, { cwd: sandbox.repo, env: sandbox.env, timeoutMs: RALPH_TIMEOUT_MS, stderrFile: path.join(sandbox.root, 'stderr.log') });
    return { run, gaps: measureGaps(sandbox, shimMs), spawnedAt };
  } finally {
    sandbox.cleanup();
  }
}

async function benchMode(setup: ModeSetup, shimMs: number): Promise<Row[]> {
  const name = `loop overhead (${setup.mode})`;
  const plan = await dryRun(setup);
  const reason = plan.unavailable;
  if (reason) return [{ benchmark: name, figure: `ralph and bash loop, ${ITERATIONS} iterations`, target: '-', result: `not run: ${reason}`, verdict: 'NOT RUN' }];
  const beads = setup.mode === 'beads';
  const ralph = await measureLoop(setup, shimMs, TSX, [RALPH, '--json', '--max-iterations', String(ITERATIONS + 1), '--source', setup.mode]);
  const bash = await measureLoop(setup, shimMs, path.join(BENCH, 'ralph-min.sh'), [setup.mode, String(ITERATIONS + 1)]);
  const row = (figure: string, values: number[]): Row => info({ benchmark: name, figure, result: ms(median(values)), value: median(values), unit: 'ms' });

  const rows: Row[] = [];
  const summary = ralphSummary(ralph.run);
  const complete = ralph.run.code === 0 && summary.passed === ITERATIONS && ralph.gaps.agentMs.length === ITERATIONS;
  rows.push(
    judged(
      {
        benchmark: name,
        figure: 'ralph run completes every task',
        target: `${ITERATIONS} passing iterations, exit 0`,
        result: `${summary.passed}/${summary.iterations} passed, exit ${ralph.run.timedOut ? 'timeout' : ralph.run.code}, ${ms(ralph.run.wallMs)} total`,
        value: summary.passed,
        note: complete ? undefined : ralph.run.stderrTail.split('\n').slice(-5).join('\n'),
      },
      complete,
    ),
  );
  if (bash.run.code !== 0 || bash.gaps.agentMs.length !== ITERATIONS) {
    rows.push({ benchmark: name, figure: 'bash loop (ralph-min.sh) run', target: `${ITERATIONS} iterations, exit 0`, result: `${bash.gaps.agentMs.length} iterations, exit ${bash.run.timedOut ? 'timeout' : bash.run.code}`, verdict: 'FAIL', note: bash.run.stderrTail });
  }
  rows.push(row("the bench agent's own run time (subtracted), median", ralph.gaps.agentMs));
  if (beads) {
    rows.push(row('ralph overhead/iteration incl. task-source CLI (fake bd), median', ralph.gaps.gaps));
    rows.push(row('bash loop (ralph-min.sh) overhead/iteration incl. bd, median', bash.gaps.gaps));
    rows.push(info({ benchmark: name, figure: 'bd calls by ralph per iteration × fake bd time/call (medians; + timing shim/call)', result: `${median(ralph.gaps.bdCallsPerGap)} × ${ms(median(ralph.gaps.bdCallMs))} (+ ${ms(shimMs)})`, value: median(ralph.gaps.bdCallsPerGap) }));
    // Every bd call between one agent run's end and the next one's start is ralph's (the agent's own are inside its run).
    const most = max(ralph.gaps.bdCallsPerGap);
    rows.push(
      judged(
        { benchmark: name, figure: `bd calls by ralph per iteration, median / max over ${ralph.gaps.bdCallsPerGap.length} (fake bd ${BD_VERSION})`, target: `≤ ${BD_CALLS_PER_ITERATION}`, result: `${median(ralph.gaps.bdCallsPerGap)} / ${most}`, value: most },
        most <= BD_CALLS_PER_ITERATION && ralph.gaps.bdCallsPerGap.length > 0,
      ),
    );
    rows.push(judged({ benchmark: name, figure: `bd calls of ralph --dry-run (fake bd ${BD_VERSION})`, target: `≤ ${BD_CALLS_DRY_RUN}`, result: String(plan.bdCalls), value: plan.bdCalls }, plan.bdCalls <= BD_CALLS_DRY_RUN));
  }
  const own = median(ralph.gaps.own);
  const target = setup.mode === 'prd' ? PRD_OVERHEAD_TARGET_MS : OVERHEAD_TARGET_MS;
  rows.push(judged({ benchmark: name, figure: beads ? "ralph's own overhead/iteration (bd time subtracted), median" : 'ralph overhead/iteration, median', target: `< ${target} ms`, result: ms(own), value: own, unit: 'ms' }, own < target));
  rows.push(row(`bash loop (ralph-min.sh) overhead/iteration${beads ? ', bd subtracted' : setup.mode === 'prd' ? ' (git add + commit, as ralph)' : ''}, median`, bash.gaps.own));
  if (setup.mode === 'prd') {
    const ratio = own / median(bash.gaps.own);
    rows.push(judged({ benchmark: name, figure: 'ralph overhead ÷ bash loop overhead doing the same git work (medians)', target: `≤ ${PRD_BASH_RATIO}×`, result: `${ratio.toFixed(2)}×`, value: ratio, unit: '×' }, ratio <= PRD_BASH_RATIO));
    const counted = prepareSandbox(setup, 10);
    try {
      rows.push(...(await gitCalls(name, counted, setup.mode, PRD_GIT_CALLS)));
    } finally {
      counted.cleanup();
    }
  }
  const p95 = quantile(ralph.gaps.own, 0.95);
  rows.push(info({ benchmark: name, figure: beads ? "ralph's own overhead/iteration, p95" : 'ralph overhead/iteration, p95', result: ms(p95), value: p95, unit: 'ms' }));
  const worst = max(ralph.gaps.gaps);
  rows.push(judged({ benchmark: name, figure: `ralph's max gap between agent runs${beads ? ' (incl. bd)' : ''}`, target: `< ${SEED_GAP_MS} ms (seed bound)`, result: ms(worst), value: worst, unit: 'ms' }, worst < SEED_GAP_MS));
  if (ralph.gaps.firstAgentStart !== undefined) {
    const first = ralph.gaps.firstAgentStart - ralph.spawnedAt;
    rows.push(info({ benchmark: name, figure: 'ralph start → first agent run (start-up, checks, lock)', result: ms(first), value: first, unit: 'ms' }));
  }
  return rows;
}

export const loopOverhead: Benchmark = {
  name: 'loop',
  summary: `ralph vs the classic bash loop: ${ITERATIONS} iterations of an instant agent per mode`,
  async run() {
    const rows: Row[] = [];
    const shimMs = await shimOverheadMs();
    for (const setup of MODES) rows.push(...(await benchMode(setup, shimMs)));
    return rows;
  },
};
