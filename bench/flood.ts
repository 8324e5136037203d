// Benchmark 3: an agent that writes 1 GiB of stream-json, 10 MiB lines included. ralph's node process
// must stay under 150 MB resident and keep up at 200 MB/s, and its per-iteration log must hold exactly
// what --log-max-bytes (default 64M) promises of the bytes written (flood-log.ts). The generator is calibrated first against a reader that does nothing. The same flood
// then runs with --no-redact: redaction (on by default) must keep at least 0.8× of that throughput. Last,
// four workers flood a quarter each in one ralph (flood-parallel.ts): the same targets hold.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parallelFlood } from './flood-parallel.ts';
import { checkLog, expectedStream, LOG_CAP, LOG_TAIL } from './flood-log.ts';
import { runWatched } from './process.ts';
import { info, judged, type Benchmark, type Row } from './report.ts';
import { AGENTS, benchSandbox, RALPH, readSpans, seedBeads, standardEpic, TSX } from './sandbox.ts';

const GENERATOR = path.join(AGENTS, 'flood-agent.mjs');
const RSS_TARGET = 150 * 1e6;
const THROUGHPUT_TARGET = 200; // MB/s
const REDACTION_RATIO_TARGET = 0.8;
// Secret-looking variables, so the redactor has values to search for in every chunk (as in a real shell).
const SECRET_ENV = { BENCH_API_KEY: 'bench-key-4f8e2a9b1c7d3e5f', BENCH_GITHUB_TOKEN: 'bench-token-0a1b2c3d4e5f6a7b', BENCH_DB_PASSWORD: 'correct-horse-battery-staple' };

function mbPerSecond(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}

/** The generator into a node reader that drops everything: the ceiling of the pipe. */
function calibrate(bytes: number): Promise<{ bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [GENERATOR], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_FLOOD_BYTES: String(bytes) } });
    let received = 0;
    child.stdout.on('data', (chunk: Buffer) => (received += chunk.length));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ bytes: received, ms: performance.now() - started }) : reject(new Error(`flood generator exited ${code}`))));
  });
}

interface FloodRun {
  peak: number;
  pid?: number;
  /** CPU time of ralph's node process: what redaction costs, whatever else the machine is doing. */
  cpuMs?: number;
  written: number;
  agentMs: number;
  log: string;
  exit: string;
  outcome?: { outcome: string; reason: string };
}

