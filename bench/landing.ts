// Benchmark: the landing of several workers at once (issue 34), PRD stories at --parallel 4.
// - Contention: 8 stories that all append to the end of one shared file (every pair conflicts when they
//   land together): wall time, agent runs per story (resolve runs included), blocked stories.
// - Gates on landing: 12 independent stories with a 1 s gate: gate runs per story (target ≤ 1.5), and the
//   wall time against ralph before the merged result was gated (the commit before that change, checked out
//   beside this one), which runs each story's gate once.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTimed } from './process.ts';
import { info, judged, ms, type Benchmark, type Row } from './report.ts';
import { benchSandbox, commitAll, linesOf, PROJECT, RALPH, TSX, type BenchSandbox } from './sandbox.ts';
import { prdJson, prdReportAnswer } from './fixtures.ts';

const WORKERS = 4;
const CONTENTION_STORIES = 8;
const GATE_STORIES = 12;
const WORK_S = 2;
const GATE_RUNS_TARGET = 1.5;
/** The change that gates the merged result; the bench compares with its parent. */
const GATING_SUBJECT = '^landing: the branch only ever holds commits that pass the gates';

interface Measured {
  wallMs: number;
  passed: number;
  blocked: number;
  agentRuns: number;
  resolveRuns: number;
  gateRuns: number;
  error?: string;
}

function sandboxFor(stories: number, shared: boolean): BenchSandbox {
  const sandbox = benchSandbox('landing-agent.sh', 'ralph/bench');
  writeFileSync(sandbox.env.BENCH_ANSWER!, prdReportAnswer());
  sandbox.env.BENCH_WORK_S = String(WORK_S);
  writeFileSync(path.join(sandbox.repo, 'prd.json'), prdJson(stories));
  if (shared) {
    sandbox.env.BENCH_SHARED = '1';
    writeFileSync(path.join(sandbox.repo, 'shared.txt'), 'lines of the stories:\n');
  }
  sandbox.env.BENCH_GATE_LOG = path.join(sandbox.root, 'gate-runs.txt');
  writeFileSync(path.join(sandbox.repo, 'gate.sh'), 'sleep 1\necho run >> "$BENCH_GATE_LOG"\n');
  commitAll(sandbox, 'seed the stories');
  return sandbox;
}

async function measure(ralph: string, stories: number, shared: boolean, gate: boolean): Promise<Measured> {
  const sandbox = sandboxFor(stories, shared);
  try {
    const args = [ralph, '--parallel', String(WORKERS), '--max-iterations', String(stories * 3), '--json', ...(gate ? ['--gate', 'sh gate.sh'] : ['--gate', 'none'])];
    const run = await runTimed(TSX, args, { cwd: sandbox.repo, env: sandbox.env, timeoutMs: 600_000 });
    let summary: { records?: Array<{ outcome: string; taskId: string }>; skipped?: string[] } = {};
    try {
      summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '');
    } catch {
      // reported below
    }
    const records = summary.records ?? [];
    const passed = new Set(records.filter((record) => record.outcome === 'pass').map((record) => record.taskId)).size;
    const runs = linesOf(sandbox.agentTimes).filter(Boolean);
    const resolveRuns = runs.filter((line) => line.endsWith(' resolve')).length;
    const gateRuns = linesOf(sandbox.env.BENCH_GATE_LOG!).filter(Boolean).length;
    const error = run.code !== 0 || passed !== stories ? `exit ${run.code ?? run.signal}, ${passed}/${stories} passed: ${run.stderrTail.trim().split('\n').slice(-2).join(' / ')}` : undefined;
    return { wallMs: run.wallMs, passed, blocked: stories - passed, agentRuns: runs.length, resolveRuns, gateRuns, ...(error ? { error } : {}) };
  } finally {
    sandbox.cleanup();
  }
}

/** This project at the commit before the merged result was gated, in a temp worktree; its ralph.ts and a remover. */
function beforeGating(): { ralph: string; remove: () => void } | undefined {
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: PROJECT, encoding: 'utf8' }).trim();
  let change: string;
  try {
    change = git('log', '--format=%H', '-n1', `--grep=${GATING_SUBJECT}`);
  } catch {
    return undefined;
  }
  if (!change) return undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-before-'));
  rmSync(dir, { recursive: true });
  git('worktree', 'add', '-q', '--detach', dir, `${change}^`);
  symlinkSync(path.join(PROJECT, 'node_modules'), path.join(dir, 'node_modules'));
  return {
    ralph: path.join(dir, 'ralph.ts'),
    remove: () => {
      if (existsSync(dir)) git('worktree', 'remove', '--force', dir);
    },
  };
}

export const landing: Benchmark = {
  name: 'landing',
  summary: `--parallel ${WORKERS}: ${CONTENTION_STORIES} stories on one shared file; ${GATE_STORIES} stories with a 1 s gate, gated again on landing`,
  async run(): Promise<Row[]> {
    const rows: Row[] = [];
    const contention = await measure(RALPH, CONTENTION_STORIES, true, false);
    const note = contention.error ? { note: contention.error } : {};
    rows.push(info({ benchmark: 'landing', figure: `contention: wall time, ${CONTENTION_STORIES} stories on one file`, result: ms(contention.wallMs), value: contention.wallMs, unit: 'ms', ...note }));
    const taskRuns = (contention.agentRuns - contention.resolveRuns) / CONTENTION_STORIES;
    rows.push(info({ benchmark: 'landing', figure: 'contention: agent runs per story: the task (+ resolve runs)', result: `${taskRuns.toFixed(2)} (+ ${(contention.resolveRuns / CONTENTION_STORIES).toFixed(2)})`, value: contention.agentRuns / CONTENTION_STORIES, unit: 'runs' }));
    rows.push(judged({ benchmark: 'landing', figure: 'contention: blocked stories', target: '0', result: String(contention.blocked), value: contention.blocked, unit: 'stories', ...note }, contention.blocked === 0 && !contention.error));

    const gated = await measure(RALPH, GATE_STORIES, false, true);
    const perStory = gated.gateRuns / GATE_STORIES;
    rows.push(judged({ benchmark: 'landing', figure: `gates: gate runs per story, ${GATE_STORIES} stories, 1 s gate`, target: `≤ ${GATE_RUNS_TARGET}`, result: perStory.toFixed(2), value: perStory, unit: 'runs', ...(gated.error ? { note: gated.error } : {}) }, perStory <= GATE_RUNS_TARGET && !gated.error));
    rows.push(info({ benchmark: 'landing', figure: 'gates: wall time, merged result gated', result: ms(gated.wallMs), value: gated.wallMs, unit: 'ms' }));
    const before = process.env.BENCH_RALPH ? undefined : beforeGating();
    if (before) {
      try {
        const plain = await measure(before.ralph, GATE_STORIES, false, true);
        rows.push(info({ benchmark: 'landing', figure: 'gates: wall time, before the merged result was gated', result: ms(plain.wallMs), value: plain.wallMs, unit: 'ms', ...(plain.error ? { note: plain.error } : {}) }));
        rows.push(info({ benchmark: 'landing', figure: 'gates: gated / before', result: `${(gated.wallMs / plain.wallMs).toFixed(2)}× (${(plain.gateRuns / GATE_STORIES).toFixed(2)} gate runs per story before)`, value: gated.wallMs / plain.wallMs, unit: 'ratio' }));
      } finally {
        before.remove();
      }
    }
    return rows;
  },
};

