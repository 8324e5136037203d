import { spawnSync } from 'node:child_process';
import { RalphError } from '../../errors.ts';
import type { Deps } from '../../deps.ts';

/** An issue that `bd show` lists as a dependency or dependent: a whole issue plus how it is related. */
export interface BdRelated {
  id: string;
  status?: string;
  title?: string;
  issue_type?: string;
  dependency_type?: string;
}

/**
 * One beads issue as `bd … --json` prints it (unknown fields are ignored). ralph reads only what every bd
 * from 0.4x to 1.x prints: `ready` items carry counts only, `list` items no `parent` (and, on 1.x, no
 * dependencies), `show` lists dependencies and dependents as whole issues with a `dependency_type`.
 */
export interface BdIssue {
  id: string;
  title: string;
  status: string;
  priority: number;
  issue_type?: string;
  assignee?: string;
  /** When the issue was made: bd ready lists by priority, then oldest first. */
  created_at?: string;
  /** When bd last wrote the issue (every bd prints it; 1.x to the second): how --remote tells a dead host's claim. */
  updated_at?: string;
  /** The lease line (beads' main, 1.3): when the claim ends unless its holder runs `bd heartbeat`. */
  lease_expires_at?: string;
  labels?: string[];
  description?: string;
  acceptance_criteria?: string;
  design?: string;
  /** Only `bd show` output is relied on: whole issues with `dependency_type`. */
  dependencies?: Array<BdRelated | { issue_id?: string; depends_on_id?: string; type?: string }>;
  dependents?: BdRelated[];
}

/** Unwraps the optional `{schema_version, data}` envelope and checks the payload is an issue array. */
export function parseBdArray(stdout: string, what: string): BdIssue[] {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new RalphError(`${what}: bd printed invalid JSON: ${stdout.trim().slice(0, 120)}`, {
      hint: 'check the bd version (ralph needs beads 0.4x or later, with --json)',
    });
  }
  if (value && typeof value === 'object' && !Array.isArray(value) && 'data' in value) value = (value as { data: unknown }).data;
  if (!Array.isArray(value)) throw new RalphError(`${what}: expected a JSON array from bd, got ${JSON.stringify(value)?.slice(0, 120)}`);
  return value.map((item, index) => {
    const issue = item as Partial<BdIssue> | null;
    if (!issue || typeof issue.id !== 'string' || typeof issue.title !== 'string' || typeof issue.status !== 'string') {
      throw new RalphError(`${what}: item ${index} is not a beads issue (needs id, title, status)`);
    }
    return { ...issue, priority: typeof issue.priority === 'number' ? issue.priority : 2 } as BdIssue;
  });
}

/** The message bd gave for a failure: the JSON `error` on stdout, else the first line of stderr. */
export function bdErrorText(stdout: string, stderr: string): string {
  try {
    const parsed = JSON.parse(stdout) as { error?: string; data?: { error?: string } };
    const error = parsed.error ?? parsed.data?.error;
    if (error) return error;
  } catch {
    // not JSON
  }
  return (stderr.trim() || stdout.trim()).split('\n')[0] ?? 'no output';
}

/** bd's words for an id it does not know: `no issue found matching "X"` (update, show's stderr) or `no issues found …` (show). */
const NOT_FOUND = /\bno issues? found\b|\bnot found\b/i;
/** How a bd older than 0.62 refuses `ready --exclude-type`. */
const NO_EXCLUDE_TYPE = /unknown flag: --exclude-type/;

/**
 * What to do when bd refuses to write a database another bd version migrated (an older bd after a newer
 * one: `schema version mismatch`, 1.0.5's `Field 'id' doesn't have a default value`), or one a newer bd
 * will migrate only with consent (a shared server: `bd migrate schema`); '' for any other failure.
 */
