// Benchmark: several hosts on one feature through a git remote (--remote). 12 independent PRD stories whose
// agent works 2 s and writes its own file: one host with one worker landing on the remote (A) against three
// hosts × --parallel 2 started at once on a fresh remote (B), in the same run, with a plain local run (one
// worker, no remote) beside A. The remote is a bare repository served by a real `git daemon` on 127.0.0.1,
// each host a clone of it. Target: B at most 0.3× A (1/6 is the floor: six agents at once). Also the
// landing cost per task (records[].mergeMs), what the server was asked, where B's wall time goes, and a
// profiled B (every git call timed; not a timed run). Each run is checked first: a wrong result never wins.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prdJson, prdReportAnswer } from './fixtures.ts';
import { serveRepository, type GitServer } from './git-server.ts';
import { runTimed, type TimedRun } from './process.ts';
import { parseGitCalls, profileHost, totals, type HostProfile } from './remote-profile.ts';
import { info, judged, median, ms, quantile, type Benchmark, type Row } from './report.ts';
import { AGENTS, benchSandbox, commitAll, linesOf, RALPH, RALPH_BIN, readSpans, TSX, type BenchSandbox } from './sandbox.ts';

const TASKS = 12;
const WORK_S = 2;
const HOSTS = 3;
const WORKERS = 2;
const RATIO_TARGET = 0.3;
const BRANCH = 'ralph/bench';
const RUN_TIMEOUT_MS = 300_000;
const STORIES = Array.from({ length: TASKS }, (_, index) => `US-${String(index + 1).padStart(4, '0')}`);

interface Summary {
  status?: string;
  records?: Array<{ outcome: string; startedAt: string; durationMs: number; mergeMs?: number }>;
  remote?: { landedHere: number };
}

/** One ralph process of a run: its exit, --json summary and progress, its agent's spans (epoch ms). */
interface HostRun {
  name: string;
  run: TimedRun;
  summary: Summary;
  stderr: string[];
  agent: Array<{ start: number; end: number; what: string }>;
  endedAt: number;
  profile?: HostProfile;
}

interface Measured {
  label: string;
  wallMs: number;
  startedAt: number;
  hosts: HostRun[];
  /** What is wrong with the result; empty when every story ran once and passes where it should. */
  problems: string[];
  server?: { fetches: number; pushes: number };
}

