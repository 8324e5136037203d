// `.ralph/agents/<pgid>`: the process groups of the agents a run has going (one per worker). A run killed
// with SIGKILL cannot stop its agents, which would go on editing the repository beside the next run's;
// the next run reads these files after taking the lock and ends those groups first.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Notes the agent group just spawned (its leader's PID is the group id). */
export function recordAgent(root: string, pgid: number): void {
  try {
    mkdirSync(path.join(root, AGENTS_DIR), { recursive: true, mode: PRIVATE_DIR });
    writeFileSync(path.join(root, AGENTS_DIR, String(pgid)), `${pgid} ${startTime(pgid) ?? '?'}\n`, { mode: PRIVATE_FILE });
  } catch {
    // bookkeeping only: the run goes on without it
  }
}

/** Forgets an agent group that has ended. */
export function clearAgent(root: string, pgid: number): void {
  rmSync(path.join(root, AGENTS_DIR, String(pgid)), { force: true });
}

/** Every agent group the files under .ralph/ name, with the start time recorded for its leader. */
function recorded(root: string): Array<{ file: string; text: string }> {
  const found: Array<{ file: string; text: string }> = [];
  const read = (file: string): void => {
    try {
      found.push({ file, text: readFileSync(file, 'utf8') });
    } catch {
      // gone meanwhile
    }
  };
  read(path.join(root, LEGACY_FILE));
  let names: string[] = [];
  try {
    names = readdirSync(path.join(root, AGENTS_DIR));
  } catch {
    // none recorded
  }
  for (const name of names) if (/^\d+$/.test(name)) read(path.join(root, AGENTS_DIR, name));
  return found;
}

/** Ends one recorded group: SIGTERM, then SIGKILL after `graceMs`; false when it was gone or a reused PID. */
async function stopGroup(text: string, graceMs: number): Promise<number | undefined> {
  const [pgidText, started] = text.trim().split(' ');
  const pgid = Number(pgidText);
  if (!Number.isInteger(pgid) || pgid <= 1 || !groupAlive(pgid)) return undefined;
  const leader = startTime(pgid);
  if (leader !== undefined && started !== '?' && leader !== started) return undefined;
  await stopTree(pgid, [], graceMs);
  return pgid;
}

/**
 * Ends the agent groups an earlier, killed run left behind (call with the lock held): SIGTERM, then SIGKILL
 * after `graceMs`, all at once. A group whose leader is alive with another start time is a reused PID and
 * is left alone. Returns a warning when it stopped something.
 */
export async function stopOrphanedAgent(root: string, graceMs: number): Promise<string | undefined> {
  const files = recorded(root);
  for (const { file } of files) rmSync(file, { force: true });
  const stopped = (await Promise.all(files.map(({ text }) => stopGroup(text, graceMs)))).filter((pgid): pgid is number => pgid !== undefined);
  if (stopped.length === 0) return undefined;
  return stopped.length === 1
    ? `stopped the agent (process group ${stopped[0]}) that a killed earlier run left running`
    : `stopped ${stopped.length} agents (process groups ${stopped.join(', ')}) that a killed earlier run left running`;
}

/** The recorded agent groups still alive (read only: what a run would stop; for the dry run). */
export function recordedAgentsAlive(root: string): number[] {
  return recorded(root)
    .map(({ text }) => text.trim().split(' '))
    .filter(([pgid, started]) => {
      const id = Number(pgid);
      if (!Number.isInteger(id) || id <= 1 || !groupAlive(id)) return false;
      const leader = startTime(id);
      return leader === undefined || started === '?' || leader === started;
    })
    .map(([pgid]) => Number(pgid));
}
