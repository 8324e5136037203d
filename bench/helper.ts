// Benchmark: a helper command (bd, a gate, the on-exit hook) through zx's `$` against raw spawn, per call,
// and `await` speed after helper calls (ralph sets only global `$` options, so promise hooks stay off).
// Runs bench/helper-probe.ts in a fresh process so nothing else has touched its promise hooks.
import path from 'node:path';
import { runTimed } from './process.ts';
import { info, judged, ms, type Benchmark, type Row } from './report.ts';
import { BENCH, PROJECT, TSX } from './sandbox.ts';

const NAME = 'helper command (zx $)';
const ROUNDS = 200;

interface Probe {
  rounds: number;
  spawnMs: number;
  execFileMs: number;
  zxMs: number;
  hooksBefore: boolean;
  hooksAfter: boolean;
  hooksAfterWithin: boolean;
  awaitsBeforeMs: number;
  awaitsAfterMs: number;
  awaitsAfterWithinMs: number;
}

export const helper: Benchmark = {
  name: 'helper',
  summary: `\`/usr/bin/true\` through zx's $ vs raw spawn, median of ${ROUNDS} interleaved calls; awaits before/after`,
  async run() {
    const run = await runTimed(TSX, [path.join(BENCH, 'helper-probe.ts'), '/usr/bin/true', String(ROUNDS)], { cwd: PROJECT, env: process.env, timeoutMs: 120_000 });
    if (run.code !== 0) throw new Error(`helper-probe exited ${run.timedOut ? 'on timeout' : run.code}: ${run.stderrTail.trim().split('\n').at(-1) ?? ''}`);
    const probe = JSON.parse(run.stdout) as Probe;
    const ratio = probe.awaitsAfterMs / probe.awaitsBeforeMs;
    const rows: Row[] = [
      info({
        benchmark: NAME,
        figure: `helper command through zx vs raw spawn, per call (\`/usr/bin/true\`, median of ${probe.rounds})`,
        result: `zx ${ms(probe.zxMs)} vs raw spawn ${ms(probe.spawnMs)} (+${ms(probe.zxMs - probe.spawnMs)}; execFile ${ms(probe.execFileMs)})`,
        value: probe.zxMs,
        unit: 'ms',
      }),
      judged(
        {
          benchmark: NAME,
          figure: 'promise hooks after the helper calls (an await continuation gets an async id only when on)',
          target: 'off',
          result: `${probe.hooksAfter ? 'on' : 'off'} (before: ${probe.hooksBefore ? 'on' : 'off'}; after one zx within(): ${probe.hooksAfterWithin ? 'on' : 'off'})`,
        },
        !probe.hooksBefore && !probe.hooksAfter,
      ),
      info({
        benchmark: NAME,
        figure: '3M awaits, CPU time: after the helper calls ÷ before; after one within() ÷ before',
        result: `${ratio.toFixed(2)}× (${ms(probe.awaitsBeforeMs)} → ${ms(probe.awaitsAfterMs)}); ${(probe.awaitsAfterWithinMs / probe.awaitsBeforeMs).toFixed(2)}× (${ms(probe.awaitsAfterWithinMs)})`,
        value: ratio,
        unit: 'ratio',
      }),
    ];
    return rows;
  },
};
