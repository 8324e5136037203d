import { describe, expect, it } from 'vitest';
import { createConvergence } from '../../../lib/session/converge.ts';
import type { ConvergeSupport } from '../../../lib/sources/types.ts';

function support(resumed = 0): ConvergeSupport & { closed: boolean[] } {
  const closed: boolean[] = [];
  return {
    closed,
    resumed: () => resumed,
    prompt: () => ({ text: '', via: '' }),
    baseline: () => '',
    judge: () => ({ kind: 'converged' }),
    record: () => undefined,
    close: (converged) => void closed.push(converged),
  };
}

describe('createConvergence', () => {
  it('asks for passes until one converges, then ends 0 and closes the cycle as converged', () => {
    const s = support();
    const c = createConvergence(s, 3);
    expect(c.next('feature x')).toEqual({ kind: 'pass', pass: 1 });
    c.ended(1, { kind: 'appended', tasks: ['T042'] });
    expect(c.next('feature x')).toEqual({ kind: 'pass', pass: 2 });
    c.ended(2, { kind: 'converged' });
    expect(c.next('feature x')).toEqual({ kind: 'end', status: 'completed', exitCode: 0, message: 'all tasks of feature x are complete, and converge pass 2 found nothing left of the spec' });
    expect(s.closed).toEqual([true]);
    expect(c.summary()).toEqual({ passes: 2, resumed: 0, maxPasses: 3, appended: [['T042'], []], converged: true });
  });

  it('the last allowed pass converged: 0, not the end of the passes', () => {
    const c = createConvergence(support(), 1);
    c.ended(1, { kind: 'converged' });
    expect(c.next('x')).toMatchObject({ kind: 'end', exitCode: 0 });
  });

  it('the last allowed pass found work: once it is done, exit 2, never 0', () => {
    const s = support();
    const c = createConvergence(s, 1);
    expect(c.next('x')).toEqual({ kind: 'pass', pass: 1 });
    c.ended(1, { kind: 'appended', tasks: ['T042', 'T043'] });
    expect(c.next('x')).toEqual({ kind: 'end', status: 'limit_reached', exitCode: 2, message: 'all tasks of x are complete, but not proven converged after 1 converge pass (--max-converge): the last one found T042, T043, now done' });
    expect(s.closed).toEqual([false]);
  });

  it('a pass that proved nothing does not end the run as converged: another pass, or exit 2 when none is left', () => {
    const c = createConvergence(support(), 2);
    c.ended(1, { kind: 'silent', reason: 'the converge pass changed nothing and did not answer "Converged"' });
    expect(c.next('x')).toEqual({ kind: 'pass', pass: 2 });
    c.ended(2, { kind: 'silent', reason: 'no answer' });
    expect(c.next('x')).toMatchObject({ kind: 'end', exitCode: 2, message: expect.stringContaining('not proven converged after 2 converge passes (--max-converge): the last one: no answer') });
  });

  it('goes on counting from the passes a cut-short run made', () => {
    const c = createConvergence(support(2), 3);
    expect(c.next('x')).toEqual({ kind: 'pass', pass: 3 });
    const spent = createConvergence(support(3), 3);
    expect(spent.next('x')).toMatchObject({ kind: 'end', exitCode: 2, message: expect.stringContaining('an interrupted run used them up') });
  });
});
