// The steps of a session's end that do not decide anything: what the run holds in a shared task database
// given back, the report written, the on-exit hook run. Each says what went wrong as a warning: the run's
// outcome is already known and stays what it is.
import type { Deps } from '../deps.ts';
import { errorMessage } from '../errors.ts';
import type { RunSummary } from '../events.ts';
import type { Redactor } from '../redact/index.ts';
import { fileSystemError } from '../repo/fs-errors.ts';
import type { TaskSource } from '../sources/types.ts';

/** However the run ended (0, 1, 2, 130): what it still holds in a shared task database goes back (beads: its workers' claims). */
export async function giveBack(source: TaskSource, warn: (message: string) => void): Promise<void> {
  if (!source.release) return;
  try {
    for (const message of await source.release()) warn(message);
  } catch (error) {
    warn(`could not give back what this run holds in ${source.name}: ${errorMessage(error)}`);
  }
}

/** Both reports of the session; the Markdown one's path, or '' when they could not be written. */
export async function writeSessionReport(root: string, summary: RunSummary, info: (message: string) => void, warn: (message: string) => void): Promise<string> {
  try {
    const reports = (await import('../report/index.ts')).writeReports(root, summary);
    info(`report: ${reports.markdown} (HTML: ${reports.html})`);
    return reports.markdown;
  } catch (error) {
    warn(`could not write the session report: ${fileSystemError(error)?.message ?? errorMessage(error)}`);
    return '';
  }
}

/** The user's on-exit hook, told how the run ended (redacted, like everything ralph writes). */
export async function runOnExit(command: string, summary: RunSummary, report: string, redactor: Redactor, cwd: string, deps: Deps): Promise<void> {
  const variables = redactor.deep({ RALPH_STATUS: summary.status, RALPH_EXIT_CODE: String(summary.exitCode), RALPH_REPORT: report, RALPH_SESSION: summary.sessionId });
  await (await import('./exit-hook.ts')).runOnExitHook(command, variables, cwd, 60_000, { baseEnv: deps.env, stderr: deps.stderr });
}
