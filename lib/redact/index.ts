// Secrets never land in ralph's output: one redactor, built once per run from the environment, replaces
// the values of secret-looking variables and well-known token shapes by `[redacted:NAME]` in everything
// ralph prints or writes (terminal, raw logs, events, status, session records, reports, progress entries,
// commit messages, --on-exit variables).
import type { Output } from '../deps.ts';
import { applyMatches, findSecrets, makePlan, type Literal, type ScanPlan } from './scan.ts';
import { isSecretName, MIN_SECRET_LENGTH } from './shapes.ts';
import { StreamRedactor } from './stream.ts';

export { StreamRedactor } from './stream.ts';
export { isSecretName, TOKEN_SHAPES } from './shapes.ts';

export interface RedactorOptions {
  /** The environment whose secret values are looked for. */
  env: NodeJS.ProcessEnv;
  /** Extra variable names (`*` globs allowed) whose values are secret, beside *KEY* *TOKEN* *SECRET* … */
  names?: readonly string[];
  /** False for --no-redact: everything passes through unchanged. */
  enabled?: boolean;
}

/** The secret values of an environment, each with its variable's name; longest names win ties. */
export function secretLiterals(env: NodeJS.ProcessEnv, names: readonly string[] = []): Literal[] {
  const literals = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length < MIN_SECRET_LENGTH || !isSecretName(name, names)) continue;
    // Agents print JSON: the value also appears with its quotes, backslashes and newlines escaped.
    for (const form of new Set([value, JSON.stringify(value).slice(1, -1)])) {
      if (!literals.has(form)) literals.set(form, name);
    }
  }
  return [...literals].map(([value, name]) => ({ name, bytes: Buffer.from(value, 'utf8') }));
}

/** Replaces secrets; pure once built. */
export class Redactor {
  readonly enabled: boolean;
  private readonly plan: ScanPlan;

  constructor(options: RedactorOptions) {
    this.enabled = options.enabled !== false;
    this.plan = makePlan(this.enabled ? secretLiterals(options.env, options.names) : []);
  }

  /** The names of the variables whose values are redacted (never the values). */
  get secretNames(): string[] {
    return [...new Set(this.plan.literals.map((literal) => literal.name))].sort();
  }

  /** The variables whose values occur in `bytes` (never the values; token shapes alone do not count). */
  secretNamesIn(bytes: Buffer): string[] {
    if (!this.enabled || this.plan.literals.length === 0) return [];
    const names = new Set<string>();
    for (const { name, bytes: value } of this.plan.literals) if (!names.has(name) && bytes.includes(value)) names.add(name);
    return [...names].sort();
  }

  /** One string with every secret replaced. */
  text(text: string): string {
    if (!this.enabled || text.length === 0) return text;
    const bytes = Buffer.from(text, 'utf8');
    const matches = findSecrets(bytes, this.plan);
    return matches.length === 0 ? text : applyMatches(bytes, 0, bytes.length, matches).toString('utf8');
  }

  /** A copy of a JSON-like value with every string in it redacted (the value itself when nothing changed). */
  deep<T>(value: T): T {
    if (!this.enabled) return value;
    return this.walk(value) as T;
  }

  /** A streaming redactor for one byte stream (stdout or stderr of one process). */
  stream(): { push(chunk: Buffer): Buffer; end(): Buffer } {
    if (!this.enabled) return { push: (chunk) => chunk, end: () => Buffer.alloc(0) };
    return new StreamRedactor(this.plan);
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) {
      let changed = false;
      const copy = value.map((item) => {
        const next = this.walk(item);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? copy : value;
    }
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      let changed = false;
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const next = this.walk(item);
        if (next !== item) changed = true;
        copy[key] = next;
      }
      return changed ? copy : value;
    }
    return value;
  }
}

/** A redactor that changes nothing (--no-redact, and code paths with no run behind them). */
export const NO_REDACTION = new Redactor({ env: {}, enabled: false });

/** An Output whose every write is redacted first; `current` is read at each write (the run may rebuild it). */
export function redactingOutput(out: Output, current: () => Redactor): Output {
  return {
    write: (text: string) => out.write(current().text(text)),
    get isTTY() {
      return out.isTTY;
    },
    get columns() {
      return out.columns;
    },
  };
}
