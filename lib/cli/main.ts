import { readFileSync } from 'node:fs';
import { realDeps, type Deps } from '../deps.ts';
import { errorMessage, RalphError } from '../errors.ts';
import { fileSystemError } from '../repo/fs-errors.ts';
import { parseArgv, type ParsedArgv } from './argv.ts';
import { saysTrue } from '../config/values.ts';
import { helpText } from './help.ts';
import { printError } from '../view/print-error.ts';
import { packageFile } from '../package-files.ts';

export function version(): string {
  const pkg = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** Dispatches a command line; returns the exit code and never calls process.exit. */
export async function main(argv: readonly string[], signal: AbortSignal, deps: Deps = realDeps()): Promise<number> {
  let parsed: ParsedArgv;
  try {
    parsed = parseArgv(argv);
  } catch (error) {
    printError(deps, error);
    // --json promises one JSON object on stdout, a command line ralph cannot read included.
    if (wantsJson(argv, deps.env)) deps.stdout.write(`${JSON.stringify({ status: 'failed', exitCode: 1, success: false, message: errorMessage(error), problems: [errorMessage(error)] })}\n`);
    return 1;
  }
  if (parsed.flags.get('help') === true) {
    deps.stdout.write(helpText(version()));
    return 0;
  }
  if (parsed.flags.get('version') === true) {
    deps.stdout.write(`ralph ${version()}\n`);
    return 0;
  }
  try {
    switch (parsed.command) {
      case 'run':
      case 'resume':
        // Commands load on demand: --help and --version stay fast.
        return await (await import('./run.ts')).runCommand(parsed, deps, signal);
      case 'status':
        return await (await import('./status.ts')).statusCommand(parsed, deps, signal);
      case 'report':
        return await (await import('./report.ts')).reportCommand(parsed, deps);
      case 'stop':
      case 'pause':
      case 'unpause':
        return await (await import('./control.ts')).controlCommand(parsed, deps);
      case 'answer':
        return await (await import('./answer.ts')).answerCommand(parsed, deps);
      case 'serve':
        return await (await import('./serve.ts')).serveCommand(parsed, deps, signal);
      case 'init':
        return await (await import('./init.ts')).initCommand(parsed, deps);
      default:
        throw new RalphError(`'ralph ${parsed.command}' is not available yet`);
    }
  } catch (error) {
    // One line, never a stack trace: a file-system error names its path; anything else is a bug of ralph's.
    const failure = error instanceof RalphError ? error : (fileSystemError(error) ?? new RalphError(`unexpected error: ${errorMessage(error)}`, { hint: 'this is a bug in ralph: please report it' }));
    printError(deps, failure);
    return failure.exitCode;
  }
}

/** Whether --json was asked for by a command line that could not be parsed (or by RALPH_JSON). */
function wantsJson(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  let wanted = saysTrue(env.RALPH_JSON ?? '');
  for (const arg of argv) {
    if (arg === '--') break;
    if (arg === '--json') wanted = true;
    else if (arg === '--no-json') wanted = false;
    else if (arg.startsWith('--json=')) wanted = saysTrue(arg.slice('--json='.length));
  }
  return wanted;
}
