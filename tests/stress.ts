// `npm run test:stress`: runs the whole suite again and again, optionally beside a CPU hog (one busy loop per
// core), and prints how many runs passed and which tests failed how often. A test that fails here is a bug
// report: the product or the test waits on time instead of a marker.
//
//   npm run test:stress                          5 runs
//   npm run test:stress -- --runs 5 --hog-runs 3 5 runs, then 3 beside the hog
//   npm run test:stress -- --runs 10 tests/faults vitest filters after the options
//
// Run it in a clone you do not edit meanwhile: every run's leftover check compares `git status`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = (name: string): string => path.join(PROJECT, 'node_modules', '.bin', name);

interface Options {
  runs: number;
  hogRuns: number;
  filters: string[];
}

export function parseOptions(argv: readonly string[]): Options {
  const options: Options = { runs: 5, hogRuns: 0, filters: [] };
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    const count = (): number => {
      const value = Number(argv[++index]);
      if (!Number.isInteger(value) || value < 0) throw new Error(`${arg} needs a whole number, got ${JSON.stringify(argv[index])}`);
      return value;
    };
    if (arg === '--runs') options.runs = count();
    else if (arg === '--hog-runs') options.hogRuns = count();
    else if (arg === '--hog') options.hogRuns = Math.max(options.hogRuns, 1);
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg} (known: --runs N, --hog-runs N, --hog)`);
    else options.filters.push(arg);
  }
  return options;
}

interface RunResult {
  ok: boolean;
  exitCode: number | null;
  seconds: number;
  passed: number;
  total: number;
  failures: Array<{ name: string; message: string; detail?: string }>;
  /** What the suite's own leftover check printed (tests/support/global-setup.ts). */
  leftovers: string[];
  stderrTail: string;
}

interface JsonReport {
  numPassedTests: number;
  numTotalTests: number;
  testResults: Array<{ name: string; message?: string; assertionResults: Array<{ fullName: string; status: string; duration?: number; failureMessages: string[] }> }>;
}

/** How much of a failure's message is printed under it. */
const DETAIL_LINES = 60;

/** The vitest run under way, stopped (with its own clean-up) when this script is interrupted. */
let current: ChildProcess | undefined;

/** The first line of a failure; vitest's JSON keeps only the stack of a timeout, which names no cause. */
function describeFailure(stack: string, duration: number | undefined): string {
  const first = stack.split('\n')[0]!.slice(0, 300);
  const took = duration === undefined ? '' : ` after ${(duration / 1000).toFixed(1)} s`;
  return first === 'Error: STACK_TRACE_ERROR' ? `timed out (the test or one of its hooks)${took}` : `${first}${took}`;
}

/** The whole failure message (what the assertion said it saw), without vitest's stack frames: a rare failure must be explainable from this output alone. */
function failureDetail(stack: string): string | undefined {
  const lines = stack.split('\n').filter((line) => !/^\s+at /.test(line));
  if (lines.length <= 1) return undefined;
  const kept = lines.slice(0, DETAIL_LINES).map((line) => `        ${line.slice(0, 400)}`);
  if (lines.length > DETAIL_LINES) kept.push(`        … ${lines.length - DETAIL_LINES} more lines`);
  return kept.join('\n');
}

function runSuite(filters: string[], scratch: string, index: number): Promise<RunResult> {
  const output = path.join(scratch, `run-${index}.json`);
  const started = Date.now();
  const child = (current = spawn(BIN('vitest'), ['run', '--reporter=json', `--outputFile=${output}`, ...filters], { cwd: PROJECT, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.on('close', (exitCode) => {
      const seconds = (Date.now() - started) / 1000;
      let report: JsonReport | undefined;
      try {
        report = JSON.parse(readFileSync(output, 'utf8')) as JsonReport;
      } catch {
        report = undefined;
      }
      const failures: RunResult['failures'] = [];
      for (const file of report?.testResults ?? []) {
        const where = path.relative(PROJECT, file.name);
        for (const test of file.assertionResults) {
          if (test.status === 'failed') failures.push({ name: `${where} > ${test.fullName}`, message: describeFailure(test.failureMessages[0] ?? '', test.duration), detail: failureDetail(test.failureMessages[0] ?? '') });
        }
        if (file.assertionResults.length === 0 && file.message) failures.push({ name: where, message: file.message.split('\n')[0]!.slice(0, 300) });
      }
      const mark = stderr.indexOf('✗ the test run did not leave the machine');
      const leftovers = mark >= 0 ? stderr.slice(mark).trim().split('\n').slice(0, 20) : [];
      const stderrTail = stderr.trim().split('\n').slice(-5).join('\n');
      resolve({ ok: exitCode === 0, exitCode, seconds, passed: report?.numPassedTests ?? 0, total: report?.numTotalTests ?? 0, failures, leftovers, stderrTail });
    });
  });
}

/** One busy loop per core, as another engineer's build would be. */
function startHog(): ChildProcess[] {
  return Array.from({ length: os.availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

function stopHog(hog: ChildProcess[]): void {
  for (const child of hog) child.kill('SIGKILL');
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'ralph-stress-'));
  let hog: ChildProcess[] = [];
  const stop = (): void => {
    stopHog(hog);
    rmSync(scratch, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      console.log(`test:stress: ${signal}: stopping the run under way`);
      stopHog(hog);
      const exit = (): never => {
        rmSync(scratch, { recursive: true, force: true });
        process.exit(130);
      };
      if (!current || current.exitCode !== null) exit();
      current!.once('close', exit);
      current!.kill('SIGTERM');
    });
  }
  const plan = [...Array<boolean>(options.runs).fill(false), ...Array<boolean>(options.hogRuns).fill(true)];
  const results: Array<RunResult & { hog: boolean }> = [];
  try {
    console.log(`ralph test:stress: ${options.runs} run(s), then ${options.hogRuns} beside a CPU hog of ${os.availableParallelism()} busy loop(s); load now ${os.loadavg()[0]!.toFixed(2)}`);
    for (const [index, withHog] of plan.entries()) {
      if (withHog && hog.length === 0) hog = startHog();
      const result = await runSuite(options.filters, scratch, index);
      results.push({ ...result, hog: withHog });
      const label = `run ${index + 1}/${plan.length}${withHog ? ' (hog)' : ''}`;
      console.log(`${label}: ${result.ok ? 'ok' : 'FAILED'}, ${result.passed}/${result.total} tests passed in ${result.seconds.toFixed(1)} s (load ${os.loadavg()[0]!.toFixed(2)})`);
      for (const failure of result.failures) console.log(`  ✗ ${failure.name}\n      ${failure.message}${failure.detail ? `\n${failure.detail}` : ''}`);
      for (const line of result.leftovers) console.log(`  ${line}`);
      if (!result.ok && result.failures.length === 0 && result.leftovers.length === 0) console.log(`  exit code ${result.exitCode}:\n${result.stderrTail.replace(/^/gm, '    ')}`);
    }
  } finally {
    stop();
  }
  const summary = (hogged: boolean): string => {
    const set = results.filter((result) => result.hog === hogged);
    const times = set.map((result) => result.seconds).sort((a, b) => a - b);
    const median = times.length ? times[Math.floor((times.length - 1) / 2)]! : 0;
    return `${set.filter((result) => result.ok).length}/${set.length} clean${set.length ? ` (wall time min ${times[0]!.toFixed(0)} s, median ${median.toFixed(0)} s, max ${times.at(-1)!.toFixed(0)} s)` : ''}`;
  };
  console.log(`\nwithout the hog: ${summary(false)}`);
  if (options.hogRuns > 0) console.log(`beside the CPU hog: ${summary(true)}`);
  const counts = new Map<string, number>();
  for (const failure of results.flatMap((result) => result.failures)) counts.set(failure.name, (counts.get(failure.name) ?? 0) + 1);
  if (counts.size > 0) {
    console.log('failures by test:');
    for (const [name, count] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${count}× ${name}`);
  }
  return results.every((result) => result.ok) ? 0 : 1;
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(`test:stress: ${(error as Error).message}`);
  return 1;
});
