import { describe, expect, it } from 'vitest';
import type { Output } from '../../../lib/deps.ts';
import { LineView } from '../../../lib/view/plain.ts';
import { sampleSummary } from '../report/fixture.ts';

// The sample's records finish ws-9w6.2 and ws-9w6.5.
const remote = { name: 'origin', branch: 'feat', host: 'host1', landedHere: 2, landedElsewhere: 3 };

describe("--remote in the run's last lines", () => {
  it('the line after the end line, only with --remote', () => {
    const lines = (summary: ReturnType<typeof sampleSummary>): string[] => {
      let text = '';
      const out = { isTTY: false, write: (chunk: string) => ((text += chunk), true) } as unknown as Output;
      const view = new LineView({ out, color: false, quiet: true, verbose: false });
      view.emit({ type: 'session_start', sessionId: 's', source: 'prd', target: 'prd.json', agent: 'claude', maxIterations: 4, pid: 1, logDir: '/tmp' }, 0);
      view.emit({ type: 'session_end', summary }, 1000);
      return text.split('\n').filter(Boolean).map((line) => line.replace(/^\S+ \S+ /, ''));
    };
    const shown = lines(sampleSummary({ remote }));
    expect(shown[0]).toMatch(/^limit_reached: /);
    expect(shown[1]).toBe('landed here 2 (ws-9w6.2, ws-9w6.5), by other hosts 3 on origin/feat');
    expect(lines(sampleSummary())).toHaveLength(1);
  });
});
