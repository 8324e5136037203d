// `.ralph/agents/<pgid>`: the process groups of the agents a run has going (one per worker). A run killed
// with SIGKILL cannot stop its agents, which would go on editing the repository beside the next run's;
// the next run reads these files after taking the lock and ends those groups first. Each names the record
// of its agent's end (`end-…`, written by ./end-watch.ts when the agent ends, whoever its parent is then):
// the next run learns from it when an orphaned agent stopped writing.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PRIVATE_DIR, PRIVATE_FILE } from '../repo/private-files.ts';
import { groupAlive, stopTree } from './process-tree.ts';

export const AGENTS_DIR = path.join('.ralph', 'agents');
/** Where a single agent was recorded before there could be several. */
const LEGACY_FILE = path.join('.ralph', 'agent.pid');

/** The start time of a process in clock ticks since boot (Linux), to tell a reused PID from ours. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let ends = 0;

/**
 * The last agent of the repository itself (one worker), still recorded after it ended, until the next one
 * starts: a run killed after its agent (in its gates, its commit) leaves when that agent stopped writing.
 */
const lastEnded = new Map<string, { pgid: number | undefined; endFile: string }>();

/** Forgets the records of the repository's last agent (another starts, or the run's end is recorded). */
export function forgetEndedAgent(root: string): void {
  const last = lastEnded.get(root);
  if (!last) return;
  lastEnded.delete(root);
  if (last.pgid !== undefined) rmSync(path.join(root, AGENTS_DIR, String(last.pgid)), { force: true });
  rmSync(last.endFile, { force: true });
}

/** Where the end of the agent about to start is to be recorded (runProcess's `endFile`); its folder made. */
export function agentEndFile(root: string): string {
  forgetEndedAgent(root);
  try {
    mkdirSync(path.join(root, AGENTS_DIR), { recursive: true, mode: PRIVATE_DIR });
  } catch {
    // bookkeeping only: without the folder the record is not written, and the next start does without it
  }
  ends += 1;
  return path.join(root, AGENTS_DIR, `end-${process.pid}-${ends}`);
}

/** Notes the agent group just spawned (its leader's PID is the group id), with the file its end goes to. */
export function recordAgent(root: string, pgid: number, endFile?: string): void {
  try {
    mkdirSync(path.join(root, AGENTS_DIR), { recursive: true, mode: PRIVATE_DIR });
    const end = endFile ? ` ${path.basename(endFile)}` : '';
    writeFileSync(path.join(root, AGENTS_DIR, String(pgid)), `${pgid} ${startTime(pgid) ?? '?'}${end}\n`, { mode: PRIVATE_FILE });
  } catch {
    // bookkeeping only: the run goes on without it
  }
}

/**
 * Forgets an agent group that has ended; one with a record of its end (the repository's own agent) is
 * forgotten only when the next agent starts, or by the next run's recovery (see lastEnded).
 */
export function clearAgent(root: string, pgid: number | undefined, endFile?: string): void {
  if (endFile) return void lastEnded.set(root, { pgid, endFile });
  if (pgid !== undefined) rmSync(path.join(root, AGENTS_DIR, String(pgid)), { force: true });
}

/** One agent group a run recorded: its id, its leader's start time, the file its end goes to. */
interface Recorded {
  file: string;
  pgid: number;
  started: string;
  endFile?: string;
}

/** Every agent group the files under .ralph/ name, with the start time recorded for its leader. */
function recorded(root: string): Recorded[] {
  const found: Recorded[] = [];
  const read = (file: string): void => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return; // gone meanwhile
    }
    const [pgidText, started = '?', end] = text.trim().split(' ');
    const pgid = Number(pgidText);
    if (!Number.isInteger(pgid) || pgid <= 1) return void found.push({ file, pgid: 0, started });
    found.push({ file, pgid, started, ...(end && /^end-[\d-]+$/.test(end) ? { endFile: path.join(root, AGENTS_DIR, end) } : {}) });
  };
  read(path.join(root, LEGACY_FILE));
  for (const name of names(root)) if (/^\d+$/.test(name)) read(path.join(root, AGENTS_DIR, name));
  return found;
}

