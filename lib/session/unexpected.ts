// An error ralph did not expect: one line for the user, its stack kept in the session's logs.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorMessage, RalphError } from '../errors.ts';
import { ensurePrivateDir, PRIVATE_FILE } from '../repo/private-files.ts';

/**
 * An error ralph did not expect (a bug): one line for the user, the stack kept in a file for the report.
 * Never a stack trace on the terminal.
 */
export function unexpectedError(error: unknown, root: string, sessionId: string): RalphError {
  const file = path.join(root, '.ralph', 'logs', sessionId, 'crash.txt');
  let kept = '';
  try {
    ensurePrivateDir(path.dirname(file));
    writeFileSync(file, `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`, { mode: PRIVATE_FILE });
    kept = `; the details are in ${file}`;
  } catch {
    // nowhere to keep them: the message alone
  }
  return new RalphError(`unexpected error: ${errorMessage(error)}`, { hint: `this is a bug in ralph: please report it${kept}` });
}
