// Whether beads can share its tasks between hosts (--remote): only when every clone's bd talks to one
// database, which is beads 1.x in server mode (one `dolt sql-server` all hosts reach). Then bd's own claims
// say who works on what and no git ref is needed. Anything else (embedded Dolt, 0.5x SQLite) is this
// clone's own database: two hosts would each work through the whole epic, so --remote is refused.
//
// What counts as server mode is what bd itself reads (beads 1.x configfile.IsDoltServerMode, and the
// recordings' "Server mode" section): BEADS_DOLT_SERVER_MODE=1, else `dolt_mode` in .beads/metadata.json.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** How a clone's .beads/ keeps its database. */
export type BeadsSetup =
  | { kind: 'server'; host: string; port: number; database: string }
  | { kind: 'embedded'; mode?: string }
  | { kind: 'sqlite' }
  | { kind: 'unreadable'; reason: string };

/**
 * The oldest bd whose claims ralph can renew and take over (1.0.4): its `update --claim` is a
 * compare-and-set on status and assignee that succeeds again for the same actor. Older bd refuses the
 * holder's own claim, so a renewal or a guarded reopen could not be told from a lost claim.
 */
export const REMOTE_MIN_BD = '1.0.4';

const NEEDED = '--remote with beads needs a bd database every host shares: beads 1.0.4 or later in server mode (bd init --server …; README "Beads on several machines")';

/** The .beads/ folder bd uses for the repository at `root` (BEADS_DIR wins, as for bd). */
export function beadsDirOf(root: string, env: NodeJS.ProcessEnv): string {
  return env.BEADS_DIR ? path.resolve(root, env.BEADS_DIR) : path.join(root, '.beads');
}

/** Reads .beads/metadata.json as bd does; a missing file means bd's default, an embedded database. */
export function readBeadsSetup(beadsDir: string, env: NodeJS.ProcessEnv): BeadsSetup {
  let meta: Record<string, unknown> = {};
  try {
    meta = JSON.parse(readFileSync(path.join(beadsDir, 'metadata.json'), 'utf8')) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return { kind: 'unreadable', reason: `${path.join(beadsDir, 'metadata.json')}: ${(error as Error).message}` };
  }
  if (meta.backend === 'sqlite') return { kind: 'sqlite' };
  const server = env.BEADS_DOLT_SERVER_MODE === '1' || String(meta.dolt_mode ?? '').toLowerCase() === 'server';
  if (!server) return typeof meta.dolt_mode === 'string' && meta.dolt_mode ? { kind: 'embedded', mode: meta.dolt_mode } : { kind: 'embedded' };
  return {
    kind: 'server',
    host: env.BEADS_DOLT_SERVER_HOST || (typeof meta.dolt_server_host === 'string' && meta.dolt_server_host) || '127.0.0.1',
    port: Number(env.BEADS_DOLT_SERVER_PORT || meta.dolt_server_port || 3307),
    database: env.BEADS_DOLT_SERVER_DATABASE || (typeof meta.dolt_database === 'string' && meta.dolt_database) || 'beads',
  };
}

/** Whether dotted version `a` is older than `b` (numeric parts; a missing part counts as 0). */
export function olderThan(a: string, b: string): boolean {
  const left = a.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const right = b.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const diff = (left[index] ?? 0) - (right[index] ?? 0);
    if (diff !== 0) return diff < 0;
  }
  return false;
}

/**
 * The beads source's answer to TaskSource.remoteState: `database` when bd shares one server database (and
 * bd, when its version is known, is new enough), else one line saying what is here and what is needed.
 */
export function remoteStateOf(setup: BeadsSetup, bdVersion?: string): 'database' | { problem: string } {
  switch (setup.kind) {
    case 'sqlite':
      return { problem: `${NEEDED}; .beads/ here is beads 0.5x SQLite, a file on this machine only` };
    case 'embedded':
      return { problem: `${NEEDED}; .beads/ here is ${setup.mode ? `dolt_mode "${setup.mode}"` : 'an embedded database (no dolt_mode in .beads/metadata.json)'}, this clone's own` };
    case 'unreadable':
      return { problem: `${NEEDED}; cannot read ${setup.reason}` };
    case 'server':
      if (bdVersion !== undefined && olderThan(bdVersion, REMOTE_MIN_BD)) {
        return { problem: `${NEEDED}; bd here is ${bdVersion}, whose claims cannot be renewed or taken over safely: upgrade bd on every host` };
      }
      return 'database';
  }
}

/**
 * A warning for a server every host reaches at "its own" loopback address: right only when each host
 * tunnels that port to the one server (e.g. `ssh -L`); otherwise each host works on a different database.
 */
export function loopbackWarning(setup: BeadsSetup): string | undefined {
  if (setup.kind !== 'server' || !/^(127\.|localhost$|::1$)/.test(setup.host)) return undefined;
  return `bd's dolt server is ${setup.host}:${setup.port} (.beads/metadata.json): with --remote every host must reach the same server there (a tunnel), else set dolt_server_host to an address all hosts share`;
}
