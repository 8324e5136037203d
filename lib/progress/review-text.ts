// One review in words, the same in progress.txt, the history, the report and the terminal.
import type { ReviewRecord } from '../events.ts';

const VERDICT_TEXT = { approve: 'approved', reject: 'rejected', failed: 'failed', edited: 'failed (the reviewer changed files)' } as const;

/** `approved by codex`, `rejected by claude:opus: no tests for the parser`, `failed (…) : no VERDICT line`. */
export function reviewLine(review: Pick<ReviewRecord, 'agent' | 'verdict' | 'reasons'>): string {
  const verdict = VERDICT_TEXT[review.verdict] ?? review.verdict;
  const by = review.verdict === 'approve' || review.verdict === 'reject' ? ` by ${review.agent}` : ` (${review.agent})`;
  return `${verdict}${by}${review.verdict !== 'approve' && review.reasons ? `: ${review.reasons}` : ''}`;
}
