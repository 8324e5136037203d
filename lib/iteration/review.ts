// The independent review: after an iteration passes (the source agrees, the gates pass), a second agent,
// fresh and of any CLI, judges the work from the task, the diff and the gate results, and must end with
// `VERDICT: APPROVE` or `VERDICT: REJECT: <reasons>`. It runs through the same runAgent as the worker
// (retries, usage waits), must not change the repository, and ralph checks that it did not.
import path from 'node:path';
import { finalAnswer } from '../agents/transcript.ts';
import type { ReviewRecord } from '../events.ts';
import type { GateResult } from '../gates.ts';
import type { Task } from '../sources/types.ts';
import { runAgent } from './agent-run.ts';
import type { IterationContext, Reviewer } from './context.ts';
import { reviewDiff } from './review-diff.ts';
import { loadReviewTemplate, renderReviewPrompt } from './review-prompt.ts';
import { parseVerdict } from './verdict.ts';
import { compareWorkStates, readWorkState, type WorkState } from './work-state.ts';

// Read at start-up, before anything runs: in its own module so --dry-run does not load the agent runner.
export { parseReviewSpec } from './review-spec.ts';

export type { Reviewer };

export interface ReviewInput {
  iteration: number;
  tasks: Task[];
  /** HEAD as the iteration began: the diff is taken from there. */
  base: string | undefined;
  gates: readonly GateResult[];
  /** Why ralph calls the iteration done. */
  evidence: string;
  /** The work tree as the worker left it: anything different afterwards is the reviewer's doing. */
  workBefore: WorkState;
}

/** Runs the reviewer once (with retries) and returns its verdict; never changes the repository itself. */
export async function reviewIteration(ctx: IterationContext, reviewer: Reviewer, input: ReviewInput): Promise<ReviewRecord> {
  const { deps, bus } = ctx;
  const startedAt = deps.now();
  const taskIds = input.tasks.map((task) => task.id);
  const briefs = await Promise.all(input.tasks.map((task) => ctx.source.brief(task)));
  const { workspace } = ctx;
  const prompt = renderReviewPrompt(loadReviewTemplate(), { iteration: input.iteration, evidence: input.evidence, briefs, gates: input.gates, diff: await reviewDiff(workspace.cwd, input.base) });
  bus.emit({ type: 'review_start', iteration: input.iteration, agent: reviewer.label, taskIds });
  const run = await runAgent(
    {
      root: ctx.root,
      cwd: workspace.cwd,
      config: ctx.config,
      deps,
      agent: reviewer.agent,
      // The worker's passthrough arguments belong to its own CLI, not to the reviewer's.
      request: { model: reviewer.model, extraArgs: [] },
      bus,
      signal: ctx.signal,
      logBase: path.join(ctx.logDir, `iteration-${input.iteration}-review`),
      env: { ...ctx.source.agentEnv?.(), ...workspace.env() },
      usageWait: ctx.usageWait,
      wrap: ctx.wrap,
      redactor: ctx.redactor,
      check: (transcript) => {
        const verdict = parseVerdict(finalAnswer(transcript));
        return verdict.kind === 'none' ? `no verdict: ${verdict.why}` : undefined;
      },
    },
    input.iteration,
    prompt,
  );
  const edits = compareWorkStates(input.workBefore, await readWorkState(workspace.git));
  const base = { agent: reviewer.label, taskIds, attempts: run.attempts, exhausted: false, durationMs: deps.now() - startedAt, costUsd: run.costUsd, inputTokens: run.inputTokens, outputTokens: run.outputTokens };
  let review: ReviewRecord;
  if (edits.headMoved || edits.files.length > 0) {
    // Left in place, not reverted: the reviewer's edits may be mixed with the worker's, and ralph never throws work away.
    const what = [...(edits.headMoved ? ['HEAD (it committed)'] : []), ...edits.files].join(', ');
    review = { ...base, verdict: 'edited', reasons: `the reviewer changed the repository although it must not (${what}); its changes are left in place for you to inspect`, filesChanged: edits.files };
    bus.emit({ type: 'warning', message: `the reviewer ${reviewer.label} changed ${what} during the review of iteration ${input.iteration}: the review fails, and its changes are left in place for you to inspect` });
  } else {
    const verdict = run.classification.kind === 'ok' ? parseVerdict(finalAnswer(run.transcript)) : undefined;
    if (verdict?.kind === 'approve') review = { ...base, verdict: 'approve' };
    else if (verdict?.kind === 'reject') review = { ...base, verdict: 'reject', reasons: verdict.reasons };
    else {
      const why = 'reason' in run.classification ? run.classification.reason : 'no verdict';
      review = { ...base, verdict: 'failed', reasons: run.exhausted ? `no usable verdict after ${run.attempts} attempts: ${why}` : why, exhausted: run.exhausted };
    }
  }
  bus.emit({ type: 'review_end', iteration: input.iteration, review });
  return review;
}

/** The iteration's failure reason when the review did not approve. */
export function rejectionReason(review: ReviewRecord): string {
  if (review.verdict === 'reject') return `the reviewer (${review.agent}) rejected the work: ${review.reasons ?? 'no reasons given'}`;
  return `the review failed: ${review.reasons ?? 'no verdict'}`;
}
