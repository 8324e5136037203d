// The output flood on four workers at once: --parallel 4 on four PRD stories whose agent is the flood
// generator, each writing a quarter of the flood, redaction on (as by default) with secret-looking
// variables in the environment. One ralph process reads all four: its peak RSS must stay under the same
// 150 MB, the four together must reach the same throughput, and every iteration log must hold what the
// log cap promises (flood-log.ts).
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prdJson } from './fixtures.ts';
import { checkLog, type FloodStream } from './flood-log.ts';
import { runWatched } from './process.ts';
import { info, judged, type Row } from './report.ts';
import { AGENTS, benchSandbox, commitAll, RALPH, readSpans, TSX } from './sandbox.ts';

const GENERATOR = path.join(AGENTS, 'flood-agent.mjs');
const WORKERS = 4;

export interface ParallelFloodOptions {
  name: string;
  /** Bytes each worker's agent writes. */
  bytes: number;
  expected: FloodStream;
  env: Record<string, string>;
  rssTarget: number;
  throughputTarget: number;
}

/** Runs four flooding workers in one ralph; rows: peak RSS, aggregate throughput, logs as promised. */
export async function parallelFlood(options: ParallelFloodOptions): Promise<Row[]> {
  const sandbox = benchSandbox(GENERATOR, 'ralph/bench');
  try {
    writeFileSync(path.join(sandbox.repo, 'prd.json'), prdJson(WORKERS));
    commitAll(sandbox, 'seed four stories');
    Object.assign(sandbox.env, options.env, { BENCH_FLOOD_BYTES: String(options.bytes) });
    const { run, peak, pid, cpuMs } = await runWatched(TSX, [RALPH, '--json', '--parallel', String(WORKERS), '--max-iterations', String(WORKERS), '--retries', '1', '--timeout', '5m', '--source', 'prd'], {
      cwd: sandbox.repo,
      env: sandbox.env,
      timeoutMs: 600_000,
      stderrFile: path.join(sandbox.root, 'ralph.stderr.log'),
    });
    const spans = readSpans(sandbox.agentTimes);
    const written = spans.reduce((sum, span) => sum + Number(span.what), 0);
    const wallMs = spans.length > 0 ? Math.max(...spans.map((span) => span.end)) - Math.min(...spans.map((span) => span.start)) : Number.NaN;
    const overlap = spans.length === WORKERS ? Math.min(...spans.map((span) => span.end)) - Math.max(...spans.map((span) => span.start)) : Number.NaN;
    const logs = path.join(sandbox.repo, '.ralph', 'logs');
    const session = readdirSync(logs).find((name) => !name.startsWith('.')) ?? '-';
    const files = Array.from({ length: WORKERS }, (_, index) => path.join(logs, session, `iteration-${index + 1}.jsonl`));
    let whole = 0;
    const wrong: string[] = [];
    for (const file of files) {
      const log = await checkLog(file, options.expected);
      if (log.ok) whole += 1;
      else wrong.push(`${path.basename(file)}: ${log.result}`);
    }
    const throughput = written / 1e6 / (wallMs / 1000);
    const figure = (text: string): string => `${WORKERS} workers flooding at once (--parallel ${WORKERS}, redaction on): ${text}`;
    return [
      judged(
        { benchmark: options.name, figure: figure("ralph's peak RSS"), target: `< ${options.rssTarget / 1e6} MB`, result: pid === undefined ? 'ralph process not found' : `${(peak / 1e6).toFixed(0)} MB`, value: peak / 1e6, unit: 'MB' },
        pid !== undefined && peak < options.rssTarget,
      ),
      judged(
        {
          benchmark: options.name,
          figure: figure('throughput of the four together (bytes written / first start to last end)'),
          target: `≥ ${options.throughputTarget} MB/s`,
          result: Number.isFinite(wallMs) ? `${throughput.toFixed(0)} MB/s (${(written / 2 ** 20).toFixed(0)} MiB in ${(wallMs / 1000).toFixed(1)} s; all four writing for ${(overlap / 1000).toFixed(1)} s; ralph's CPU ${cpuMs === undefined ? '–' : `${(cpuMs / 1000).toFixed(1)} s`})` : 'agents did not finish',
          value: throughput,
          unit: 'MB/s',
          note: spans.length === WORKERS ? undefined : run.stderrTail.split('\n').slice(-5).join('\n'),
        },
        spans.length === WORKERS && throughput >= options.throughputTarget,
      ),
      judged(
        { benchmark: options.name, figure: figure('iteration logs holding what --log-max-bytes promises of the bytes written (flood-log.ts)'), target: `${WORKERS} of ${WORKERS}`, result: `${whole} of ${WORKERS}`, value: whole, note: wrong.length > 0 ? wrong.join('\n') : undefined },
        whole === WORKERS,
      ),
      info({ benchmark: options.name, figure: figure('ralph exit code'), result: run.timedOut ? 'timeout' : String(run.code ?? run.signal) }),
    ];
  } finally {
    sandbox.cleanup();
  }
}