/** One ralph iteration (beads, one task) whose agent is the flood generator writing `bytes`. */
async function floodRun(bytes: number, check: (run: FloodRun) => Promise<void>, extraArgs: string[] = []): Promise<FloodRun> {
  const sandbox = benchSandbox(GENERATOR, '001-ralph-automation');
  try {
    seedBeads(sandbox, standardEpic(1));
    Object.assign(sandbox.env, SECRET_ENV);
    sandbox.env.BENCH_FLOOD_BYTES = String(bytes);
    const { run, peak, pid, cpuMs } = await runWatched(TSX, [RALPH, '--json', '--max-iterations', '1', '--retries', '1', '--timeout', '5m', '--source', 'beads', ...extraArgs], {
      cwd: sandbox.repo,
      env: sandbox.env,
      timeoutMs: 360_000,
      stderrFile: path.join(sandbox.root, 'ralph.stderr.log'),
    });
    const span = readSpans(sandbox.agentTimes)[0];
    let outcome: FloodRun['outcome'];
    try {
      outcome = (JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { records?: Array<{ outcome: string; reason: string }> }).records?.[0];
    } catch {
      outcome = undefined;
    }
    const sessions = readdirSync(path.join(sandbox.repo, '.ralph', 'logs')).filter((name) => !name.startsWith('.'));
    const result: FloodRun = {
      peak,
      pid,
      cpuMs,
      written: span ? Number(span.what) : 0,
      agentMs: span ? span.end - span.start : Number.NaN,
      log: path.join(sandbox.repo, '.ralph', 'logs', sessions[0] ?? '-', 'iteration-1.jsonl'),
      exit: run.timedOut ? 'timeout' : String(run.code ?? run.signal),
      outcome,
    };
    await check(result);
    return result;
  } finally {
    sandbox.cleanup();
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
}

/**
 * The same flood with --no-redact, interleaved with a second redacted run (on, off, on, off counting the
 * main run), each mode's best throughput compared: other work on the machine slows single runs a lot.
 */
async function redactionCost(bytes: number, name: string, first: FloodRun): Promise<Row[]> {
  const redacted = [first];
  const plain: FloodRun[] = [];
  let plainSize = -1;
  for (const mode of ['plain', 'redacted', 'plain'] as const) {
    const run = await floodRun(bytes, async (result) => {
      if (mode === 'plain') plainSize = fileSize(result.log);
    }, mode === 'plain' ? ['--no-redact'] : []);
    (mode === 'plain' ? plain : redacted).push(run);
  }
  const speeds = (runs: FloodRun[]): number[] => runs.map((run) => mbPerSecond(run.written, run.agentMs));
  const best = (values: number[]): number => Math.max(...values.filter(Number.isFinite));
  const least = (runs: FloodRun[]): number => Math.min(...runs.map((run) => run.cpuMs ?? Number.NaN).filter(Number.isFinite));
  const show = (values: number[]): string => values.map((value) => (Number.isFinite(value) ? value.toFixed(0) : '–')).join(', ');
  const cpu = (runs: FloodRun[]): string => runs.map((run) => (run.cpuMs === undefined ? '–' : `${(run.cpuMs / 1000).toFixed(1)} s`)).join(', ');
  const ratio = best(speeds(redacted)) / best(speeds(plain));
  const cpuRatio = least(plain) / least(redacted);
  return [
    info({ benchmark: name, figure: 'throughput with --no-redact, 2 runs interleaved with the redacted ones', result: `${show(speeds(plain))} MB/s; ralph's CPU time ${cpu(plain)} (log ${plainSize} bytes)`, value: best(speeds(plain)), unit: 'MB/s' }),
    info({ benchmark: name, figure: 'throughput with redaction (default), 2 runs', result: `${show(speeds(redacted))} MB/s; ralph's CPU time ${cpu(redacted)}`, value: best(speeds(redacted)), unit: 'MB/s' }),
    info({ benchmark: name, figure: "ralph's least CPU time without redaction ÷ with it (the same ratio, free of the machine's load)", result: Number.isFinite(cpuRatio) ? `${cpuRatio.toFixed(2)}×` : 'not measured', value: cpuRatio, unit: '×' }),
    judged(
      { benchmark: name, figure: `best throughput with redaction (${Object.keys(SECRET_ENV).length} secret variables + token shapes) ÷ best with --no-redact`, target: `≥ ${REDACTION_RATIO_TARGET}×`, result: Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : 'not measured', value: ratio, unit: '×' },
      ratio >= REDACTION_RATIO_TARGET,
    ),
  ];
}

export const flood: Benchmark = {
  name: 'flood',
  summary: 'ralph reading 1 GiB of stream-json with 10 MiB lines: peak RSS, throughput, log completeness',
  async run() {
    const rows: Row[] = [];
    const bytes = Number(process.env.BENCH_FLOOD_BYTES ?? 1024 * 1024 * 1024);
    const name = `output flood (${bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(0)} GiB` : `${(bytes / 2 ** 20).toFixed(0)} MiB`}, 10 MiB lines)`;
    const calibration = await calibrate(bytes);
    const ceiling = mbPerSecond(calibration.bytes, calibration.ms);
    rows.push(judged({ benchmark: name, figure: 'generator alone, into a node reader that drops the data', target: `≥ ${THROUGHPUT_TARGET} MB/s`, result: `${ceiling.toFixed(0)} MB/s`, value: ceiling, unit: 'MB/s' }, ceiling >= THROUGHPUT_TARGET));

    const rest = await floodRun(0, async () => undefined);
    rows.push(info({ benchmark: name, figure: "ralph's peak RSS with a quiet agent (one result line), for reference", result: `${(rest.peak / 1e6).toFixed(0)} MB`, value: rest.peak / 1e6, unit: 'MB' }));

    const expected = await expectedStream(bytes);
    const logFigure = `iteration-1.jsonl holds what --log-max-bytes (${LOG_CAP / 2 ** 20}M) promises of the bytes written: all, or the first ${(LOG_CAP - LOG_TAIL) / 2 ** 20} MiB, a note of what was left out, the lines ralph acted on, the last ${LOG_TAIL / 2 ** 20} MiB (sha256 of each)`;
    let log = { ok: false, result: 'not checked' };
    const run = await floodRun(bytes, async (result) => {
      log = await checkLog(result.log, expected);
      if (result.written !== expected.bytes) log = { ok: false, result: `the agent wrote ${result.written} bytes, not ${expected.bytes}` };
    });
    rows.push(
      judged(
        { benchmark: name, figure: "ralph's peak RSS (VmHWM of its node process)", target: '< 150 MB', result: run.pid === undefined ? 'ralph process not found' : `${(run.peak / 1e6).toFixed(0)} MB`, value: run.peak / 1e6, unit: 'MB' },
        run.pid !== undefined && run.peak < RSS_TARGET,
      ),
    );
    const throughput = mbPerSecond(run.written, run.agentMs);
    rows.push(
      judged(
        { benchmark: name, figure: 'throughput (bytes written / agent wall time)', target: `≥ ${THROUGHPUT_TARGET} MB/s`, result: Number.isFinite(run.agentMs) ? `${throughput.toFixed(0)} MB/s (${(run.agentMs / 1000).toFixed(1)} s)` : 'agent did not finish', value: throughput, unit: 'MB/s' },
        throughput >= THROUGHPUT_TARGET,
      ),
    );
    rows.push(
      judged(
        { benchmark: name, figure: logFigure, target: 'exact', result: log.result },
        log.ok,
      ),
    );
    rows.push(info({ benchmark: name, figure: 'iteration outcome (ralph exit code)', result: `${run.outcome ? `${run.outcome.outcome}: ${run.outcome.reason}` : 'no record'} (exit ${run.exit})` }));

    rows.push(...(await redactionCost(bytes, name, run)));

    const quarter = Math.floor(bytes / 4);
    rows.push(...(await parallelFlood({ name, bytes: quarter, expected: await expectedStream(quarter), env: SECRET_ENV, rssTarget: RSS_TARGET, throughputTarget: THROUGHPUT_TARGET })));
    return rows;
  },
};
