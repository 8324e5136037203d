import { RalphError } from '../errors.ts';
import type { Deps } from '../deps.ts';

/** One beads issue as `bd … --json` prints it (unknown fields are ignored). */
export interface BdIssue {
  id: string;
  title: string;
  status: string;
  priority: number;
  issue_type?: string;
  parent?: string;
  assignee?: string;
  dependencies?: Array<{ issue_id?: string; depends_on_id?: string; type?: string } | string>;
}

/** Unwraps the optional `{schema_version, data}` envelope and checks the payload is an issue array. */
export function parseBdArray(stdout: string, what: string): BdIssue[] {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new RalphError(`${what}: bd printed invalid JSON: ${stdout.trim().slice(0, 120)}`, {
      hint: 'check the bd version (ralph needs beads 1.x with --json)',
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

function bdErrorText(stdout: string, stderr: string): string {
  try {
    const parsed = JSON.parse(stdout) as { error?: string };
    if (parsed.error) return parsed.error;
  } catch {
    // not JSON
  }
  return (stderr.trim() || stdout.trim()).split('\n')[0] ?? 'no output';
}

/** The bd CLI, always with --json; ralph never reads .beads/ itself. */
export class Bd {
  constructor(
    private readonly deps: Deps,
    private readonly cwd: string,
  ) {}

  private async run(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    // CLAUDE_CODE / BD_AGENT_MODE shrink bd's default limits; every call passes --limit 0 anyway.
    const env = { ...this.deps.env };
    delete env.BD_JSON_ENVELOPE;
    return this.deps.exec('bd', [...args, '--json'], { cwd: this.cwd, env });
  }

  async query(args: string[]): Promise<BdIssue[]> {
    const what = `bd ${args.join(' ')}`;
    const result = await this.run(args);
    if (result.exitCode !== 0) throw new RalphError(`${what} failed: ${bdErrorText(result.stdout, result.stderr)}`);
    return parseBdArray(result.stdout, what);
  }

  /** `bd show ID`; undefined when bd says it does not exist. */
  async show(id: string): Promise<BdIssue | undefined> {
    const result = await this.run(['show', id]);
    if (result.exitCode !== 0) {
      const text = bdErrorText(result.stdout, result.stderr);
      if (/no issue found|not found/i.test(text)) return undefined;
      throw new RalphError(`bd show ${id} failed: ${text}`);
    }
    return parseBdArray(result.stdout, `bd show ${id}`)[0];
  }

  epics(): Promise<BdIssue[]> {
    return this.query(['list', '--type', 'epic', '--all', '--limit', '0']);
  }

  children(epic: string): Promise<BdIssue[]> {
    return this.query(['list', '--parent', epic, '--all', '--limit', '0']);
  }

  ready(epic: string): Promise<BdIssue[]> {
    return this.query(['ready', '--parent', epic, '--limit', '0', '--exclude-type', 'epic']);
  }

  async setStatus(id: string, status: string): Promise<void> {
    await this.query(['update', id, '--status', status]);
  }
}
