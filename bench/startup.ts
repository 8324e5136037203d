// Benchmark 2: `npx tsx ralph.ts --dry-run` wall time in a seeded beads sandbox, median of 10 runs,
// with the layers under it measured the same way (npx, tsx, node) so the table shows where time goes.
// One unmeasured warm-up run per command fills tsx's transform cache, as any second start would.
import path from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import { runTimed } from './process.ts';
import { info, judged, median, ms, type Benchmark, type Row } from './report.ts';
import { benchSandbox, PROJECT, RALPH, readSpans, seedBeads, standardEpic, TSX } from './sandbox.ts';

const RUNS = 10;
const TARGET_MS = 1000;
const NAME = 'start-up (beads sandbox)';

interface Command {
  figure: string;
  bin: string;
  args: string[];
  /** Counts the bd calls it makes (dry runs). */
  dryRun: boolean;
}

export const startup: Benchmark = {
  name: 'startup',
  summary: `--dry-run and --version wall time, median of ${RUNS}`,
  async run() {
    const sandbox = benchSandbox('beads-agent.sh', '001-ralph-automation');
    try {
      seedBeads(sandbox, standardEpic(10));
      const empty = path.join(sandbox.root, 'empty.mjs');
      writeFileSync(empty, '');
      const npm = path.join(path.dirname(process.execPath), 'npx');
      const commands: Command[] = [
        // --prefix: npx finds tsx in ralph's node_modules while the command runs in the sandbox repo.
        { figure: '`npx tsx ralph.ts --dry-run`', bin: npm, args: ['--prefix', PROJECT, '--no', 'tsx', RALPH, '--dry-run'], dryRun: true },
        { figure: '`node_modules/.bin/tsx ralph.ts --dry-run` (no npx)', bin: TSX, args: [RALPH, '--dry-run'], dryRun: true },
        { figure: '`node bin/ralph.mjs --dry-run` (package bin: tsx in-process)', bin: process.execPath, args: [path.join(PROJECT, 'bin', 'ralph.mjs'), '--dry-run'], dryRun: true },
        { figure: '`node_modules/.bin/tsx ralph.ts --version`', bin: TSX, args: [RALPH, '--version'], dryRun: false },
        { figure: "`node_modules/.bin/tsx empty.mjs` (tsx's own start-up)", bin: TSX, args: [empty], dryRun: false },
        { figure: '`node -e 0` (node itself)', bin: process.execPath, args: ['-e', '0'], dryRun: false },
      ];
      const walls = commands.map(() => [] as number[]);
      const bdMs = commands.map(() => [] as number[]);
      const failures: string[] = [];
      // Interleaved rounds, so a busy moment on the machine hits every command alike.
      for (let round = -1; round < RUNS; round += 1) {
        for (const [index, command] of commands.entries()) {
          rmSync(sandbox.bdTimes, { force: true });
          const run = await runTimed(command.bin, command.args, { cwd: sandbox.repo, env: sandbox.env, timeoutMs: 60_000 });
          if (run.code !== 0) failures.push(`${command.figure} exited ${run.timedOut ? 'on timeout' : run.code}: ${run.stderrTail.trim().split('\n').at(-1) ?? ''}`);
          if (round < 0) continue;
          walls[index]!.push(run.wallMs);
          if (command.dryRun) bdMs[index]!.push(readSpans(sandbox.bdTimes).reduce((sum, call) => sum + call.end - call.start, 0));
        }
      }
      const rows: Row[] = [];
      for (const [index, command] of commands.entries()) {
        const wall = median(walls[index]!);
        const without = median(walls[index]!.map((value, run) => value - (bdMs[index]![run] ?? 0)));
        const bd = command.dryRun ? `, of which fake bd ${ms(median(bdMs[index]!))} (${ms(without)} without it)` : '';
        const row = { benchmark: NAME, figure: `${command.figure}, median of ${RUNS}`, result: `${ms(wall)}${bd}`, value: wall, unit: 'ms' };
        rows.push(index === 0 ? judged({ ...row, target: `< ${ms(TARGET_MS)}` }, wall < TARGET_MS && failures.length === 0) : info(row));
      }
      // ralph's own share: its imports and the dry run's work, without tsx's start-up and the fake bd's calls.
      const own = median(walls[1]!.map((value, run) => value - (bdMs[1]![run] ?? 0))) - median(walls[4]!);
      rows.push(info({ benchmark: NAME, figure: "ralph's own share of `tsx ralph.ts --dry-run` (its imports and work: the above without tsx's start-up and the fake bd)", result: ms(own), value: own, unit: 'ms' }));
      for (const failure of [...new Set(failures)]) rows.push({ benchmark: NAME, figure: 'command failed', target: 'exit 0', result: failure.slice(0, 160), verdict: 'FAIL' });
      return rows;
    } finally {
      sandbox.cleanup();
    }
  },
};
