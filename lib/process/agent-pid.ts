// `.ralph/agent.pid`: the process group of the agent a run has going. A run killed with SIGKILL cannot stop
// its agent, which would go on editing the repository beside the next run's agent; the next run reads this
// file after taking the lock and ends that group first.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { groupAlive, signalTree } from './process-tree.ts';

export const AGENT_PID_FILE = path.join('.ralph', 'agent.pid');

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
    mkdirSync(path.join(root, '.ralph'), { recursive: true });
    writeFileSync(path.join(root, AGENT_PID_FILE), `${pgid} ${startTime(pgid) ?? '?'}\n`);
  } catch {
    // bookkeeping only: the run goes on without it
  }
}

export function clearAgent(root: string): void {
  rmSync(path.join(root, AGENT_PID_FILE), { force: true });
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends the agent group an earlier, killed run left behind (call with the lock held): SIGTERM, then SIGKILL
 * after `graceMs`. A group whose leader is alive with another start time is a reused PID and is left alone.
 * Returns a warning when it stopped something.
 */
export async function stopOrphanedAgent(root: string, graceMs: number): Promise<string | undefined> {
  let text: string;
  try {
    text = readFileSync(path.join(root, AGENT_PID_FILE), 'utf8');
  } catch {
    return undefined;
  }
  clearAgent(root);
  const [pgidText, started] = text.trim().split(' ');
  const pgid = Number(pgidText);
  if (!Number.isInteger(pgid) || pgid <= 1 || !groupAlive(pgid)) return undefined;
  const leader = startTime(pgid);
  if (leader !== undefined && started !== '?' && leader !== started) return undefined;
  signalTree(pgid, [], 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && groupAlive(pgid)) await pause(50);
  if (groupAlive(pgid)) signalTree(pgid, [], 'SIGKILL');
  for (let tries = 0; tries < 40 && groupAlive(pgid); tries += 1) await pause(25);
  return `stopped the agent (process group ${pgid}) that a killed earlier run left running`;
}
