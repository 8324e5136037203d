// PRD mode's verdict on one iteration, from the agent's report and ralph's own gate results. Pure.
import type { GateResult } from '../../gates.ts';
import type { AgentReport } from './report-parser.ts';

export interface PrdOutcome {
  kind: 'pass' | 'fail' | 'no_change';
  reason: string;
}

/** `test (exit 1), lint (timed out)` for the gates that failed. */
export function describeFailedGates(gates: readonly GateResult[]): string {
  return gates
    .filter((gate) => !gate.passed)
    .map((gate) => `${gate.name} (${gate.timedOut ? 'timed out' : `exit ${gate.exitCode}`})`)
    .join(', ');
}

/**
 * PRD mode's verdict on one iteration. Pass needs the agent run to have ended well, every gate to pass
 * and the agent to report the task completed (or to have marked it done in prd.json). A failed run,
 * failed gates or a reported failure block the task; a partial or missing report leaves it open.
 */
export function decidePrdOutcome(input: {
  agentReport: AgentReport;
  gates: readonly GateResult[];
  agentFailed: boolean;
  /** Why the agent run failed (idle timeout, retries spent…), so the task's lastError says what to fix. */
  agentFailure?: string;
  /** The agent marked the task done in prd.json itself (snarktank habit: `passes: true`). */
  markedDone?: boolean;
}): PrdOutcome {
  const { agentReport: report, gates } = input;
  if (input.agentFailed) return { kind: 'fail', reason: input.agentFailure ? `the agent run failed: ${input.agentFailure}` : 'the agent run failed' };
  const failed = describeFailedGates(gates);
  if (failed) return { kind: 'fail', reason: `quality gates failed: ${failed}` };
  if (report.status === 'failed') {
    return { kind: 'fail', reason: `the agent reported the task as failed${report.summary ? `: ${report.summary}` : ''}` };
  }
  const gateText = gates.length > 0 ? `${gates.length} gate${gates.length === 1 ? '' : 's'} passed` : 'no gates configured';
  if (report.status === 'completed') return { kind: 'pass', reason: `the agent completed the task; ${gateText}` };
  if (input.markedDone && report.status !== 'partial') return { kind: 'pass', reason: `the agent marked the task done in prd.json; ${gateText}` };
  if (report.status === 'partial') return { kind: 'no_change', reason: 'the agent reported partial progress' };
  if (report.contextLoss.length > 0) return { kind: 'no_change', reason: `the agent's output looks cut off: ${report.contextLoss.join('; ')}` };
  return { kind: 'no_change', reason: 'the agent did not report the task as completed' };
}