/** The project every run starts from: 12 open stories on ralph/bench, committed. */
function seeded(): BenchSandbox {
  const sandbox = benchSandbox('parallel-agent.sh', BRANCH);
  writeFileSync(sandbox.env.BENCH_ANSWER!, prdReportAnswer());
  sandbox.env.BENCH_WORK_S = String(WORK_S);
  writeFileSync(path.join(sandbox.repo, 'prd.json'), prdJson(TASKS));
  // No package.json: no quality gates, so what is measured is the loop, its claims and its landings.
  commitAll(sandbox, 'seed the task source');
  return sandbox;
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

function parseSummary(stdout: string): Summary {
  try {
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Summary;
  } catch {
    return {};
  }
}

/**
 * How each host starts ralph: as the README's users on their machines do (`/path/to/ralph/ralph.ts`, or
 * `ralph` after `npm link`: both `node bin/ralph.mjs`, from the compile cache); BENCH_REMOTE_START=tsx starts
 * `tsx ralph.ts` instead (each start compiles ralph's modules again: three hosts doing it at once on 2 cores
 * cost B about half a second more, which separate machines would not share).
 */
const START: [string, string[]] = process.env.BENCH_REMOTE_START === 'tsx' ? [TSX, [RALPH]] : [process.execPath, [RALPH_BIN]];

/** Runs ralph in `cwd` with the bench agent; `file(name)` is where this host's logs go. */
async function ralph(name: string, cwd: string, env: NodeJS.ProcessEnv, args: string[], file: (what: string) => string): Promise<HostRun> {
  const run = await runTimed(START[0], [...START[1], '--json', '--max-iterations', String(TASKS * 4), ...args], { cwd, env, timeoutMs: RUN_TIMEOUT_MS, stderrFile: file('stderr.txt') });
  return { name, run, summary: parseSummary(run.stdout), stderr: linesOf(file('stderr.txt')), agent: readSpans(file('agent-times.txt')), endedAt: Date.now() };
}

/** What is wrong with a run: exits, each story worked on exactly once over all hosts, passing where it landed. */
function problemsOf(hosts: readonly HostRun[], repo: string, where: string): string[] {
  const problems: string[] = [];
  for (const host of hosts) {
    if (host.run.code !== 0) problems.push(`${host.name} exited ${host.run.code ?? host.run.signal}${host.run.timedOut ? ' (timed out)' : ''}: ${host.run.stderrTail.trim().split('\n').slice(-2).join(' / ')}`);
    else if (host.summary.status !== 'completed') problems.push(`${host.name} ended ${host.summary.status ?? 'without a --json summary'}`);
  }
  const ran = hosts.flatMap((host) => host.agent.map((span) => span.what)).sort();
  if (ran.join(' ') !== STORIES.join(' ')) problems.push(`the agents worked on ${ran.length} stories (${ran.join(' ') || 'none'}), not each of the ${TASKS} once`);
  const passed = hosts.flatMap((host) => host.summary.records ?? []).filter((record) => record.outcome === 'pass').length;
  if (passed !== TASKS) problems.push(`${passed} passing iterations over all hosts, not ${TASKS}`);
  try {
    const open = (JSON.parse(git(repo, ['show', `${BRANCH}:prd.json`])) as { userStories: Array<{ id: string; passes: boolean }> }).userStories.filter((story) => !story.passes);
    if (open.length > 0) problems.push(`prd.json on ${where}: ${open.length} stories not passing (${open.map((story) => story.id).join(', ')})`);
  } catch (error) {
    problems.push(`prd.json on ${where}: unreadable (${(error as Error).message.split('\n')[0]})`);
  }
  const files = git(repo, ['ls-tree', '-r', '--name-only', BRANCH]).split('\n');
  const missing = STORIES.filter((id) => !files.includes(`work-${id}.txt`));
  if (missing.length > 0) problems.push(`${where} has no work file of ${missing.join(', ')}`);
  return problems;
}

/** The plain local run: one worker, no remote. */
async function measureLocal(): Promise<Measured> {
  const sandbox = seeded();
  try {
    const startedAt = Date.now();
    const file = (what: string): string => path.join(sandbox.root, `local-${what}`);
    const host = await ralph('local', sandbox.repo, { ...sandbox.env, BENCH_AGENT_TIMES: file('agent-times.txt') }, [], file);
    return { label: 'local', wallMs: host.run.wallMs, startedAt, hosts: [host], problems: problemsOf([host], sandbox.repo, BRANCH) };
  } finally {
    sandbox.cleanup();
  }
}

/**
 * `count` clones of a fresh remote, each running ralph with `args`, all started at once. `profile`: every
 * git call of each host goes through agents/git-time.sh (which costs time: such a run is not a figure).
 */
async function measureRemote(label: string, count: number, args: string[], profile = false): Promise<Measured> {
  const sandbox = seeded();
  let server: GitServer | undefined;
  try {
    server = await serveRepository(sandbox, RUN_TIMEOUT_MS * 2);
    const url = server.url;
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8', env: sandbox.env }).trim();
    const hosts = Array.from({ length: count }, (_, index) => {
      const name = `host${index + 1}`;
      const dir = path.join(sandbox.root, name);
      execFileSync('git', ['clone', '-q', '-b', BRANCH, url, dir], { env: sandbox.env, stdio: 'ignore' });
      const file = (what: string): string => path.join(sandbox.root, `${name}-${what}`);
      const env: NodeJS.ProcessEnv = { ...sandbox.env, BENCH_AGENT_TIMES: file('agent-times.txt'), BENCH_STATE: file('state') };
      if (profile) {
        // The shim in this host's PATH only: the daemon's own git processes are not ralph's.
        mkdirSync(file('bin'));
        symlinkSync(path.join(AGENTS, 'git-time.sh'), path.join(file('bin'), 'git'));
        Object.assign(env, { PATH: `${file('bin')}${path.delimiter}${env.PATH}`, BENCH_GIT_CALLS: file('git.txt'), BENCH_REAL_GIT: realGit });
      }
      return { name, dir, env, file };
    });
    const startedAt = Date.now();
    const started = performance.now();
    const runs = await Promise.all(hosts.map((host) => ralph(host.name, host.dir, host.env, ['--remote', 'origin', '--host-name', host.name, ...args], host.file)));
    const wallMs = performance.now() - started;
    if (profile) runs.forEach((run, index) => (run.profile = profileHost(parseGitCalls(linesOf(hosts[index]!.file('git.txt'))), run.agent)));
    const problems = problemsOf(runs, server.bare, `the remote's ${BRANCH}`);
    const landed = runs.reduce((sum, host) => sum + (host.summary.remote?.landedHere ?? 0), 0);
    if (landed !== TASKS) problems.push(`the hosts say they landed ${landed} stories, not ${TASKS}`);
    const claims = git(server.bare, ['for-each-ref', '--format=%(refname)', 'refs/ralph/']).trim();
    if (claims) problems.push(`claims left on the remote: ${claims.split('\n').join(', ')}`);
    return { label, wallMs, startedAt, hosts: runs, problems, server: await server.stop() };
  } finally {
    await server?.stop();
    sandbox.cleanup();
  }
}

const mergeMsOf = (run: Measured): number[] => run.hosts.flatMap((host) => (host.summary.records ?? []).map((record) => record.mergeMs)).filter((value): value is number => value !== undefined);

/** Claims lost to another host, as ralph reports them ("…; picking another task"). */
const lostClaims = (host: HostRun): number => host.stderr.filter((line) => /picking another task/.test(line)).length;

/**
 * Where a run's wall time went, from the agents' own stamps and the iterations' ends (a passing iteration
 * ends once it landed): until the first agent started, the agents' span, from the last agent's end to the
 * last landing, from there to the last host's exit; and the workers' time within the span no agent used.
 */
function phases(run: Measured, workers: number): { startMs: number; spanMs: number; landMs: number; exitMs: number; idleMs: number; busyMs: number } {
  const spans = run.hosts.flatMap((host) => host.agent);
  const first = Math.min(...spans.map((span) => span.start));
  const last = Math.max(...spans.map((span) => span.end));
  const landed = Math.max(...run.hosts.flatMap((host) => (host.summary.records ?? []).map((record) => Date.parse(record.startedAt) + record.durationMs)));
  const busyMs = spans.reduce((sum, span) => sum + span.end - span.start, 0);
  return { startMs: first - run.startedAt, spanMs: last - first, landMs: landed - last, exitMs: Math.max(...run.hosts.map((host) => host.endedAt)) - landed, idleMs: (last - first) * workers - busyMs, busyMs };
}

function rowsOf(local: Measured, one: Measured, many: Measured, profiled: Measured): Row[] {
  const row = (figure: string, result: string, value?: number, unit?: string): Row => info({ benchmark: 'remote', figure, result, ...(value === undefined ? {} : { value }), ...(unit ? { unit } : {}) });
  const rows: Row[] = [];
  for (const run of [local, one, many, profiled]) {
    const ok = run.problems.length === 0;
    rows.push(judged({ benchmark: 'remote', figure: `${run.label}: each story ran once and passes${run.server ? ' on the remote' : ''}`, target: `${TASKS}/${TASKS}, exit 0`, result: ok ? `${TASKS}/${TASKS}, exit 0` : 'WRONG', ...(ok ? {} : { note: run.problems.join('\n') }) }, ok));
  }
  const broken = [local, one, many].some((run) => run.problems.length > 0);
  const ratio = many.wallMs / one.wallMs;
  rows.push(row(`local: wall time, ${TASKS} tasks, one worker, no remote`, ms(local.wallMs), local.wallMs, 'ms'));
  rows.push(row(`A: wall time, ${TASKS} tasks, 1 host × 1 worker, --remote`, ms(one.wallMs), one.wallMs, 'ms'));
  rows.push(row(`B: wall time, ${TASKS} tasks, ${HOSTS} hosts × --parallel ${WORKERS}`, `${ms(many.wallMs)} (hosts ${many.hosts.map((host) => ms(host.run.wallMs)).join(', ')})`, many.wallMs, 'ms'));
  rows.push(judged({ benchmark: 'remote', figure: 'B / A', target: `≤ ${RATIO_TARGET}× (floor ${(1 / (HOSTS * WORKERS)).toFixed(2)}×)`, result: broken ? `${ratio.toFixed(2)}× of a WRONG result` : `${ratio.toFixed(2)}×`, value: ratio, unit: 'ratio' }, !broken && ratio <= RATIO_TARGET));
  for (const run of [one, many]) {
    const merges = mergeMsOf(run);
    rows.push(row(`${run.label}: landing per task (mergeMs), median / p90`, `${ms(median(merges))} / ${ms(quantile(merges, 0.9))} (${merges.length} landings)`, median(merges), 'ms'));
  }
  const perTask = (run: Measured, what: 'fetches' | 'pushes'): string => ((run.server?.[what] ?? Number.NaN) / TASKS).toFixed(1);
  rows.push(row('server requests per task, A / B: fetches; pushes', `${perTask(one, 'fetches')} / ${perTask(many, 'fetches')}; ${perTask(one, 'pushes')} / ${perTask(many, 'pushes')}`, (many.server?.pushes ?? Number.NaN) / TASKS));
  const lost = many.hosts.map(lostClaims);
  rows.push(row('B: claims lost to another host ("picking another task")', `${lost.reduce((a, b) => a + b, 0)} (${many.hosts.map((host, index) => `${host.name} ${lost[index]}`).join(', ')})`, lost.reduce((a, b) => a + b, 0)));
  for (const [run, workers] of [[one, 1], [many, HOSTS * WORKERS]] as const) {
    const phase = phases(run, workers);
    rows.push(row(`${run.label}: to the first agent / agents' span / last agent → last landing / → last exit`, `${ms(phase.startMs)} / ${ms(phase.spanMs)} / ${ms(phase.landMs)} / ${ms(phase.exitMs)}`, phase.exitMs, 'ms'));
    rows.push(row(`${run.label}: workers idle within the agents' span (${workers} × span − the agents' time)`, `${ms(phase.idleMs)} (${((phase.idleMs / Math.max(1, phase.spanMs * workers)) * 100).toFixed(0)}%; agents ${ms(phase.busyMs)})`, phase.idleMs, 'ms'));
  }
  const calls = totals(profiled.hosts.map((host) => host.profile!));
  rows.push(row('B profiled (git timed): landing pushes (refused) / claim pushes (refused) / fetches (their time)', `${calls.land.count} (${calls.land.failed}) / ${calls.claim.count} (${calls.claim.failed}) / ${calls.fetch.count} (${ms(calls.fetch.ms)}); wall ${ms(profiled.wallMs)}`, calls.land.failed));
  rows.push(row('B profiled: looks at the remote that listed its refs (ls-remote; their time)', `${calls.list.count} (${ms(calls.list.ms)})`, calls.list.count));
  rows.push(row('B profiled: each host\'s longest time with no git call and no agent (the poll)', profiled.hosts.map((host) => `${host.name} ${ms(host.profile!.longestPauseMs)}`).join(', '), Math.max(...profiled.hosts.map((host) => host.profile!.longestPauseMs)), 'ms'));
  return rows;
}

export const remote: Benchmark = {
  name: 'remote',
  summary: `${TASKS} independent PRD stories, agent ${WORK_S} s each, on a git remote: ${HOSTS} hosts × --parallel ${WORKERS} against one host with one worker`,
  async run(): Promise<Row[]> {
    const local = await measureLocal();
    const one = await measureRemote('A', 1, []);
    const many = await measureRemote('B', HOSTS, ['--parallel', String(WORKERS)]);
    const profiled = await measureRemote('B profiled', HOSTS, ['--parallel', String(WORKERS)], true);
    return rowsOf(local, one, many, profiled);
  },
};
