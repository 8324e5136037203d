// Benchmark: what a dead loop costs. Beads mode, default options, an agent that never closes a bead nor
// changes a file (agents/dead-agent.sh): how many iterations and how long until ralph gives up, and with
// which exit code. Before the no-progress breaker this ran the whole default budget (50 iterations).
import { runTimed } from './process.ts';
import { judged, info, ms, type Benchmark, type Row } from './report.ts';
import { benchSandbox, commitAll, RALPH, readSpans, seedBeads, standardEpic, TSX } from './sandbox.ts';

const NAME = 'dead loop (beads, agent never closes a bead)';
/** The bar: a dead loop stops within about 5 iterations. */
const TARGET_ITERATIONS = 5;

export const deadLoop: Benchmark = {
  name: 'dead-loop',
  summary: 'iterations and wall time until ralph stops a beads loop that makes no progress',
  async run() {
    const sandbox = benchSandbox('dead-agent.sh', '001-ralph-automation');
    try {
      seedBeads(sandbox, standardEpic(3));
      commitAll(sandbox, 'seed');
      const run = await runTimed(TSX, [RALPH], { cwd: sandbox.repo, env: sandbox.env, timeoutMs: 600_000 });
      const iterations = readSpans(sandbox.agentTimes).length;
      const last = run.stderrTail.trim().split('\n').at(-1) ?? '';
      const rows: Row[] = [
        judged({ benchmark: NAME, figure: 'iterations until ralph stops', target: `≤ ${TARGET_ITERATIONS}`, result: String(iterations), value: iterations, unit: 'iterations', note: last }, iterations <= TARGET_ITERATIONS),
        info({ benchmark: NAME, figure: 'wall time until ralph stops (fake agent and bd)', result: ms(run.wallMs), value: run.wallMs, unit: 'ms' }),
        judged({ benchmark: NAME, figure: 'exit code', target: '1 (failure, not the limit)', result: run.timedOut ? 'timed out' : String(run.code), value: run.code ?? Number.NaN }, run.code === 1),
      ];
      return rows;
    } finally {
      sandbox.cleanup();
    }
  },
};
