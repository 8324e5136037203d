import { readConfigFile, resolveConfig } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { RalphError } from '../errors.ts';
import { Git } from '../repo/git.ts';
import type { ParsedArgv } from './argv.ts';
import { DEFAULT_LEASE_MS, remoteName } from '../landing/preflight.ts';

export const DEFAULT_PORT = 7420;

/**
 * `ralph serve [--port N] [--host ADDRESS]`: the live page of this repo's current or last run, until
 * Ctrl+C (exit 0). The URL goes to stdout; it never changes the run except through its stop and pause
 * buttons, which use the same channel as `ralph stop`.
 */
export async function serveCommand(parsed: ParsedArgv, deps: Deps, signal: AbortSignal): Promise<number> {
  const root = (await new Git(deps.cwd).root()) ?? deps.cwd;
  // --port and --host as every option: flag, then RALPH_PORT / RALPH_HOST, then ralph.config.json.
  const config = resolveConfig({ flags: parsed.flags, env: deps.env, file: readConfigFile(root) });
  const port = (config.extra.get('port') as number | undefined) ?? DEFAULT_PORT;
  const host = (config.extra.get('host') as string | undefined) ?? '127.0.0.1';
  if (port > 65535) throw new RalphError(`--port: invalid port ${port}: expected 0 to 65535`);
  const { startServer } = await import('../serve/server.ts');
  let server;
  try {
    // The claims on the remote: the one --remote names, else the one the shown run works with.
    const remote = remoteName(config);
    server = await startServer({ root, host, port, remote: { ...(remote ? { name: remote } : {}), leaseMs: (config.extra.get('lease') as number | undefined) ?? DEFAULT_LEASE_MS, deps: { ...deps, cwd: root } } });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new RalphError(`port ${port} on ${host} is in use`, { hint: 'pick another with --port N (or --port 0 for any free port)' });
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new RalphError(`cannot listen on ${host}: no such local address`, { hint: 'use --host 127.0.0.1 (the default)' });
    throw new RalphError(`cannot start the server on ${host}:${port}: ${(error as Error).message}`);
  }
  deps.stdout.write(`${server.url}\n`);
  deps.stderr.write(`ralph serve (PID ${process.pid}): the live page of the runs in ${root} at ${server.url} (Ctrl+C to stop)\n`);
  if (!server.control) deps.stderr.write(`ralph serve: warning: listening on ${host}, beyond this machine: anyone who reaches it sees the run; the page is read-only\n`);
  await new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  return 0;
}
