import { readdirSync, readFileSync } from 'node:fs';

/** Parent and process group of every process (Linux /proc; empty elsewhere). */
function processTable(): { children: Map<number, number[]>; groups: Map<number, number[]> } {
  const children = new Map<number, number[]>();
  const groups = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return { children, groups };
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The command name may hold spaces and parentheses: fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    for (const [map, key] of [[children, Number(fields[1])], [groups, Number(fields[2])]] as const) {
      const list = map.get(key) ?? [];
      list.push(Number(entry));
      map.set(key, list);
    }
  }
  return { children, groups };
}

function below(children: Map<number, number[]>, roots: readonly number[]): number[] {
  const found: number[] = [];
  const queue = [...roots];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Every live process below `rootPid` (Linux /proc; an empty list elsewhere). */
export function descendants(rootPid: number): number[] {
  return below(processTable().children, [rootPid]);
}

/**
 * Every process of the group and everything below any of them. Once the leader is gone its children are
 * no longer below it, but still below the group members that remain: a sandbox's init (bwrap as PID 1 of
 * its namespace) outlives bwrap itself and keeps the agent's escaped processes as children.
 */
export function groupTree(pgid: number): number[] {
  const { children, groups } = processTable();
  const members = groups.get(pgid) ?? [];
  return [...new Set([...members, ...below(children, [pgid, ...members])])];
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** USER_HZ, the unit of /proc's clock ticks: 100 on every architecture Linux runs ralph on (`getconf CLK_TCK`). */
const TICKS_PER_SECOND = 100;

/**
 * When a process started (ms since the epoch) and its state letter (R, S, D, T, t, Z…), from /proc/<pid>/stat's
 * starttime (field 22, clock ticks since boot) and /proc/stat's btime (whole seconds, rounded down, so the
 * start comes out up to a second early, never late). Undefined where there is no /proc (macOS) or the
 * process is gone or hidden.
 */
export function processStart(pid: number): { startedAtMs: number; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields resume after the last ')' with field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
    const ticks = Number(fields[19]);
    if (btime === undefined || !Number.isFinite(ticks) || !fields[0]) return undefined;
    return { startedAtMs: Number(btime) * 1000 + (ticks * 1000) / TICKS_PER_SECOND, state: fields[0] };
  } catch {
    return undefined;
  }
}

/** True while some process of the group is alive and not a zombie. */
export function groupAlive(pgid: number): boolean {
  if (!processAlive(-pgid)) return false;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

/** Sends a signal to a process group and to the listed pids; missing targets are ignored. */
export function signalTree(pgid: number, pids: readonly number[], signal: NodeJS.Signals): void {
  for (const target of [-pgid, ...pids]) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}

/** Alive and not merely a zombie waiting to be reaped (a zombie cannot do anything any more). */
export function processAliveNotZombie(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends a process group and the listed pids (descendants that may have left it): SIGTERM, up to `graceMs`
 * for them to go, then SIGKILL, waiting briefly for the group to be gone. No `ps` needed (Linux /proc).
 */
export async function stopTree(pgid: number, known: readonly number[], graceMs: number): Promise<void> {
  const alive = (): number[] => known.filter((pid) => processAliveNotZombie(pid));
  if (!groupAlive(pgid) && alive().length === 0) return;
  signalTree(pgid, alive(), 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && (groupAlive(pgid) || alive().length > 0)) await pause(50);
  signalTree(pgid, alive(), 'SIGKILL');
  for (let tries = 0; tries < 40 && groupAlive(pgid); tries += 1) await pause(25);
}
