// Several hosts on one beads database, as --remote sees them: clones whose .beads/metadata.json names one
// dolt server (beads 1.x server mode), played by the fake bd's FAKE_BD_SERVERS (tests/fakes/bd).
import fs from 'node:fs';
import path from 'node:path';
import type { FakeBdVersion, SeedIssue, StoredIssue } from '../../../fakes/bd-seed.ts';
import { tempDir } from '../../../support/temp.ts';
import { projectAt, standardIssues, type BeadsProject } from './bd-helpers.ts';

export interface SharedServer {
  servers: string;
  /** A clone of the repository on another host: its own folder, the server's database; `host` is its --remote id. */
  clone(host?: string, options?: { now?: () => number; lease?: number }): BeadsProject;
  /** The shared database's issues as stored now. */
  issues(): StoredIssue[];
}

/** A started server `127.0.0.1:3307` holding database `ws`: the standard epic plus `extra`. */
export function sharedServer(version: FakeBdVersion, extra: SeedIssue[] = []): SharedServer {
  const servers = tempDir('ralph-dolt-');
  const database = path.join(servers, '127.0.0.1_3307', 'ws');
  fs.mkdirSync(database, { recursive: true });
  fs.writeFileSync(path.join(database, 'fake-db.json'), JSON.stringify({ prefix: 'ws', issues: standardIssues(extra) }));
  return {
    servers,
    clone(host, options = {}) {
      const root = tempDir('ralph-clone-');
      fs.mkdirSync(path.join(root, '.beads'));
      const meta = { database: 'dolt', backend: 'dolt', dolt_mode: 'server', dolt_server_host: '127.0.0.1', dolt_server_port: 3307, dolt_database: 'ws' };
      fs.writeFileSync(path.join(root, '.beads', 'metadata.json'), JSON.stringify(meta));
      const project = projectAt(root, version, { env: { FAKE_BD_SERVERS: servers }, ...(host === undefined ? {} : { host }), ...(options.now ? { now: options.now } : {}) });
      if (options.lease !== undefined) project.ctx.config.extra.set('lease', options.lease);
      return project;
    },
    issues: () => (JSON.parse(fs.readFileSync(path.join(database, 'fake-db.json'), 'utf8')) as { issues: StoredIssue[] }).issues,
  };
}
