// Benchmark 3: an agent that writes 1 GiB of stream-json, 10 MiB lines included. ralph's node process
// must stay under 150 MB resident and keep up at 200 MB/s, and its per-iteration log must hold exactly
// the bytes written. The generator is calibrated first against a reader that does nothing.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { findRalphProcess, runTimed, watchPeakRss } from './process.ts';
import { info, judged, mib, type Benchmark, type Row } from './report.ts';
import { AGENTS, benchSandbox, RALPH, readSpans, seedBeads, standardEpic, TSX } from './sandbox.ts';

const GENERATOR = path.join(AGENTS, 'flood-agent.mjs');
const RSS_TARGET = 150 * 1e6;
const THROUGHPUT_TARGET = 200; // MB/s
const NAME = 'output flood (1 GiB, 10 MiB lines)';

function mbPerSecond(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}

/** The generator into a node reader that drops everything: the ceiling of the pipe. */
function calibrate(): Promise<{ bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [GENERATOR], { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ bytes, ms: performance.now() - started }) : reject(new Error(`flood generator exited ${code}`))));
  });
}

async function expectedStream(): Promise<{ sha256: string; bytes: number }> {
  const run = await runTimed(process.execPath, [GENERATOR, '--sha256'], { cwd: AGENTS, env: process.env, timeoutMs: 60_000 });
  const [sha256, bytes] = run.stdout.trim().split(' ');
  return { sha256: sha256!, bytes: Number(bytes) };
}

function sha256Of(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file, { highWaterMark: 4 * 1024 * 1024 })
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

export const flood: Benchmark = {
  name: 'flood',
  summary: 'ralph reading 1 GiB of stream-json with 10 MiB lines: peak RSS, throughput, log completeness',
  async run() {
    const rows: Row[] = [];
    const calibration = await calibrate();
    const ceiling = mbPerSecond(calibration.bytes, calibration.ms);
    rows.push(judged({ benchmark: NAME, figure: 'generator alone, into a node reader that drops the data', target: `≥ ${THROUGHPUT_TARGET} MB/s`, result: `${ceiling.toFixed(0)} MB/s`, value: ceiling, unit: 'MB/s' }, ceiling >= THROUGHPUT_TARGET));
    const expected = await expectedStream();

    const sandbox = benchSandbox(GENERATOR, '001-ralph-automation');
    try {
      seedBeads(sandbox, standardEpic(1));
      let tsxPid: number | undefined;
      const watch = watchPeakRss(() => (tsxPid === undefined ? undefined : findRalphProcess(tsxPid)));
      const run = await runTimed(TSX, [RALPH, '--json', '--max-iterations', '1', '--retries', '1', '--timeout', '5m', '--source', 'beads'], {
        cwd: sandbox.repo,
        env: sandbox.env,
        timeoutMs: 360_000,
        stderrFile: path.join(sandbox.root, 'ralph.stderr.log'),
        onStart: (pid) => (tsxPid = pid),
      });
      const { peak, pid } = watch.stop();
      const span = readSpans(sandbox.agentTimes)[0];
      const written = span ? Number(span.what) : 0;
      const agentMs = span ? span.end - span.start : Number.NaN;
      const outcome = (() => {
        try {
          return (JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { records?: Array<{ outcome: string; reason: string }> }).records?.[0];
        } catch {
          return undefined;
        }
      })();
      rows.push(
        judged(
          { benchmark: NAME, figure: "ralph's peak RSS (VmHWM of its node process)", target: '< 150 MB', result: pid === undefined ? 'ralph process not found' : `${(peak / 1e6).toFixed(0)} MB (${mib(peak)})`, value: peak / 1e6, unit: 'MB' },
          pid !== undefined && peak < RSS_TARGET,
        ),
      );
      const throughput = mbPerSecond(written, agentMs);
      rows.push(judged({ benchmark: NAME, figure: 'throughput (bytes written / agent wall time)', target: `≥ ${THROUGHPUT_TARGET} MB/s`, result: span ? `${throughput.toFixed(0)} MB/s (${(agentMs / 1000).toFixed(1)} s)` : 'agent did not finish', value: throughput, unit: 'MB/s' }, throughput >= THROUGHPUT_TARGET));

      const sessions = readdirSync(path.join(sandbox.repo, '.ralph', 'logs'));
      const log = path.join(sandbox.repo, '.ralph', 'logs', sessions[0] ?? '-', 'iteration-1.jsonl');
      let size = 0;
      try {
        size = statSync(log).size;
      } catch {
        size = -1;
      }
      const same = size === expected.bytes && written === expected.bytes && (await sha256Of(log)) === expected.sha256;
      rows.push(
        judged(
          { benchmark: NAME, figure: 'iteration-1.jsonl holds exactly the bytes written (size + sha256)', target: 'identical', result: `${size} of ${expected.bytes} bytes${same ? ', sha256 equal' : size === expected.bytes ? ', sha256 DIFFERS' : ''}`, value: size },
          same,
        ),
      );
      rows.push(info({ benchmark: NAME, figure: 'iteration outcome (ralph exit code)', result: `${outcome ? `${outcome.outcome}: ${outcome.reason}` : 'no record'} (exit ${run.timedOut ? 'timeout' : run.code})` }));
    } finally {
      sandbox.cleanup();
    }
    return rows;
  },
};