export function bdUpgradeHint(error: string): string {
  if (/schema version mismatch|doesn't have a default value/i.test(error)) return ' (a newer bd migrated this beads database; this bd can read it but not write it: use the same bd version on every clone that shares it)';
  if (/bd migrate schema/.test(error)) return ' (bd waits for a person to migrate the shared database: upgrade every clone\'s bd, then run bd migrate schema once)';
  return '';
}

/** The commands of bd's that ralph uses only where they exist (`bd --help` lists them). */
export interface BdCapabilities {
  /** The lease line (beads' main since August 2026, 1.3.0): a claim lives 5 minutes unless renewed by this. */
  heartbeat: boolean;
  /** The lease line: frees an expired claim (nothing else does). */
  reclaim: boolean;
  /** `bd human`: where beads keeps questions for people (1.2+). */
  human: boolean;
}

/**
 * The commands `bd --help` lists: a command line is two spaces, the name, two or more spaces, its summary,
 * under `Available Commands:` or one of the groups newer bd sorts them into.
 */
export function parseBdHelp(text: string): BdCapabilities {
  const commands = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^ {2}([a-z][\w-]*) {2,}\S/.exec(line);
    if (match) commands.add(match[1]!);
  }
  return { heartbeat: commands.has('heartbeat'), reclaim: commands.has('reclaim'), human: commands.has('human') };
}

/** The bd CLI, always with --json; ralph never reads .beads/ itself. */
export class Bd {
  /** Whether this bd takes `ready --exclude-type` (beads 0.62+); learnt from the first refusal, once per run. */
  private excludeType = true;
  private caps?: Promise<BdCapabilities>;

  constructor(
    private readonly deps: Deps,
    private readonly cwd: string,
  ) {}

  private env(): NodeJS.ProcessEnv {
    // CLAUDE_CODE / BD_AGENT_MODE shrink bd's default limits; every call passes --limit 0 anyway.
    const env = { ...this.deps.env };
    delete env.BD_JSON_ENVELOPE;
    return env;
  }

  private async run(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    return this.deps.exec('bd', [...args, '--json'], { cwd: this.cwd, env: this.env() });
  }

