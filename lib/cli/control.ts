import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Deps } from '../deps.ts';
import { Git } from '../repo/git.ts';
import { inspectLock, LOCK_FILE } from '../repo/lock.ts';
import { requestControl, type ControlAction } from '../control/request.ts';
import type { ParsedArgv } from './argv.ts';

/** How long `ralph stop --now` waits for the run to let go of its lock before saying so. */
const STOP_NOW_WAIT_MS = 30_000;

/**
 * `ralph stop [--now]`, `ralph pause`, `ralph unpause`: steer the run of this repo from another terminal.
 * 0 when the request was made, 1 when no run is alive here or it belongs to another user.
 */
export async function controlCommand(parsed: ParsedArgv, deps: Deps): Promise<number> {
  const root = (await new Git(deps.cwd).root()) ?? deps.cwd;
  const command = parsed.command as 'stop' | 'pause' | 'unpause';
  // --now with pause or unpause is refused by the parser (lib/cli/argv.ts): only stop reads it.
  const now = parsed.flags.get('now') === true;
  const action: ControlAction = now ? 'stop-now' : command;
  const result = requestControl(root, action, { by: `ralph ${command}${now ? ' --now' : ''} (PID ${process.pid})`, now: deps.now() });
  if (result.exitCode !== 0) {
    deps.stderr.write(`ralph: ${result.message}\n`);
    if (!existsSync(path.join(root, '.ralph')) && !existsSync(path.join(root, LOCK_FILE))) deps.stderr.write(`  hint: run it in the repository ralph works on\n`);
    return result.exitCode;
  }
  deps.stdout.write(`${result.message}\n`);
  if (action !== 'stop-now' || result.pid === undefined) return 0;
  // Like Ctrl+C in its own pane: wait until the agent is stopped and the lock is released.
  const deadline = deps.now() + STOP_NOW_WAIT_MS;
  while (deps.now() < deadline) {
    const lock = inspectLock(root, deps.now());
    if (!lock.held || lock.info?.pid !== result.pid) {
      deps.stdout.write(`ralph (PID ${result.pid}) stopped\n`);
      return 0;
    }
    await deps.sleep(100);
  }
  deps.stderr.write(`ralph: ralph (PID ${result.pid}) is still stopping after ${STOP_NOW_WAIT_MS / 1000}s; 'ralph stop --now' again forces it\n`);
  return 1;
}
