// Benchmark 1: what ralph adds per iteration around an agent that finishes at once, in each mode, side
// by side with bench/ralph-min.sh (the classic bash loop) against the same agent and task source.
//
// Overhead of iteration i = start of agent run i+1 − end of agent run i (both written by the agent
// itself), i.e. the iteration's period minus the agent's own run time. In beads mode the fake bd is a
// node process (~100 ms a call) that a real bd does not cost: the timing shim logs each call, and the
// bd time inside a gap is subtracted to give ralph's own overhead.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runTimed, type TimedRun } from './process.ts';
import { info, judged, max, median, ms, quantile, type Benchmark, type Row } from './report.ts';
import { BENCH, benchSandbox, commitAll, PROJECT, RALPH, readSpans, seedBeads, standardEpic, TSX, type BenchSandbox } from './sandbox.ts';
import { PLAN_MD, prdJson, SPEC_MD, tasksMd } from './fixtures.ts';

const ITERATIONS = 100;
const RALPH_TIMEOUT_MS = 180_000;
const SEED_GAP_MS = 2000;
const OVERHEAD_TARGET_MS = 100;

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
  Object.assign(sandbox.env, setup.seed(sandbox, count), { BENCH_TASKS: String(count) });
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

function measureGaps(sandbox: BenchSandbox): Gaps {
  const agent = readSpans(sandbox.agentTimes);
  const bd = readSpans(sandbox.bdTimes);
  const result: Gaps = { gaps: [], own: [], bdCallsPerGap: [], bdCallMs: bd.map((call) => call.end - call.start), agentMs: agent.map((run) => run.end - run.start), firstAgentStart: agent[0]?.start };
  for (let index = 0; index + 1 < agent.length; index += 1) {
    const from = agent[index]!.end;
    const to = agent[index + 1]!.start;
    const inside = bd.filter((call) => call.start >= from && call.end <= to);
    const bdMs = inside.reduce((sum, call) => sum + (call.end - call.start), 0);
    result.gaps.push(to - from);
    result.own.push(to - from - bdMs);
    result.bdCallsPerGap.push(inside.length);
  }
  return result;
}

/** Checks that the mode works at all: a dry run in a seeded sandbox. Returns why not, or undefined. */
async function unavailable(setup: ModeSetup): Promise<string | undefined> {
  if (setup.module && !existsSync(path.join(PROJECT, setup.module))) return `${setup.module} does not exist yet`;
  const sandbox = prepareSandbox(setup, 3);
  try {
    const run = await runTimed(TSX, [RALPH, '--dry-run', '--source', setup.mode], { cwd: sandbox.repo, env: sandbox.env, timeoutMs: 60_000 });
    if (run.code === 0) return undefined;
    const said = `${run.stdout}\n${run.stderrTail}`.split('\n').filter((line) => line.trim()).slice(-2).join(' / ');
    return `dry run exited ${run.code ?? run.signal}: ${said.slice(0, 200)}`;
  } finally {
    sandbox.cleanup();
  }
}

interface RalphRecord {
  durationMs: number;
  outcome: string;
}

function ralphSummary(run: TimedRun): { iterations: number; passed: number; records: RalphRecord[] } {
  try {
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as { records?: RalphRecord[] };
    const records = summary.records ?? [];
    return { iterations: records.length, passed: records.filter((item) => item.outcome === 'pass').length, records };
  } catch {
    return { iterations: 0, passed: 0, records: [] };
  }
}

