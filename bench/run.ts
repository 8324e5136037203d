// `npm run bench [-- --only NAME[,NAME]]`: runs the benchmarks, prints the table of every figure with its
// target and verdict (stdout), progress on stderr, and writes bench/results.json.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { flood } from './flood.ts';
import { loopOverhead } from './loop-overhead.ts';
import { formatTable, ms, type Benchmark, type Row } from './report.ts';
import { BENCH } from './sandbox.ts';
import { scale } from './scale.ts';
import { startup } from './startup.ts';

const BENCHMARKS: Benchmark[] = [loopOverhead, startup, flood, scale];

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
  return { nproc: cpus, cpu: os.cpus()[0]?.model ?? 'unknown', memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`, node: process.version, os: `${os.type()} ${os.release()}`, date: new Date().toISOString() };
}

async function main(): Promise<number> {
  let chosen: Benchmark[];
  try {
    chosen = selected(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    return 1;
  }
  const facts = machine();
  process.stderr.write(`bench: ${Object.entries(facts).map(([key, value]) => `${key} ${value}`).join(', ')}\n`);
  const rows: Row[] = [];
  const timings: Record<string, number> = {};
  for (const benchmark of chosen) {
    process.stderr.write(`bench: ${benchmark.name}: ${benchmark.summary} …\n`);
    const started = performance.now();
    try {
      rows.push(...(await benchmark.run()));
    } catch (error) {
      rows.push({ benchmark: benchmark.name, figure: 'benchmark run', target: 'completes', result: `error: ${(error as Error).message.split('\n')[0]}`, verdict: 'FAIL', note: (error as Error).stack });
    }
    timings[benchmark.name] = performance.now() - started;
    process.stderr.write(`bench: ${benchmark.name} done in ${ms(timings[benchmark.name]!)}\n`);
  }
  const failed = rows.filter((row) => row.verdict === 'FAIL');
  process.stdout.write(`${formatTable(rows)}\n\nmachine: ${facts.nproc} cores (${facts.cpu}), node ${facts.node}, ${facts.os}\n`);
  process.stdout.write(failed.length === 0 ? 'all targets hold\n' : `${failed.length} target(s) missed: ${failed.map((row) => `${row.benchmark}: ${row.figure}`).join('; ')}\n`);
  for (const row of rows.filter((item) => item.note)) process.stderr.write(`note (${row.benchmark}: ${row.figure}):\n${row.note}\n`);
  const file = path.join(BENCH, 'results.json');
  writeFileSync(file, `${JSON.stringify({ machine: facts, secondsPerBenchmark: Object.fromEntries(Object.entries(timings).map(([key, value]) => [key, Math.round(value / 100) / 10])), rows }, null, 2)}\n`);
  process.stderr.write(`bench: results in ${path.relative(process.cwd(), file)}\n`);
  return failed.length === 0 ? 0 : 1;
}

process.exitCode = await main();