function names(root: string): string[] {
  try {
    return readdirSync(path.join(root, AGENTS_DIR));
  } catch {
    return []; // none recorded
  }
}

/** Whether the recorded group still runs: a leader alive with another start time is a reused PID, not ours. */
function running(agent: Recorded): boolean {
  if (agent.pgid <= 1 || !groupAlive(agent.pgid)) return false;
  const leader = startTime(agent.pgid);
  return leader === undefined || agent.started === '?' || leader === agent.started;
}

/** When the agent's last process ended, as its record's ctime says (ns, the clock of the files' ctimes). */
function endedAt(agent: Recorded): bigint | undefined {
  if (!agent.endFile) return undefined;
  try {
    return statSync(agent.endFile, { bigint: true }).ctimeNs;
  } catch {
    return undefined;
  }
}

/**
 * When the agents a dead run left stopped writing (ns since the epoch), from each one's end: the latest of
 * them; unknown (undefined) when there were none recorded or one has no end (no record, unreadable).
 */
export function agentsEnd(ends: ReadonlyArray<bigint | undefined>): bigint | undefined {
  if (ends.length === 0 || ends.includes(undefined)) return undefined;
  return (ends as bigint[]).reduce((latest, end) => (end > latest ? end : latest));
}

/** Now on the files' clock, rounded up: an agent stopped now wrote nothing later. */
const nowNs = (): bigint => BigInt(Date.now() + 1) * 1_000_000n;

/** What stopOrphanedAgent() did: a warning when it stopped something, and when the dead run's agents ended. */
export interface OrphansStopped {
  message?: string;
  /** See agentsEnd(); an agent stopped here ended now. */
  endedNs?: bigint;
}

/**
 * Ends the agent groups an earlier, killed run left behind (call with the lock held): SIGTERM, then SIGKILL
 * after `graceMs`, all at once. A group whose leader is alive with another start time is a reused PID and
 * is left alone. Says when it stopped something, and when those agents ended.
 */
export async function stopOrphanedAgent(root: string, graceMs: number): Promise<OrphansStopped> {
  const agents = recorded(root);
  const ends = agents.map(endedAt);
  const stopped = await Promise.all(agents.map(async (agent) => (running(agent) ? (await stopTree(agent.pgid, [], graceMs), agent.pgid) : undefined)));
  const now = nowNs();
  // Forgotten only once stopped: a start killed meanwhile leaves them to the next, which stops them then
  // (forgotten first, an agent still at work would go on unknown beside every later run).
  for (const { file } of agents) rmSync(file, { force: true });
  for (const name of names(root)) if (name.startsWith('end-')) rmSync(path.join(root, AGENTS_DIR, name), { force: true });
  const endedNs = agentsEnd(agents.map((agent, index) => (stopped[index] !== undefined ? now : ends[index])));
  const pgids = stopped.filter((pgid): pgid is number => pgid !== undefined);
  const message =
    pgids.length === 0
      ? undefined
      : pgids.length === 1
        ? `stopped the agent (process group ${pgids[0]}) that a killed earlier run left running`
        : `stopped ${pgids.length} agents (process groups ${pgids.join(', ')}) that a killed earlier run left running`;
  return { ...(message ? { message } : {}), ...(endedNs === undefined ? {} : { endedNs }) };
}

/** The recorded agent groups still alive (read only: what a run would stop; for the dry run). */
export function recordedAgentsAlive(root: string): number[] {
  return recorded(root)
    .filter(running)
    .map((agent) => agent.pgid);
}

/** When the recorded agents ended, read only (one still running: now, as the run would stop it); see agentsEnd(). */
export function recordedAgentsEnd(root: string): bigint | undefined {
  const now = nowNs();
  return agentsEnd(recorded(root).map((agent) => (running(agent) ? now : endedAt(agent))));
}
