// `ralph report [session]`: regenerates a saved session's reports.
import { readConfigFile, resolveConfig } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { RalphError } from '../errors.ts';
import { Git } from '../repo/git.ts';
import { loadSession, renderReports, resolveSession } from '../report/index.ts';
import type { ParsedArgv } from './argv.ts';

/** `ralph report [session]`: regenerates a session's reports and prints their paths (or JSON). */
export async function reportCommand(parsed: ParsedArgv, deps: Deps): Promise<number> {
  if (parsed.positionals.length > 1) throw new RalphError(`ralph report takes at most one session, got ${parsed.positionals.length}: ${parsed.positionals.join(' ')}`);
  const root = (await new Git(deps.cwd).root()) ?? deps.cwd;
  const json = resolveConfig({ flags: parsed.flags, env: deps.env, file: readConfigFile(root) }).json;
  const sessionId = resolveSession(root, parsed.positionals[0]);
  const paths = renderReports(root, loadSession(root, sessionId));
  if (json) deps.stdout.write(`${JSON.stringify({ ...paths, sessionId })}\n`);
  else deps.stdout.write(`${paths.markdown}\n${paths.html}\n`);
  return 0;
}
