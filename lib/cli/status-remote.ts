// `ralph status` with --remote (or RALPH_REMOTE, or "remote" in ralph.config.json): the feature's claims on
// the remote beside this clone's own run. Looking costs a fetch, so `--watch` looks every few seconds, in
// the background: a remote that does not answer never freezes the screen.
import { readConfigFile, resolveConfig } from '../config/index.ts';
import type { Deps } from '../deps.ts';
import { errorMessage } from '../errors.ts';
import { Git } from '../repo/git.ts';
import { DEFAULT_LEASE_MS, remoteName } from '../landing/preflight.ts';
import { readRemoteClaims, type RemoteView } from '../landing/view.ts';
import type { ParsedArgv } from './argv.ts';

/** How often `--watch` fetches the claims again. */
const REMOTE_REFRESH_MS = 5000;

export interface RemoteLook {
  /** The last view, refreshed when it is older than REMOTE_REFRESH_MS; the first call waits for it. */
  view(): Promise<RemoteView>;
}

/** The remote `ralph status` shows, when one is configured; undefined otherwise. */
export async function remoteLook(root: string, parsed: ParsedArgv, deps: Deps, signal: AbortSignal): Promise<RemoteLook | undefined> {
  let name: string | undefined;
  let leaseMs = DEFAULT_LEASE_MS;
  try {
    const config = resolveConfig({ flags: parsed.flags, env: deps.env, file: readConfigFile(root) });
    name = remoteName(config);
    leaseMs = (config.extra.get('lease') as number | undefined) ?? DEFAULT_LEASE_MS;
  } catch {
    // A configuration that cannot be read: the task section says why.
    return undefined;
  }
  if (!name) return undefined;
  const remote = name;
  const read = async (): Promise<RemoteView> => {
    const branch = await new Git(root).branch();
    if (!branch) return { name: remote, branch: '(detached HEAD)', claims: [], error: 'HEAD is detached: check out the feature branch to see its claims' };
    return readRemoteClaims({ root, deps, remote, branch, leaseMs, signal });
  };
  let last: RemoteView | undefined;
  let at = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;
  return {
    async view() {
      if (!pending && deps.now() - at >= REMOTE_REFRESH_MS) {
        pending = read()
          .then((view) => void (last = view))
          .catch((error: unknown) => void (last = { name: remote, branch: last?.branch ?? '?', claims: [], error: errorMessage(error) }))
          .finally(() => {
            at = deps.now();
            pending = undefined;
          });
      }
      if (!last) await pending;
      return last!;
    },
  };
}
