/**
 * Helpers for tests that drive the fake `bd` (tests/fakes/bd).
 *
 *   const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-'));
 *   seedBeads(dir, { prefix: 'rl', issues: [{ id: 'rl-ep1', title: 'Epic', issue_type: 'epic' },
 *                                            { id: 'rl-ep1.1', title: 'Task', parent: 'rl-ep1' }] });
 *   const env = fakeBdEnv({ FAKE_BD_LOG: path.join(dir, 'bd.log') });   // puts the fake first on PATH
 *   ... run ralph with { cwd: dir, env } ...
 *   readBdLog(path.join(dir, 'bd.log'))  // [{ argv: ['ready', '--json', ...], cwd, time }, ...]
 *   readBeads(dir).issues                // state after the run
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Directory holding the fake `bd` executable (put it first on PATH). */
export const FAKE_BD_DIR = path.dirname(fileURLToPath(import.meta.url));
/** Absolute path of the fake `bd` executable. */
export const FAKE_BD = path.join(FAKE_BD_DIR, 'bd');

/**
 * The fake bd as the e2e sandboxes call it: through the test run's bd server (tests/support/bd-server.ts),
 * one bash process a call instead of a node start, the same code answering (the client the global setup
 * wrote); FAKE_BD itself when no server runs. Pass `serverEnv()` along in the call's environment.
 */
export function fakeBdClient(): string {
  return process.env.FAKE_BD_SERVER && process.env.FAKE_BD_CLIENT ? process.env.FAKE_BD_CLIENT : FAKE_BD;
}

/** What the client needs in a call's environment to reach the server (nothing without one). */
export const serverEnv = (): Record<string, string> => (process.env.FAKE_BD_SERVER ? { FAKE_BD_SERVER: process.env.FAKE_BD_SERVER } : {});
/**
 * The bd behaviours the fake follows (FAKE_BD_VERSION), as recorded: beads 0.50.3, 1.0.5 (`1.x`), 1.2.2, and
 * `main`, the lease line (beads' main since August 2026, shipped as 1.3.0): claims with leases, heartbeat,
 * reclaim, close by the holder only.
 */
export const FAKE_BD_VERSIONS = ['0.50', '1.x', '1.2', 'main'] as const;
export type FakeBdVersion = (typeof FAKE_BD_VERSIONS)[number];

export type BdStatus = 'open' | 'in_progress' | 'blocked' | 'deferred' | 'closed' | 'pinned' | 'hooked';
export type BdIssueType =
  | 'bug' | 'feature' | 'task' | 'epic' | 'chore' | 'decision' | 'message'
  | 'molecule' | 'gate' | 'spike' | 'story' | 'milestone';
export type BdDepType = 'blocks' | 'parent-child' | 'related' | 'discovered-from';

export interface BdDependency {
  issue_id: string;
  depends_on_id: string;
  type: BdDepType;
  created_at: string;
}

/** One issue in a seed. Only id and title are required; see the header of tests/fakes/bd for defaults. */
export interface SeedIssue {
  id: string;
  title: string;
  status?: BdStatus;
  /** 0..4, 0 highest. Default 2. */
  priority?: number;
  /** Default 'task'. */
  issue_type?: BdIssueType;
  /** Parent id; adds the parent-child dependency. An id `X.N` with an existing `X` is a child of X anyway. */
  parent?: string;
  /** A bare id means a `blocks` dependency on that id (this issue waits for it). */
  dependencies?: Array<string | { depends_on_id: string; type?: BdDepType; created_at?: string }>;
  description?: string;
  acceptance_criteria?: string;
  notes?: string;
  assignee?: string;
  labels?: string[];
  /** ISO time. Default 2025-01-01T00:00:00Z plus the array index in minutes. */
  created_at?: string;
  updated_at?: string;
  started_at?: string;
  closed_at?: string;
  close_reason?: string;
  /** FAKE_BD_VERSION=main: when the claim's lease ends, and its last heartbeat. */
  lease_expires_at?: string;
  heartbeat_at?: string;
}

export interface SeedDb {
  /** Prefix for ids made by `bd create`. Default 'bd'. */
  prefix?: string;
  issues: SeedIssue[];
}

/** An issue as stored once the fake has normalised the file (the first bd call does that). */
export interface StoredIssue {
  id: string;
  title: string;
  status: BdStatus;
  priority: number;
  issue_type: BdIssueType;
  owner?: string;
  created_at: string;
  created_by?: string;
  updated_at: string;
  labels: string[];
  dependencies: BdDependency[];
  parent?: string;
  description?: string;
  acceptance_criteria?: string;
  notes?: string;
  assignee?: string;
  started_at?: string;
  closed_at?: string;
  close_reason?: string;
}

export interface BdLogEntry {
  argv: string[];
  cwd: string;
  time: string;
}

/** Creates `<dir>/.beads/fake-db.json` holding the seed. Returns the .beads path. */
export function seedBeads(dir: string, seed: SeedDb): string {
  const beadsDir = path.join(dir, '.beads');
  fs.mkdirSync(beadsDir, { recursive: true });
  fs.writeFileSync(path.join(beadsDir, 'fake-db.json'), JSON.stringify(seed, null, 2) + '\n');
  return beadsDir;
}

/**
 * The database file as it is now. The first bd call of any kind rewrites a seed in normalised
 * form (defaults, parent links, full dependency objects); before any call you get the seed back.
 */
export function readBeads(dir: string): { prefix: string; issues: StoredIssue[] } {
  return JSON.parse(fs.readFileSync(path.join(dir, '.beads', 'fake-db.json'), 'utf8'));
}

/** Parsed FAKE_BD_LOG lines; [] when the file does not exist (bd never ran). */
export function readBdLog(file: string): BdLogEntry[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as BdLogEntry);
}

/** Variables that change how bd (real or fake) behaves; stripped from the inherited env. */
const BD_ENV = /^(BD_|BEADS_|FAKE_BD_)|^CLAUDE_CODE$/;

/**
 * An env for child processes with the fake bd first on PATH and bd-affecting variables
 * (BD_*, BEADS_*, FAKE_BD_*, CLAUDE_CODE) removed from `base`, then `extra` applied.
 */
export function fakeBdEnv(extra: Record<string, string | undefined> = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!BD_ENV.test(k)) env[k] = v;
  env.PATH = [FAKE_BD_DIR, base.PATH ?? ''].filter(Boolean).join(path.delimiter);
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}
