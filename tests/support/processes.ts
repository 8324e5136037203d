// Finding a test's processes by a token in their environment: the agent's whole tree, wherever it went
// (a new session, another PID namespace's view), without trusting PIDs the sandbox renumbered.
import { readdirSync, readFileSync } from 'node:fs';

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