async function benchMode(setup: ModeSetup): Promise<Row[]> {
  const name = `loop overhead (${setup.mode})`;
  const reason = await unavailable(setup);
  if (reason) return [{ benchmark: name, figure: 'ralph and bash loop, 100 iterations', target: '-', result: `not run: ${reason}`, verdict: 'NOT RUN' }];

  const rows: Row[] = [];
  const beads = setup.mode === 'beads';

  // ralph
  const sandbox = prepareSandbox(setup, ITERATIONS);
  let ralph: TimedRun;
  let gaps: Gaps;
  let spawnedAt: number;
  try {
    spawnedAt = performance.timeOrigin + performance.now();
    ralph = await runTimed(TSX, [RALPH, '--json', '--max-iterations', String(ITERATIONS + 1), '--source', setup.mode], {
      cwd: sandbox.repo,
      env: sandbox.env,
      timeoutMs: RALPH_TIMEOUT_MS,
      stderrFile: path.join(sandbox.root, 'ralph.stderr.log'),
    });
    gaps = measureGaps(sandbox);
  } finally {
    sandbox.cleanup();
  }
  const summary = ralphSummary(ralph);
  const complete = ralph.code === 0 && summary.passed === ITERATIONS && gaps.agentMs.length === ITERATIONS;
  rows.push(
    judged(
      {
        benchmark: name,
        figure: 'ralph run completes every task',
        target: `${ITERATIONS} passing iterations, exit 0`,
        result: `${summary.passed}/${summary.iterations} passed, exit ${ralph.timedOut ? 'timeout' : ralph.code}, ${ms(ralph.wallMs)} total`,
        value: summary.passed,
        note: complete ? undefined : ralph.stderrTail.split('\n').slice(-5).join('\n'),
      },
      complete,
    ),
  );

  const own = median(gaps.own);
  if (beads) {
    rows.push(info({ benchmark: name, figure: 'ralph overhead/iteration incl. task-source CLI (fake bd), median', result: ms(median(gaps.gaps)), value: median(gaps.gaps), unit: 'ms' }));
    rows.push(info({ benchmark: name, figure: 'bd calls by ralph per iteration (median) × fake bd time/call (median)', result: `${median(gaps.bdCallsPerGap)} × ${ms(median(gaps.bdCallMs))}`, value: median(gaps.bdCallsPerGap) }));
  }
  rows.push(judged({ benchmark: name, figure: beads ? "ralph's own overhead/iteration (bd time subtracted), median" : 'ralph overhead/iteration, median', target: `< ${OVERHEAD_TARGET_MS} ms`, result: ms(own), value: own, unit: 'ms' }, own < OVERHEAD_TARGET_MS));
  rows.push(info({ benchmark: name, figure: beads ? "ralph's own overhead/iteration, p95" : 'ralph overhead/iteration, p95', result: ms(quantile(gaps.own, 0.95)), value: quantile(gaps.own, 0.95), unit: 'ms' }));
  const worst = max(gaps.gaps);
  rows.push(judged({ benchmark: name, figure: `max gap between agent runs${beads ? ' (incl. bd)' : ''}`, target: `< ${SEED_GAP_MS} ms (seed bound)`, result: ms(worst), value: worst, unit: 'ms' }, worst < SEED_GAP_MS));
  if (gaps.firstAgentStart !== undefined) {
    rows.push(info({ benchmark: name, figure: 'ralph start → first agent run (start-up, checks, lock)', result: ms(gaps.firstAgentStart - spawnedAt), value: gaps.firstAgentStart - spawnedAt, unit: 'ms' }));
  }

  // the bash loop, same agent, same source
  const shell = prepareSandbox(setup, ITERATIONS);
  try {
    const run = await runTimed(path.join(BENCH, 'ralph-min.sh'), [setup.mode, String(ITERATIONS + 1)], { cwd: shell.repo, env: shell.env, timeoutMs: RALPH_TIMEOUT_MS });
    const bash = measureGaps(shell);
    const ok = run.code === 0 && bash.agentMs.length === ITERATIONS;
    if (!ok) {
      rows.push({ benchmark: name, figure: 'bash loop (ralph-min.sh) run', target: `${ITERATIONS} iterations, exit 0`, result: `${bash.agentMs.length} iterations, exit ${run.timedOut ? 'timeout' : run.code}`, verdict: 'FAIL', note: run.stderrTail });
    }
    if (beads) rows.push(info({ benchmark: name, figure: 'bash loop (ralph-min.sh) overhead/iteration incl. bd, median', result: ms(median(bash.gaps)), value: median(bash.gaps), unit: 'ms' }));
    rows.push(info({ benchmark: name, figure: `bash loop (ralph-min.sh) overhead/iteration${beads ? ', bd subtracted' : ''}, median`, result: ms(median(bash.own)), value: median(bash.own), unit: 'ms' }));
  } finally {
    shell.cleanup();
  }
  return rows;
}

export const loopOverhead: Benchmark = {
  name: 'loop',
  summary: `ralph vs the classic bash loop: ${ITERATIONS} iterations of an instant agent per mode`,
  async run() {
    const rows: Row[] = [];
    for (const setup of MODES) rows.push(...(await benchMode(setup)));
    return rows;
  },
};
