// Benchmark: --parallel 4 against --parallel 1 on 8 independent tasks whose agent takes 2 s each (PRD
// stories, and Spec Kit [P] tasks of one phase), in the same run. Target: wall time at 4 workers at most
// 0.4× that of one (0.25× is the floor: four agents at once); the merge cost per task is reported.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runTimed } from './process.ts';
import { info, judged, median, ms, type Benchmark, type Row } from './report.ts';
import { benchSandbox, commitAll, RALPH, TSX, type BenchSandbox } from './sandbox.ts';
import { PLAN_MD, prdJson, prdReportAnswer, SPEC_MD } from './fixtures.ts';

const TASKS = 8;
const WORK_S = 2;
const RATIO_TARGET = 0.4;

type Mode = 'prd' | 'speckit';

function specKitTasks(count: number): string {
  const lines = ['# Tasks: Parallel benchmark', '', '## Phase 1: Setup', ''];
  for (let n = 1; n <= count; n += 1) lines.push(`- [ ] T${String(n).padStart(3, '0')} [P] Create work file ${n}`);
  return `${lines.join('\n')}\n`;
}

function sandboxFor(mode: Mode): BenchSandbox {
  const sandbox = benchSandbox('parallel-agent.sh', mode === 'prd' ? 'ralph/bench' : '001-bench');
  writeFileSync(sandbox.env.BENCH_ANSWER!, prdReportAnswer());
  sandbox.env.BENCH_WORK_S = String(WORK_S);
  if (mode === 'prd') {
    writeFileSync(path.join(sandbox.repo, 'prd.json'), prdJson(TASKS));
    // No package.json: no quality gates, so what is measured is the loop and its merges.
  } else {
    const dir = path.join(sandbox.repo, 'specs', '001-bench');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'spec.md'), SPEC_MD);
    writeFileSync(path.join(dir, 'plan.md'), PLAN_MD);
    writeFileSync(path.join(dir, 'tasks.md'), specKitTasks(TASKS));
    sandbox.env.BENCH_TASKS_REL = 'specs/001-bench/tasks.md';
  }
  commitAll(sandbox, 'seed the task source');
  return sandbox;
}

interface Measured {
  wallMs: number;
  passed: number;
  mergeMs: number[];
  error?: string;
}

async function measure(mode: Mode, workers: number): Promise<Measured> {
  const sandbox = sandboxFor(mode);
  try {
    const run = await runTimed(TSX, [RALPH, '--parallel', String(workers), '--max-iterations', String(TASKS * 2), '--json'], { cwd: sandbox.repo, env: sandbox.env, timeoutMs: 300_000 });
    let records: Array<{ outcome: string; mergeMs?: number }> = [];
    try {
      records = (JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as { records?: typeof records }).records ?? [];
    } catch {
      // reported below
    }
    const passed = records.filter((record) => record.outcome === 'pass').length;
    const worked = readFileSync(sandbox.agentTimes, 'utf8').trim().split('\n').length;
    const error = run.code !== 0 || passed !== TASKS ? `exit ${run.code ?? run.signal}, ${passed}/${TASKS} passed, ${worked} agent runs: ${run.stderrTail.trim().split('\n').slice(-2).join(' / ')}` : undefined;
    return { wallMs: run.wallMs, passed, mergeMs: records.map((record) => record.mergeMs).filter((value): value is number => value !== undefined), ...(error ? { error } : {}) };
  } finally {
    sandbox.cleanup();
  }
}

export const parallel: Benchmark = {
  name: 'parallel',
  summary: `${TASKS} independent tasks, agent ${WORK_S} s each: --parallel 4 against --parallel 1`,
  async run(): Promise<Row[]> {
    const rows: Row[] = [];
    for (const mode of ['prd', 'speckit'] as const) {
      const one = await measure(mode, 1);
      const four = await measure(mode, 4);
      const ratio = four.wallMs / one.wallMs;
      const broken = one.error ?? four.error;
      rows.push(info({ benchmark: 'parallel', figure: `${mode}: wall time, ${TASKS} tasks at --parallel 1`, result: ms(one.wallMs), value: one.wallMs, unit: 'ms' }));
      rows.push(info({ benchmark: 'parallel', figure: `${mode}: wall time, ${TASKS} tasks at --parallel 4`, result: ms(four.wallMs), value: four.wallMs, unit: 'ms' }));
      rows.push(
        judged(
          { benchmark: 'parallel', figure: `${mode}: --parallel 4 / --parallel 1`, target: `≤ ${RATIO_TARGET}× (floor 0.25×)`, result: `${ratio.toFixed(2)}×`, value: ratio, unit: 'ratio', ...(broken ? { note: broken } : {}) },
          !broken && ratio <= RATIO_TARGET,
        ),
      );
      rows.push(info({ benchmark: 'parallel', figure: `${mode}: merge back per task, median (max)`, result: `${ms(median(four.mergeMs))} (${ms(Math.max(...four.mergeMs))})`, value: median(four.mergeMs), unit: 'ms' }));
    }
    return rows;
  },
};
