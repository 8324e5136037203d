import { describe, expect, it } from 'vitest';
import { parseVerdict } from '../../../lib/iteration/verdict.ts';

describe('parseVerdict', () => {
  it.each<[string, string, ReturnType<typeof parseVerdict>['kind'], string?]>([
    ['a plain approval', 'Looks right.\n\nVERDICT: APPROVE', 'approve'],
    ['an approval with trailing blank lines', 'ok\nVERDICT: APPROVE\n\n  \n', 'approve'],
    ['bold or backticks around the line', 'ok\n**VERDICT: APPROVE**', 'approve'],
    ['lower case', 'ok\nverdict: approve', 'approve'],
    ['a rejection with reasons', 'Found problems.\nVERDICT: REJECT: no tests for the parser; the CLI flag is not wired', 'reject', 'no tests for the parser; the CLI flag is not wired'],
    ['a bold rejection', '**VERDICT: REJECT: missing error handling**', 'reject', 'missing error handling'],
    ['a rejection without reasons', 'VERDICT: REJECT', 'reject', 'the reviewer gave no reasons'],
    ['an approval earlier, a rejection last', 'VERDICT: APPROVE\nwait, the tests fail\nVERDICT: REJECT: tests fail', 'reject', 'tests fail'],
    ['no verdict at all', 'The work looks fine to me.', 'none'],
    ['an empty answer', '', 'none'],
    ['a verdict that is not on the last line', 'VERDICT: APPROVE\n\nLet me know if you need more.', 'none'],
    ['a verdict quoted in prose', 'I would answer "VERDICT: APPROVE" if the tests passed.', 'none'],
    ['a negated verdict', 'I cannot give VERDICT: APPROVE here', 'none'],
    ['a block quote of the verdict', 'As instructed:\n> VERDICT: APPROVE', 'none'],
    ['a verdict inside a closed code block', '```\nVERDICT: APPROVE\n```', 'none'],
    ['an approval with a condition after it', 'VERDICT: APPROVE: once the tests are added', 'none'],
    ['NOT before the word', 'VERDICT: NOT APPROVE', 'none'],
    ['another word', 'VERDICT: APPROVED WITH CHANGES', 'none'],
  ])('%s', (_name, answer, kind, reasons) => {
    const verdict = parseVerdict(answer);
    expect(verdict.kind).toBe(kind);
    if (reasons !== undefined && verdict.kind === 'reject') expect(verdict.reasons).toBe(reasons);
  });

  it('says what the last line was when there is no verdict', () => {
    const verdict = parseVerdict('All good, merging.');
    expect(verdict).toEqual({ kind: 'none', why: "the reviewer's answer does not end with a VERDICT line (last line: All good, merging.)" });
  });
});
