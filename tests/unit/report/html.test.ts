import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../../lib/report/html.ts';
import { lanes, renderTimeline, spans, tickStep } from '../../../lib/report/timeline.ts';
import { record, sampleSummary } from './fixture.ts';

const svgOf = (html: string): string => {
  const match = /<svg[\s\S]*?<\/svg>/.exec(html);
  if (!match) throw new Error('no <svg> in the report');
  return match[0];
};

const barsOf = (svg: string): string[] => [...svg.matchAll(/<rect class="bar[^>]*>/g)].map((match) => match[0]);

describe('renderHtmlReport', () => {
  const html = renderHtmlReport(sampleSummary());

  it('a Questions section when an agent asked, its bar in the question colour, escaped', () => {
    const asked = renderHtmlReport(sampleSummary({ records: [record({ iteration: 1, taskId: 'T002', outcome: 'question', reason: 'asked: <b>404</b> or 410?', question: '<b>404</b> or 410?', tasksDone: [] })], questions: [{ taskId: 'T002', taskTitle: 'Greet', question: '<b>404</b> or 410?', iteration: 1, askedAt: 'x' }] }));
    expect(asked).toContain('<h2>Questions</h2>');
    expect(asked).toContain('<td>&lt;b&gt;404&lt;/b&gt; or 410?</td><td>waiting for an answer: ralph answer T002 &quot;…&quot;</td>');
    expect(asked).toContain('<span><i class="swatch" style="background:#8250df"></i>question</span>');
    expect(html).not.toContain('<h2>Questions</h2>');
  });

  it('is one well-formed-enough HTML page', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html.trimEnd().endsWith('</html>')).toBe(true);
    for (const tag of ['html', 'head', 'body', 'style', 'svg', 'table', 'tbody', 'dl']) {
      expect(html.split(`<${tag}`).length, tag).toBe(html.split(`</${tag}>`).length);
    }
  });

  it('needs nothing from the network: no URLs, scripts, external fonts or images', () => {
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script|<link|<img|@import|@font-face|url\(/i);
  });

  it('draws one bar per iteration, coloured by outcome, with a tooltip', () => {
    const bars = barsOf(svgOf(html));
    expect(bars).toHaveLength(4);
    expect(bars.map((bar) => /fill="([^"]+)"/.exec(bar)?.[1])).toEqual(['#2da44e', '#d1242f', '#d4a72c', '#2da44e']);
    expect(svgOf(html).match(/<title>/g)).toHaveLength(4);
    expect(svgOf(html)).toContain('<title>#2 ws-9w6.3 Task 2: build part 2\nfail after 2 attempts');
    expect(html).toMatch(/class="legend".*pass.*fail.*no change/s);
  });

  it('places bars by start time and duration along the axis', () => {
    const bars = barsOf(svgOf(html));
    const xs = bars.map((bar) => Number(/ x="([\d.]+)"/.exec(bar)?.[1]));
    const widths = bars.map((bar) => Number(/ width="([\d.]+)"/.exec(bar)?.[1]));
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(xs[0]).toBe(56);
    expect(widths[1]!).toBeLessThan(widths[0]!);
    expect(spans(sampleSummary().records)).toEqual([
      { start: 0, duration: 45_000 },
      { start: 60_000, duration: 20_000 },
      { start: 120_000, duration: 45_000 },
      { start: 180_000, duration: 45_000 },
    ]);
    expect(tickStep(225_000)).toBe(60_000);
    expect(tickStep(900)).toBe(200);
  });

  it('escapes every text: titles, messages, files', () => {
    const evil = renderHtmlReport(
      sampleSummary({
        message: 'done <script>alert(1)</script>',
        records: [record({ iteration: 1, taskTitle: `<img src=x onerror="alert('x')"> & more`, filesChanged: ['"quoted".ts'] })],
      }),
    );
    expect(evil).not.toContain('<script>');
    expect(evil).not.toContain('<img');
    expect(evil).toContain('done &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(evil).toContain('&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt; &amp; more');
    expect(evil).toContain('1: &quot;quoted&quot;.ts');
    expect(html).toContain('Escape &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quotes&quot; | pipes');
  });

  it('shows the totals and the table', () => {
    expect(html).toContain('<b>$0.0375</b><span>cost</span>');
    expect(html).toContain('<b>4,000 / 800</b><span>tokens in / out</span>');
    expect(html.match(/<tr><td class="num">/g)).toHaveLength(4);
    expect(html).toContain('<code title="0123456789abcdef0123456789abcdef01234567">0123456</code>');
  });

  it('copes with no iterations and with unreadable start times', () => {
    const empty = renderHtmlReport(sampleSummary({ records: [], iterations: 0 }));
    expect(empty).not.toContain('<svg');
    expect(empty).toContain('No iteration ran.');
    const broken = sampleSummary({ records: [record({ iteration: 1, startedAt: 'garbage' }), record({ iteration: 2, startedAt: 'nope', durationMs: 1000 })] });
    expect(spans(broken.records)).toEqual([
      { start: 0, duration: 45_000 },
      { start: 45_000, duration: 1000 },
    ]);
    expect(barsOf(svgOf(renderHtmlReport(broken)))).toHaveLength(2);
  });
});

describe('the timeline with several workers', () => {
  const start = (seconds: number): string => new Date(Date.UTC(2026, 0, 2, 3, 0, seconds)).toISOString();
  const records = [
    record({ iteration: 1, worker: 1, startedAt: start(0), durationMs: 30_000 }),
    record({ iteration: 2, worker: 2, startedAt: start(0), durationMs: 20_000 }),
    record({ iteration: 3, worker: 2, startedAt: start(21), durationMs: 25_000, outcome: 'fail' }),
  ];

  it('puts each worker in a lane of its own, one lane per iteration otherwise', () => {
    expect(lanes(records)).toEqual({ labels: ['w1', 'w2'], of: [0, 1, 1] });
    expect(lanes(records.map(({ worker: _worker, ...rest }) => rest)).labels).toEqual(['#1', '#2', '#3']);
  });

  it('draws the iterations of one worker on its lane, side by side in time with the others', () => {
    const svg = renderTimeline(records);
    expect(svg).toContain('aria-label="timeline of 3 iterations on 2 workers"');
    const bars = [...svg.matchAll(/<rect class="bar (\w+)" data-outcome="\w+" data-worker="(\d)" x="([\d.]+)" y="(\d+)"/g)].map((match) => ({ outcome: match[1], worker: match[2], x: Number(match[3]), y: Number(match[4]) }));
    expect(bars).toHaveLength(3);
    // Iterations 1 and 2 start together on different lanes; 3 follows 2 on worker 2's lane.
    expect(bars[0]!.x).toBe(bars[1]!.x);
    expect(bars[0]!.y).not.toBe(bars[1]!.y);
    expect(bars[2]!.y).toBe(bars[1]!.y);
    expect(bars[2]!.x).toBeGreaterThan(bars[1]!.x);
    expect(svg.match(/<text class="lane"[^>]*>(w\d)<\/text>/g)?.length).toBe(2);
  });
});
