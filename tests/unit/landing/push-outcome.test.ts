// parsePushOutcome against what git 2.39 really printed (tests/fixtures/git-push/, captured over git://,
// ssh and a path by capture.sh there): the same push has the same outcome on every transport, whatever
// stderr says around it ("fatal: the remote end hung up unexpectedly" after an --atomic refusal over ssh
// and a path).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parsePushOutcome, type PushOutcome, type PushRefs } from '../../../lib/landing/push-outcome.ts';

interface Captured {
  case: string;
  args: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/git-push');
const load = (transport: string): Captured[] => (JSON.parse(readFileSync(path.join(DIR, `${transport}.json`), 'utf8')) as { pushes: Captured[] }).pushes;

const BRANCH = 'refs/heads/ralph/night';
const CLAIM = 'refs/ralph/ralph%2Fnight/claims/US-001';
const CLAIM2 = 'refs/ralph/ralph%2Fnight/claims/US-002';

/** Each captured push: the refs ralph gives it, and what it must read. */
const TABLE: Record<string, { refs: PushRefs; kind: PushOutcome['kind']; why?: string | RegExp }> = {
  landed: { refs: { branch: BRANCH, claim: CLAIM }, kind: 'landed' },
  'moved-fetch-first': { refs: { branch: BRANCH, claim: CLAIM }, kind: 'moved', why: '[rejected] (fetch first)' },
  'moved-non-ff': { refs: { branch: BRANCH, claim: CLAIM }, kind: 'moved', why: '[rejected] (non-fast-forward)' },
  'lost-stale-claim': { refs: { branch: BRANCH, claim: CLAIM }, kind: 'lost', why: '[rejected] (stale info)' },
  'moved-and-lost': { refs: { branch: BRANCH, claim: CLAIM }, kind: 'lost', why: '[rejected] (stale info)' },
  'lost-claim-gone': { refs: { branch: BRANCH, claim: CLAIM }, kind: 'lost', why: '[rejected] (stale info)' },
  'claim-taken': { refs: { claim: CLAIM }, kind: 'lost', why: '[rejected] (stale info)' },
  'renew-stale': { refs: { claim: CLAIM }, kind: 'lost', why: '[rejected] (stale info)' },
  'release-stale': { refs: { claim: CLAIM }, kind: 'lost', why: '[rejected] (stale info)' },
  'release-gone': { refs: { claim: CLAIM2 }, kind: 'lost', why: '[rejected] (stale info)' },
  'claim-made': { refs: { claim: CLAIM2 }, kind: 'landed' },
  'renew-ok': { refs: { claim: CLAIM2 }, kind: 'landed' },
  'branch-moved': { refs: { branch: BRANCH }, kind: 'moved', why: '[rejected] (fetch first)' },
  'branch-up-to-date': { refs: { branch: BRANCH }, kind: 'landed' },
  'branch-pushed': { refs: { branch: BRANCH }, kind: 'landed' },
  'race-one': { refs: { branch: BRANCH, claim: CLAIM }, kind: 'landed' },
  'race-two': { refs: { branch: BRANCH }, kind: 'moved', why: '[remote rejected] (atomic transaction failed)' },
  'refused-by-hook': { refs: { branch: BRANCH }, kind: 'refused', why: '[remote rejected] (pre-receive hook declined)' },
  unreachable: { refs: { branch: BRANCH }, kind: 'unreachable', why: /unable to connect to 127\.0\.0\.1: 127\.0\.0\.1\[0: 127\.0\.0\.1\]: errno=Connection refused|Could not read from remote repository|Connection refused/ },
};

describe('parsePushOutcome: what git 2.39 printed, per transport', () => {
  for (const transport of ['git', 'ssh', 'path']) {
    const pushes = load(transport);
    it(`${transport}: every captured case is in the table`, () => {
      expect(pushes.map((push) => push.case).sort()).toEqual(Object.keys(TABLE).sort());
    });
    for (const push of pushes) {
      const row = TABLE[push.case]!;
      it(`${transport} ${push.case} → ${row.kind}`, () => {
        const outcome = parsePushOutcome(push, row.refs);
        expect(outcome.kind).toBe(row.kind);
        if (row.why !== undefined) expect((outcome as { why: string }).why).toMatch(row.why);
      });
    }
  }

  it('over ssh and a path a refused --atomic landing ends with "the remote end hung up": an answer all the same', () => {
    for (const transport of ['ssh', 'path']) {
      const push = load(transport).find((item) => item.case === 'moved-non-ff')!;
      expect(push.stderr).toMatch(/^fatal: the remote end hung up unexpectedly$/m);
      expect(parsePushOutcome(push, { branch: BRANCH, claim: CLAIM })).toEqual({ kind: 'moved', why: '[rejected] (non-fast-forward)' });
    }
  });

  it('a result for other refs only is no result for these; a timeout with nothing printed is silence', () => {
    const other = { exitCode: 0, stdout: 'To x\n \trefs/heads/a:refs/heads/a\t1..2\nDone\n', stderr: '' };
    expect(parsePushOutcome(other, { branch: BRANCH }).kind).toBe('refused');
    const timedOut = { exitCode: 1, stdout: '', stderr: 'git: timed out after 120000 ms and was stopped\n' };
    expect(parsePushOutcome(timedOut, { branch: BRANCH })).toEqual({ kind: 'unreachable', why: 'git: timed out after 120000 ms and was stopped' });
    const broken = { exitCode: 128, stdout: '', stderr: "fatal: 'origin' does not appear to be a git repository\n" };
    expect(parsePushOutcome(broken, { branch: BRANCH })).toEqual({ kind: 'refused', why: "fatal: 'origin' does not appear to be a git repository" });
  });
});
