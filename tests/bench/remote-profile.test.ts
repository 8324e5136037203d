import { describe, expect, it } from 'vitest';
import { callKind, parseGitCalls, profileHost, totals } from '../../bench/remote-profile.ts';

const CLAIM = 'refs/ralph/ralph%2Fbench/claims/US-0003';

describe('bench: profile of --remote hosts', () => {
  it.each([
    ['fetch --prune --no-tags --quiet origin +refs/heads/ralph/bench:refs/remotes/origin/ralph/bench', 'fetch'],
    ['ls-remote origin refs/heads/ralph/bench refs/ralph/ralph%2Fbench/claims/*', 'list'],
    [`push --porcelain --no-verify --atomic origin 4ef3:refs/heads/ralph/bench --force-with-lease=${CLAIM}:3d80 :${CLAIM}`, 'land'],
    [`push --porcelain --no-verify origin --force-with-lease=${CLAIM}: 94160:${CLAIM}`, 'claim'],
    [`push --porcelain --no-verify origin --force-with-lease=${CLAIM}:3d80 7b73:${CLAIM}`, 'claim'],
    [`push --porcelain --no-verify origin --force-with-lease=${CLAIM}:3d80 :${CLAIM}`, 'release'],
    ['push --porcelain --no-verify origin refs/heads/ralph-kept/x:refs/heads/ralph-kept/x', 'local'],
    ['-c core.abbrev=40 commit --only --no-verify -m ralph: US-0003 fetch the data', 'local'],
  ])('%s is a %s', (args, kind) => {
    expect(callKind(args)).toBe(kind);
  });

  it('reads the shim lines (ns) as calls in ms and skips what is not one', () => {
    const calls = parseGitCalls(['1000000000 1250000000 1 /tmp/h1 push --porcelain origin', 'garbage', '']);
    expect(calls).toEqual([{ start: 1000, end: 1250, code: 1, args: 'push --porcelain origin' }]);
  });

  it('counts calls by kind with the refused ones, and finds the longest time nothing ran', () => {
    const calls = [
      { start: 0, end: 100, code: 0, args: 'fetch origin' },
      { start: 100, end: 200, code: 1, args: 'push --atomic origin a:refs/heads/b' },
      { start: 2300, end: 2400, code: 0, args: 'fetch origin' },
      { start: 8400, end: 8450, code: 0, args: 'fetch origin' },
    ];
    const profile = profileHost(calls, [{ start: 250, end: 2250 }]);
    expect(profile.calls.fetch).toEqual({ count: 3, failed: 0, ms: 250 });
    expect(profile.calls.land).toEqual({ count: 1, failed: 1, ms: 100 });
    expect(profile.longestPauseMs).toBe(6000);
    expect(totals([profile, profile]).fetch.count).toBe(6);
  });
});
