// Session reports: the summary saved as .ralph/sessions/<id>.json, rendered to .ralph/reports/<id>.md and .html.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../errors.ts';
import type { RunSummary } from '../events.ts';
import { writeFileAtomic } from '../repo/fs-atomic.ts';
import { PRIVATE_FILE } from '../repo/private-files.ts';
import { renderHtmlReport } from './html.ts';
import { renderMarkdownReport } from './markdown.ts';

export { renderHtmlReport } from './html.ts';
export { renderMarkdownReport } from './markdown.ts';

export interface ReportPaths {
  markdown: string;
  html: string;
}

export const sessionsDir = (root: string): string => path.join(root, '.ralph', 'sessions');
export const reportsDir = (root: string): string => path.join(root, '.ralph', 'reports');

/** Renders both reports of a summary into .ralph/reports/, atomically; returns their paths. */
export function renderReports(root: string, summary: RunSummary): ReportPaths {
  const base = path.join(reportsDir(root), summary.sessionId);
  const paths = { markdown: `${base}.md`, html: `${base}.html` };
  writeFileAtomic(paths.markdown, renderMarkdownReport(summary), { mode: PRIVATE_FILE });
  writeFileAtomic(paths.html, renderHtmlReport(summary), { mode: PRIVATE_FILE });
  return paths;
}

/** Saves the summary as .ralph/sessions/<id>.json (what `ralph report` reads), then writes both reports. */
export function writeReports(root: string, summary: RunSummary): ReportPaths {
  writeFileAtomic(path.join(sessionsDir(root), `${summary.sessionId}.json`), `${JSON.stringify(summary, null, 2)}\n`, { mode: PRIVATE_FILE });
  return renderReports(root, summary);
}

/** The saved session ids, oldest first (ids start YYYYMMDD-HHmmss-SSS, so names sort by time; see session/id.ts). */
export function listSessions(root: string): string[] {
  const dir = sessionsDir(root);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .map((name) => name.slice(0, -'.json'.length))
    .sort();
}

/** Reads a saved summary, checking it is one. */
export function loadSession(root: string, sessionId: string): RunSummary {
  const file = path.join(sessionsDir(root), `${sessionId}.json`);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new RalphError(`${file}: cannot read the session summary: ${(error as Error).message}`, { cause: error });
  }
  const summary = data as Partial<RunSummary> | null;
  if (!summary || typeof summary !== 'object' || typeof summary.sessionId !== 'string' || !Array.isArray(summary.records)) {
    throw new RalphError(`${file}: not a ralph session summary (no sessionId or records)`, { hint: 'remove the file, or restore it from a backup' });
  }
  return summary as RunSummary;
}

/** Picks the session named on the command line (`latest` or nothing: the newest). */
export function resolveSession(root: string, requested: string | undefined): string {
  const known = listSessions(root);
  if (known.length === 0) {
    throw new RalphError(`no sessions recorded in ${sessionsDir(root)}`, { hint: 'a report is written at the end of every ralph run; run ralph first' });
  }
  if (requested === undefined || requested === 'latest') return known[known.length - 1]!;
  const id = path.basename(requested).replace(/\.(json|md|html)$/, '');
  if (known.includes(id)) return id;
  const shown = known.slice(-10).reverse();
  throw new RalphError(`unknown session ${JSON.stringify(requested)}: known sessions (newest first): ${shown.join(', ')}${known.length > shown.length ? `, … (${known.length} in all)` : ''}`, {
    hint: "run 'ralph report' without a session for the latest one",
  });
}
