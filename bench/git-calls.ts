// How many git processes ralph starts per iteration: a run with a counting shim in front of git (never
// the run that is timed, since the shim costs a shell and a `date` per call). Every call between one agent
// run's end and the next one's start is ralph's: the bench agents never call git themselves.
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { runTimed } from './process.ts';
import { info, judged, max, median, type Row } from './report.ts';
import { AGENTS, linesOf, RALPH, readSpans, TSX, type BenchSandbox } from './sandbox.ts';

const ITERATIONS = 8;

interface Call {
  at: number;
  args: string;
}

function readCalls(file: string): Call[] {
  return linesOf(file)
    .filter((line) => /^\d+ /.test(line))
    .map((line) => ({ at: Number(BigInt(line.slice(0, line.indexOf(' '))) / 1000n) / 1000, args: line.slice(line.indexOf(' ') + 1) }));
}

/** `git status --porcelain=v2 …` → `status`: the subcommand, past any `-c` options. */
export function subcommand(args: string): string {
  const words = args.split(' ');
  for (let index = 0; index < words.length; index += 1) {
    if (words[index] === '-c') index += 1;
    else if (!words[index]!.startsWith('-')) return words[index]!;
  }
  return args;
}

/** Runs ralph for a few iterations in `sandbox` with git counted; rows: calls per iteration and which. */
export async function gitCalls(name: string, sandbox: BenchSandbox, mode: string, target: number): Promise<Row[]> {
  const calls = path.join(sandbox.root, 'git-calls.txt');
  symlinkSync(path.join(AGENTS, 'git-count.sh'), path.join(sandbox.bin, 'git'));
  Object.assign(sandbox.env, { BENCH_GIT_CALLS: calls, BENCH_REAL_GIT: execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim() });
  const run = await runTimed(TSX, [RALPH, '--json', '--max-iterations', String(ITERATIONS + 1), '--source', mode], { cwd: sandbox.repo, env: sandbox.env, timeoutMs: 120_000 });
  const agent = readSpans(sandbox.agentTimes);
  const all = readCalls(calls);
  const perGap: number[] = [];
  const kinds = new Map<string, number>();
  for (let index = 0; index + 1 < agent.length; index += 1) {
    const inside = all.filter((call) => call.at >= agent[index]!.end && call.at <= agent[index + 1]!.start);
    perGap.push(inside.length);
    for (const call of inside) kinds.set(subcommand(call.args), (kinds.get(subcommand(call.args)) ?? 0) + 1);
  }
  const gaps = perGap.length;
  const most = max(perGap);
  const which = [...kinds].map(([kind, count]) => `${kind} ×${(count / Math.max(1, gaps)).toFixed(1)}`).join(', ');
  return [
    judged(
      { benchmark: name, figure: `git processes ralph starts per iteration, median / max over ${gaps} (a counting run, exit ${run.code})`, target: `≤ ${target}`, result: `${median(perGap)} / ${most}`, value: most, note: gaps === 0 ? run.stderrTail : undefined },
      gaps > 0 && most <= target,
    ),
    info({ benchmark: name, figure: 'git processes per iteration, by subcommand (mean)', result: which || 'none' }),
  ];
}
