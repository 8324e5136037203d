#!/bin/sh
//bin/sh -c :; exec node "$(dirname "$(readlink -f "$0")")/bin/ralph.mjs" "$@"
// Run as a program (/path/to/ralph/ralph.ts, or a symlink to it), the two lines above are a shell script:
// `//bin/sh -c :` does nothing (/bin/sh, which line 1 needs anyway; /bin/true is missing on macOS), then
// node runs bin/ralph.mjs beside the real file (readlink -f: GNU, busybox, macOS 12.3+), which loads tsx
// from ralph's own node_modules: `npx tsx` would look for it in the caller's folder, then the registry.
// exec keeps the PID, so signals reach ralph and its exit code is the command's. To tsc and tsx (which
// drops the #! line) line 2 is a comment.
// Entry point: parse argv, run, set the exit code. Signals become one abort; a second Ctrl+C forces.
// ralph's own output closing (`| head`, a tee that died) is a stop too, like a hang-up (141).
import { main } from './lib/cli/main.ts';
import { realDeps } from './lib/deps.ts';
import { OutputClosedError } from './lib/errors.ts';
import { runForcedExitCleanups } from './lib/process/cleanup.ts';
import { guardOutputs } from './lib/process/output-guard.ts';

const controller = new AbortController();
let signals = 0;
const out = guardOutputs({ stdout: process.stdout, stderr: process.stderr }, (stream, code) => {
  signals += 1;
  controller.abort(new OutputClosedError(stream, code));
});
for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(name, () => {
    signals += 1;
    if (signals > 1) {
      out.stderr.write(`ralph: ${name} again: forcing exit\n`);
      const code = name === 'SIGTERM' ? 143 : name === 'SIGHUP' ? 129 : 130;
      runForcedExitCleanups(code);
      process.exit(code);
    }
    out.stderr.write(`ralph: ${name} received: stopping (again to force)\n`);
    controller.abort(name);
  });
}
process.on('exit', () => runForcedExitCleanups());
// Last resort (a bug: an error no code path caught): one line, the agents stopped, the lock dropped, exit 1.
for (const name of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(name, (error: unknown) => {
    out.stderr.write(`ralph: unexpected error: ${error instanceof Error ? error.message : String(error)}\n  hint: this is a bug in ralph: please report it (RALPH_DEBUG=1 shows the stack)\n`);
    if (process.env.RALPH_DEBUG === '1' && error instanceof Error) out.stderr.write(`${error.stack}\n`);
    runForcedExitCleanups();
    process.exit(1);
  });
}

process.exitCode = await main(process.argv.slice(2), controller.signal, { ...realDeps(), stdout: out.stdout, stderr: out.stderr });
