// `npm run bench [-- --only NAME[,NAME]]`: runs the benchmarks, prints the table of every figure with its
// target and verdict (stdout), progress on stderr, and writes bench/results.json. Exit 1 when a target is
// missed. A hard limit (BENCH_DEADLINE_S, default 900) and Ctrl+C end the run with the rows measured so far,
// after killing what it started. BENCH_RALPH=path/to/ralph.ts benchmarks another checkout.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { deadLoop } from './dead-loop.ts';
import { flood } from './flood.ts';
import { appendRun, previousFigures, readHistory, writeHistory, type BenchmarkRun } from './history.ts';
import { helper } from './helper.ts';
import { landing } from './landing.ts';
import { loopOverhead } from './loop-overhead.ts';
import { parallel } from './parallel.ts';
import { killRunning } from './process.ts';
import { remote } from './remote.ts';
import { formatTable, ms, type Benchmark, type Row } from './report.ts';
import { BENCH, removeSandboxes } from './sandbox.ts';
import { scale } from './scale.ts';
import { startup } from './startup.ts';

const BENCHMARKS: Benchmark[] = [loopOverhead, startup, flood, scale, deadLoop, parallel, landing, remote, helper];

function selected(argv: readonly string[]): Benchmark[] {
  const only: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (arg === '--only') only.push(...(argv[++index] ?? '').split(','));
    else if (arg.startsWith('--only=')) only.push(...arg.slice('--only='.length).split(','));
    else throw new Error(`unknown argument ${arg}: use --only ${BENCHMARKS.map((item) => item.name).join('|')}`);
  }
  const names = only.map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !BENCHMARKS.some((item) => item.name === name));
  if (unknown.length > 0) throw new Error(`unknown benchmark ${unknown.join(', ')}: choose from ${BENCHMARKS.map((item) => item.name).join(', ')}`);
  return names.length === 0 ? BENCHMARKS : BENCHMARKS.filter((item) => names.includes(item.name));
}

function machine(): Record<string, string | number> {
  let cpus: number;
  try {
    cpus = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    cpus = os.availableParallelism();
  }
  return { nproc: cpus, cpu: os.cpus()[0]?.model ?? 'unknown', memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`, node: process.version, os: `${os.type()} ${os.release()}`, date: new Date().toISOString(), loadavg: loadavg() };
}

/** The 1-minute load average: other work on the machine skews every figure, so it is recorded with them. */
function loadavg(): string {
  return os.loadavg()[0]!.toFixed(2);
}

interface Done {
  facts: Record<string, string | number>;
  rows: Row[];
  runs: BenchmarkRun[];
}

/** Prints the table (stdout) beside the previous figures and appends the run to results.json; returns the exit code. */
function finish({ facts, rows, runs }: Done, cut?: string): number {
  if (cut) rows.push({ benchmark: 'bench', figure: 'run', target: 'completes', result: cut, verdict: 'FAIL' });
  const failed = rows.filter((row) => row.verdict === 'FAIL');
  const load = runs.map((run) => `${run.name} ${run.loadBefore}→${run.loadAfter}`).join(', ');
  const file = path.join(BENCH, 'results.json');
  const history = readHistory(file);
  process.stdout.write(`${formatTable(rows, previousFigures(history, rows))}\n\nmachine: ${facts.nproc} cores (${facts.cpu}), ${facts.memory}, node ${facts.node}, ${facts.os}; load average (1 min) ${load || facts.loadavg}\n`);
  process.stdout.write(failed.length === 0 ? 'all targets hold\n' : `${failed.length} target(s) missed: ${failed.map((row) => `${row.benchmark}: ${row.figure}`).join('; ')}\n`);
  for (const row of rows.filter((item) => item.note)) process.stderr.write(`note (${row.benchmark}: ${row.figure}):\n${row.note}\n`);
  const kept = appendRun(history, { machine: facts, runs, rows });
  writeHistory(file, kept);
  process.stderr.write(`bench: results in ${path.relative(process.cwd(), file)} (the last ${kept.runs.length} runs)\n`);
  return failed.length === 0 ? 0 : 1;
}

/** Ends the bench early: kills what it started, removes sandboxes, prints what was measured. */
function stopEarly(done: Done, why: string, code: number): void {
  killRunning();
  removeSandboxes();
  finish(done, why);
  process.exit(code);
}

async function main(): Promise<number> {
  let chosen: Benchmark[];
  try {
    chosen = selected(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    return 1;
  }
  const done: Done = { facts: machine(), rows: [], runs: [] };
  process.stderr.write(`bench: ${Object.entries(done.facts).map(([key, value]) => `${key} ${value}`).join(', ')}\n`);
  const deadline = Number(process.env.BENCH_DEADLINE_S ?? 900);
  setTimeout(() => stopEarly(done, `stopped after the ${deadline} s limit`, 1), deadline * 1000).unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stopEarly(done, `interrupted by ${signal}`, 130));

  for (const benchmark of chosen) {
    process.stderr.write(`bench: ${benchmark.name}: ${benchmark.summary} …\n`);
    const started = performance.now();
    const loadBefore = loadavg();
    const rows: Row[] = [];
    try {
      rows.push(...(await benchmark.run()));
    } catch (error) {
      rows.push({ benchmark: benchmark.name, figure: 'benchmark run', target: 'completes', result: `error: ${(error as Error).message.split('\n')[0]}`, verdict: 'FAIL', note: (error as Error).stack });
    }
    const seconds = (performance.now() - started) / 1000;
    const loadAfter = loadavg();
    done.rows.push(...rows.map((row) => ({ ...row, load: `${loadBefore}→${loadAfter}` })));
    done.runs.push({ name: benchmark.name, seconds: Math.round(seconds * 10) / 10, loadBefore, loadAfter });
    process.stderr.write(`bench: ${benchmark.name} done in ${ms(seconds * 1000)}\n`);
  }
  return finish(done);
}

process.exitCode = await main();
