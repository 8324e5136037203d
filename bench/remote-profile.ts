// Where the time of several hosts goes: every git call of each host, timed by agents/git-time.sh in a run
// that is not the timed one, sorted into what talks to the remote (fetches, claim pushes, landing pushes,
// releases) and read beside the agents' own spans for the longest time a host did nothing at all.
import { subcommand } from './git-calls.ts';

/** One git process of a profiled run, times in epoch ms. */
export interface GitCall {
  start: number;
  end: number;
  code: number;
  args: string;
}

export type CallKind = 'fetch' | 'list' | 'land' | 'claim' | 'release' | 'local';

/** `<start ns> <end ns> <exit code> <cwd> <arguments>` lines (agents/git-time.sh) as calls. */
export function parseGitCalls(lines: readonly string[]): GitCall[] {
  const calls: GitCall[] = [];
  for (const line of lines) {
    const match = /^(\d+) (\d+) (\d+) \S+ (.*)$/.exec(line);
    if (!match) continue;
    const at = (ns: string): number => Number(BigInt(ns) / 1000n) / 1000;
    calls.push({ start: at(match[1]!), end: at(match[2]!), code: Number(match[3]), args: match[4]! });
  }
  return calls;
}

/**
 * What a git call of ralph's --remote does (lib/landing): a look lists the refs (ls-remote), a landing is the one atomic push (the branch and
 * the claim's release), a claim (or its renewal) pushes a commit to refs/ralph/…, a release deletes one.
 */
export function callKind(args: string): CallKind {
  const command = subcommand(args);
  if (command === 'fetch') return 'fetch';
  if (command === 'ls-remote') return 'list';
  if (command !== 'push') return 'local';
  const words = args.split(' ');
  if (words.includes('--atomic')) return 'land';
  if (words.some((word) => word.startsWith(':refs/ralph/'))) return 'release';
  return words.some((word) => word.includes(':refs/ralph/')) ? 'claim' : 'local';
}

export interface HostProfile {
  calls: Record<CallKind, { count: number; failed: number; ms: number }>;
  /** The longest time with no git call and no agent running, between the host's first and last call. */
  longestPauseMs: number;
}

/** A host's calls by kind and its longest pause, given its agents' spans (epoch ms). */
export function profileHost(calls: readonly GitCall[], agents: ReadonlyArray<{ start: number; end: number }>): HostProfile {
  const empty = (): { count: number; failed: number; ms: number } => ({ count: 0, failed: 0, ms: 0 });
  const byKind: HostProfile['calls'] = { fetch: empty(), list: empty(), land: empty(), claim: empty(), release: empty(), local: empty() };
  for (const call of calls) {
    const entry = byKind[callKind(call.args)];
    entry.count += 1;
    entry.failed += call.code === 0 ? 0 : 1;
    entry.ms += call.end - call.start;
  }
  const busy = [...calls, ...agents].map((span) => ({ start: span.start, end: span.end })).sort((a, b) => a.start - b.start);
  let longest = 0;
  let reached = busy[0]?.end ?? 0;
  for (const span of busy) {
    longest = Math.max(longest, span.start - reached);
    reached = Math.max(reached, span.end);
  }
  return { calls: byKind, longestPauseMs: longest };
}

/** The profiles of all hosts added up, by kind. */
export function totals(profiles: readonly HostProfile[]): HostProfile['calls'] {
  const sum: HostProfile['calls'] = { fetch: { count: 0, failed: 0, ms: 0 }, list: { count: 0, failed: 0, ms: 0 }, land: { count: 0, failed: 0, ms: 0 }, claim: { count: 0, failed: 0, ms: 0 }, release: { count: 0, failed: 0, ms: 0 }, local: { count: 0, failed: 0, ms: 0 } };
  for (const profile of profiles) {
    for (const kind of Object.keys(sum) as CallKind[]) {
      sum[kind].count += profile.calls[kind].count;
      sum[kind].failed += profile.calls[kind].failed;
      sum[kind].ms += profile.calls[kind].ms;
    }
  }
  return sum;
}