  /** A forced exit's bd: synchronous, killed after `timeoutMs`; its stdout when it succeeded, else undefined. */
  runNow(args: string[], timeoutMs: number): string | undefined {
    try {
      const result = spawnSync('bd', [...args, '--json'], { cwd: this.cwd, env: this.env(), timeout: Math.max(1, timeoutMs), killSignal: 'SIGKILL', encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      return result.status === 0 ? result.stdout : undefined;
    } catch {
      return undefined;
    }
  }

  /** A read that lists issues. Warnings bd prints on stderr beside a success are ignored. */
  async query(args: string[]): Promise<BdIssue[]> {
    const what = `bd ${args.join(' ')}`;
    const result = await this.run(args);
    if (result.exitCode !== 0) throw new RalphError(`${what} failed: ${bdErrorText(result.stdout, result.stderr)}`);
    return parseBdArray(result.stdout, what);
  }

  /**
   * A write whose refusal is an answer, not an error (a claim, a claim-guarded update): whether bd did it,
   * with the issues it printed, else its reason.
   */
  async attempt(args: string[]): Promise<{ ok: boolean; issues: BdIssue[]; error: string }> {
    const result = await this.run(args);
    if (result.exitCode !== 0 || !result.stdout.trim()) return { ok: false, issues: [], error: bdErrorText(result.stdout, result.stderr) };
    try {
      return { ok: true, issues: parseBdArray(result.stdout, `bd ${args.join(' ')}`), error: '' };
    } catch (error) {
      return { ok: false, issues: [], error: (error as Error).message };
    }
  }

  /**
   * What this bd can do, from `bd --help` (asked once, only by a run that needs to know): a build of beads'
   * main calls itself 1.2.2 like the release without leases, so the version alone cannot tell.
   */
  capabilities(): Promise<BdCapabilities> {
    this.caps ??= this.deps.exec('bd', ['--help'], { cwd: this.cwd, env: this.deps.env }).then(
      (result) => parseBdHelp(result.exitCode === 0 ? result.stdout : ''),
      () => parseBdHelp(''),
    );
    return this.caps;
  }

  /** A write whose answer is not an issue list (heartbeat, reclaim, human, comments): whether bd did it, and what it said. */
  async command(args: string[]): Promise<{ ok: boolean; stdout: string; error: string }> {
    const result = await this.run(args);
    return { ok: result.exitCode === 0, stdout: result.stdout, error: result.exitCode === 0 ? '' : bdErrorText(result.stdout, result.stderr) };
  }

  /** `bd version`: e.g. `1.0.5`, or undefined when bd does not say. */
  async version(): Promise<string | undefined> {
    const result = await this.run(['version']);
    return result.exitCode === 0 ? parseBdVersion(result.stdout) : undefined;
  }

  /** `bd show ID…`: the issues found (with their dependencies and dependents); [] when bd knows none of them. */
  async showMany(ids: readonly string[]): Promise<BdIssue[]> {
    const what = `bd show ${ids.join(' ')}`;
    const result = await this.run(['show', ...ids]);
    if (result.exitCode !== 0) {
      const text = bdErrorText(result.stdout, result.stderr);
      if (NOT_FOUND.test(text)) return [];
      throw new RalphError(`${what} failed: ${text}`);
    }
    return parseBdArray(result.stdout, what);
  }

  /** `bd show ID`; undefined when bd says it does not exist. */
  async show(id: string): Promise<BdIssue | undefined> {
    return (await this.showMany([id])).find((issue) => issue.id === id);
  }

  epics(): Promise<BdIssue[]> {
    return this.query(['list', '--type', 'epic', '--all', '--limit', '0']);
  }

  children(epic: string): Promise<BdIssue[]> {
    return this.query(['list', '--parent', epic, '--all', '--limit', '0']);
  }

  /** Ready descendants of the epic, epics left out (by bd when it can, always by issue_type too). */
  async ready(epic: string): Promise<BdIssue[]> {
    const args = ['ready', '--parent', epic, '--limit', '0'];
    if (this.excludeType) {
      const result = await this.run([...args, '--exclude-type', 'epic']);
      if (result.exitCode === 0) return notEpics(parseBdArray(result.stdout, `bd ${args.join(' ')} --exclude-type epic`));
      if (!NO_EXCLUDE_TYPE.test(result.stderr)) throw new RalphError(`bd ${args.join(' ')} --exclude-type epic failed: ${bdErrorText(result.stdout, result.stderr)}`);
      this.excludeType = false;
    }
    return notEpics(await this.query(args));
  }

  /**
   * `bd update ID --status S` (optionally setting the assignee; '' clears it). bd 0.50 answers a refused update (unknown id, invalid status) with exit 0,
   * nothing on stdout and the reason on stderr; 1.x exits 1: either way the error names the id.
   */
  async setStatus(id: string, status: string, options: { assignee?: string } = {}): Promise<void> {
    const args = ['update', id, '--status', status, ...(options.assignee === undefined ? [] : ['--assignee', options.assignee])];
    const what = `bd ${args.join(' ')}`;
    const result = await this.run(args);
    const text = (): string => bdErrorText(result.stdout, result.stderr);
    if (result.exitCode !== 0 || !result.stdout.trim()) {
      if (NOT_FOUND.test(text())) throw new RalphError(`cannot set ${id} to ${status}: beads has no issue ${id} (${what}: ${text()})`);
      throw new RalphError(`cannot set ${id} to ${status}: ${what} ${result.exitCode === 0 ? 'changed nothing' : 'failed'}: ${text()}${bdUpgradeHint(text())}`);
    }
    const updated = parseBdArray(result.stdout, what).find((issue) => issue.id === id);
    if (updated?.status !== status) throw new RalphError(`cannot set ${id} to ${status}: ${what} left it ${updated ? updated.status : 'out of its answer'}`);
  }
}

/** The version `bd version --json` prints (`{"version": "1.0.5", …}`), or its text line `bd version 1.0.5 (…)`. */
export function parseBdVersion(stdout: string): string | undefined {
  try {
    const parsed = JSON.parse(stdout) as { version?: unknown; data?: { version?: unknown } };
    const version = parsed.version ?? parsed.data?.version;
    if (typeof version === 'string') return version;
  } catch {
    // the text form
  }
  return /\bversion\s+v?(\d+\.\d+(?:\.\d+)?)/.exec(stdout)?.[1];
}

function notEpics(issues: BdIssue[]): BdIssue[] {
  return issues.filter((issue) => issue.issue_type !== 'epic');
}
