// Finding a test's processes by a token in their environment: the agent's whole tree, wherever it went
// (a new session, another PID namespace's view), without trusting PIDs the sandbox renumbered. And
// processes a test starts to stand in for someone else's (a PID a lock names).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { onTestFinished } from 'vitest';
import { processStart } from '../../lib/process/process-tree.ts';

/** Live (not zombie) processes whose environment holds `token`. */
export function processesWith(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(token)) found.push(Number(name));
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

/** A live process that is not ralph (`sleep 30` unless told), SIGKILLed and reaped when the current test ends. */
export function unrelatedProcess(command: readonly string[] = ['sleep', '30']): number {
  const child = spawn(command[0]!, command.slice(1), { stdio: 'ignore' });
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  });
  return child.pid!;
}

/** SIGSTOPs `pid` (as Ctrl+Z would) and waits until /proc shows it stopped (state T). */
export async function stopProcess(pid: number): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  const deadline = Date.now() + 10_000;
  while (processStart(pid)?.state !== 'T') {
    if (Date.now() > deadline) throw new Error(`PID ${pid} did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
