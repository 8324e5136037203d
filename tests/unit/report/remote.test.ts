import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../../lib/report/html.ts';
import { renderMarkdownReport } from '../../../lib/report/markdown.ts';
import { sampleSummary } from './fixture.ts';

// The sample's records finish ws-9w6.2 and ws-9w6.5.
const remote = { name: 'origin', branch: 'feat', host: 'host1', landedHere: 2, landedElsewhere: 3 };

describe('--remote in the report', () => {
  it('the reports say which tasks this host landed and how many the others did', () => {
    expect(renderMarkdownReport(sampleSummary({ remote }))).toContain('| **remote** | landed here 2 (ws-9w6.2, ws-9w6.5), by other hosts 3 on origin/feat; this host: host1 |');
    expect(renderHtmlReport(sampleSummary({ remote }))).toContain('<dt>remote</dt><dd>landed here 2 (ws-9w6.2, ws-9w6.5), by other hosts 3 on origin/feat; this host: host1</dd>');
    expect(renderMarkdownReport(sampleSummary())).not.toContain('remote');
  });
});
