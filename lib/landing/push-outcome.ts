// What a push did, read in one place from what git says per ref (`git push --porcelain`), never from the
// words on stderr: over ssh and over a path, git 2.39 ends a refused --atomic push with "fatal: the remote
// end hung up unexpectedly" although the server answered every ref (tests/fixtures/git-push/ holds what
// git printed over git://, ssh and a path). Only a push with no result for its refs can be a remote that
// did not answer.
import type { ExecResult } from '../deps.ts';
import { gitReason } from '../repo/git.ts';
import { noAnswer, pushLines, type PushLine } from './remote-git.ts';

export type PushOutcome =
  /** The server took every ref of the push. */
  | { kind: 'landed' }
  /** The branch moved on the server (another host landed first): fetch, replay on its head, push again. */
  | { kind: 'moved'; why: string }
  /** The claim is not what this run last wrote there (taken over, or created by another host first). */
  | { kind: 'lost'; why: string; ref?: string }
  /** No result for the push's refs, and git could not reach the remote: wait and try again. */
  | { kind: 'unreachable'; why: string }
  /** The server answered no for another reason (a hook, a protected branch, …): said as git said it. */
  | { kind: 'refused'; why: string };

/** The refs a push carries, by role: the branch must move forward; the claim is guarded by its lease. */
export interface PushRefs {
  branch?: string;
  claim?: string;
  /** Several claims released by one push (a batch's landing). */
  claims?: readonly string[];
}

// Another push changed the ref first: the client's check ("fetch first", "non-fast-forward", a lease's
// "stale info") or the server's ref lock ("atomic transaction failed", "failed to update ref", "cannot lock ref").
const RACED = /non-fast-forward|fetch first|stale info|atomic transaction failed|failed to update ref|cannot lock ref/;

/** `result` of `git push --porcelain … ` with the refs `refs`, as one outcome. */
export function parsePushOutcome(result: ExecResult, refs: PushRefs): PushOutcome {
  const lines = pushLines(result.stdout);
  const branch = refs.branch ? lines.find((line) => line.to === refs.branch) : undefined;
  const claimLines = [...(refs.claim ? [refs.claim] : []), ...(refs.claims ?? [])].map((ref) => lines.find((line) => line.to === ref)).filter((line): line is PushLine => line !== undefined);
  // The claim that decides: one refused for its lease when there is one.
  const claim = claimLines.find((line) => line.flag === '!' && /stale info/.test(line.summary)) ?? claimLines.find((line) => line.flag === '!') ?? claimLines[0];
  const ours = [branch, ...claimLines].filter((line): line is PushLine => line !== undefined);
  if (ours.length === 0) {
    const silent = noAnswer(result);
    if (silent) return { kind: 'unreachable', why: silent };
    return { kind: 'refused', why: gitReason(`${result.stderr}\n${result.stdout}`, 'git push failed') };
  }
  const ok = (line: PushLine | undefined): boolean => line !== undefined && line.flag !== '!';
  // The branch's own line decides a landing: an --atomic push takes every ref or none.
  if (refs.branch ? ok(branch) : ok(claim)) return { kind: 'landed' };
  // The lease is checked before anything is sent: "stale info" on the claim is final, wherever the branch is.
  if (claim && !ok(claim) && /stale info/.test(claim.summary)) return { kind: 'lost', why: claim.summary, ref: claim.to };
  if (branch && !ok(branch) && RACED.test(branch.summary)) return { kind: 'moved', why: branch.summary };
  if (!refs.branch && claim && RACED.test(claim.summary)) return { kind: 'lost', why: claim.summary, ref: claim.to };
  const refused = ours.find((line) => !ok(line) && !/\(atomic push failed\)/.test(line.summary)) ?? ours.find((line) => !ok(line))!;
  return { kind: 'refused', why: refused.summary };
}
