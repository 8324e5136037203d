import { formatDuration } from '../duration.ts';
import type { RunSummary } from '../events.ts';
import { escapeHtml } from './escape.ts';
import { OUTCOME_COLOUR, renderTimeline } from './timeline.ts';
import { AGENT_COLUMNS, agentRows, filesSummary, formatCost, formatCount, OUTCOME_LABEL, outcomeText, questionRows, reportFacts, reportTotals, reviewCell, reviewsText, shortSha, skippedText } from './totals.ts';

// Inline and system fonts only: the file must open anywhere, offline, exactly as written.
const STYLE = `
:root { color-scheme: light; --muted: #57606a; --line: #d0d7de; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #ffffff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.status { display: inline-block; padding: 2px 10px; border-radius: 12px; color: #fff; font-weight: 600; }
.status.ok { background: ${OUTCOME_COLOUR.pass}; } .status.limit { background: ${OUTCOME_COLOUR.no_change}; } .status.bad { background: ${OUTCOME_COLOUR.fail}; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card b { display: block; font-size: 20px; }
.card span { color: var(--muted); font-size: 12px; }
.legend { display: flex; gap: 16px; margin: 4px 0 8px; color: var(--muted); }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
svg.timeline { max-width: 1000px; display: block; }
svg.timeline text { font: 11px system-ui, sans-serif; fill: var(--muted); }
svg.timeline .grid { stroke: #eaeef2; } svg.timeline .axis { stroke: var(--muted); }
svg.timeline text.bar-label { fill: #fff; font-size: 10px; }
table { border-collapse: collapse; width: 100%; max-width: 1200px; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num { text-align: right; white-space: nowrap; }
td.outcome-pass { color: #1a7f37; } td.outcome-fail { color: #cf222e; } td.outcome-no_change { color: #9a6700; } td.outcome-question { color: #6639ba; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
footer { margin-top: 24px; color: var(--muted); font-size: 12px; }
`;

function statusClass(exitCode: number): string {
  return exitCode === 0 ? 'ok' : exitCode === 2 ? 'limit' : 'bad';
}

/** The session report as one self-contained HTML page: facts, totals, a timeline chart and the iterations table. */
export function renderHtmlReport(summary: RunSummary): string {
  const e = escapeHtml;
  const totals = reportTotals(summary);
  const facts = reportFacts(summary);
  const cards: Array<[string, string]> = [
    ['iterations', String(totals.iterations)],
    ['passed', String(totals.passed)],
    ['failed', String(totals.failed)],
    ['no change', String(totals.noChange)],
    ...(totals.questions > 0 ? [['questions', String(totals.questions)] as [string, string]] : []),
    ['tasks completed', String(totals.tasksCompleted)],
    ['tasks remaining', String(totals.tasksRemaining)],
    ['tasks skipped', skippedText(totals.skippedTaskIds)],
    ['cost', formatCost(totals.costUsd)],
    ['tokens in / out', `${formatCount(totals.inputTokens)} / ${formatCount(totals.outputTokens)}`],
  ];
  const reviewed = totals.reviews.count > 0;
  if (reviewed) cards.push(['reviews', reviewsText(totals.reviews)]);
  const rows = summary.records.map((record) => {
    const commit = shortSha(record.commit);
    return [
      '<tr>',
      `<td class="num">${record.iteration}</td>`,
      `<td><code>${e(record.taskId)}</code> ${e(record.taskTitle)}</td>`,
      `<td class="outcome-${e(record.outcome)}">${e(outcomeText(record))}</td>`,
      `<td class="num">${e(formatDuration(record.durationMs))}</td>`,
      `<td class="num">${e(formatCost(record.costUsd))}</td>`,
      `<td title="${e(record.filesChanged.join('\n'))}">${e(filesSummary(record.filesChanged))}</td>`,
      `<td>${commit ? `<code title="${e(record.commit ?? '')}">${e(commit)}</code>` : '—'}</td>`,
      reviewed ? `<td>${e(reviewCell(record))}</td>` : '',
      '</tr>',
    ].join('');
  });
  const questions = questionRows(summary).map(
    (row) => `<tr><td class="num">${row.iteration}</td><td><code>${e(row.taskId)}</code> ${e(row.taskTitle)}</td><td>${e(row.question)}</td><td>${e(row.state)}</td></tr>`,
  );
  const agents = agentRows(summary);
  const legend = (Object.keys(OUTCOME_COLOUR) as Array<keyof typeof OUTCOME_COLOUR>)
    .map((outcome) => `<span><i class="swatch" style="background:${OUTCOME_COLOUR[outcome]}"></i>${e(OUTCOME_LABEL[outcome])}</span>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ralph session ${e(summary.sessionId)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>ralph session ${e(summary.sessionId)} <span class="status ${statusClass(summary.exitCode)}">${e(summary.status)}</span></h1>
<p class="sub">${e(summary.message)}</p>
<dl class="facts">
${facts.map(([key, value]) => `<dt>${e(key)}</dt><dd>${e(value)}</dd>`).join('\n')}
</dl>
<h2>Totals</h2>
<div class="cards">
${cards.map(([label, value]) => `<div class="card"><b>${e(value)}</b><span>${e(label)}</span></div>`).join('\n')}
</div>
${agents.length > 0 ? `<h2>Agents</h2>\n<table><thead><tr>${AGENT_COLUMNS.map((name) => `<th>${e(name)}</th>`).join('')}</tr></thead><tbody>${agents.map((row) => `<tr>${row.map((cell) => `<td>${e(cell)}</td>`).join('')}</tr>`).join('')}</tbody></table>\n` : ''}<h2>Timeline</h2>
${summary.records.length === 0 ? '<p>No iteration ran.</p>' : `<div class="legend">${legend}</div>\n${renderTimeline(summary.records)}`}
<h2>Iterations</h2>
${
  summary.records.length === 0
    ? '<p>No iteration ran.</p>'
    : `<table>\n<thead><tr><th>#</th><th>task</th><th>outcome</th><th>duration</th><th>cost</th><th>files changed</th><th>commit</th>${reviewed ? '<th>review</th>' : ''}</tr></thead>\n<tbody>\n${rows.join('\n')}\n</tbody>\n</table>`
}
${questions.length > 0 ? `<h2>Questions</h2>\n<table>\n<thead><tr><th>#</th><th>task</th><th>question</th><th>answer</th></tr></thead>\n<tbody>\n${questions.join('\n')}\n</tbody>\n</table>\n` : ''}<footer>Generated by ralph from .ralph/sessions/${e(summary.sessionId)}.json</footer>
</body>
</html>
`;
}
