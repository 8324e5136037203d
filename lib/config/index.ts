import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RalphError, UsageError } from '../errors.ts';
import { camelName, envName, OPTIONS, type OptionSpec } from './options.ts';
import { convertValue, type OptionValue } from './values.ts';

export type SourceName = 'beads' | 'speckit' | 'prd';

/** Every setting of a run, after flags, environment, ralph.config.json and defaults were merged. */
export interface Config {
  source?: SourceName;
  dryRun: boolean;
  /** Undefined means the source's own default. */
  maxIterations?: number;
  epic?: string;
  prompt?: string;
  agent: string;
  model?: string;
  agentProfile?: string;
  retries: number;
  retryDelay: number;
  retryMaxDelay: number;
  timeout: number;
  idleTimeout: number;
  killGrace: number;
  maxWait: number;
  maxCost?: number;
  /** Workers running agents at once (1: the agent works in the repository itself). */
  parallel: number;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  help: boolean;
  version: boolean;
  /** Arguments after `--`, appended to the agent command. */
  extraArgs: string[];
  /** The `custom` agent's definition from ralph.config.json (`customAgent`). */
  customAgent?: { bin: string; args: string[]; format: 'claude-stream-json' | 'text' };
  /** Option values by kebab name, for options that modules add later (feature, gate, …). */
  extra: Map<string, OptionValue>;
}

export const DEFAULTS = {
  agent: 'claude',
  retries: 10,
  retryDelay: 2_000,
  retryMaxDelay: 300_000,
  timeout: 3_600_000,
  idleTimeout: 900_000,
  killGrace: 10_000,
  maxWait: 6 * 3_600_000,
} as const;

export const CONFIG_FILE = 'ralph.config.json';

/** Reads ralph.config.json at the repo root; missing is fine, malformed is a clear error. */
export function readConfigFile(root: string): Record<string, unknown> {
  const file = path.join(root, CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new RalphError(`${file}: cannot read: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new RalphError(`${file}: not valid JSON: ${(error as Error).message}`, {
      hint: 'fix the file or remove it',
    });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new RalphError(`${file}: expected a JSON object of options`);
  }
  return data as Record<string, unknown>;
}

function fileKeyToSpec(key: string): OptionSpec | undefined {
  return OPTIONS.find((option) => option.name === key || camelName(option.name) === key);
}

export interface ConfigLayers {
  flags: Map<string, OptionValue>;
  env: NodeJS.ProcessEnv;
  file: Record<string, unknown>;
  passthrough?: string[];
}

/** Merges the layers: flags win over RALPH_* env, env over ralph.config.json, the file over defaults. */
export function resolveConfig(layers: ConfigLayers): Config {
  const values = new Map<string, OptionValue>();
  const { customAgent, ...fileOptions } = layers.file;
  for (const [key, raw] of Object.entries(fileOptions)) {
    const spec = fileKeyToSpec(key);
    if (!spec || spec.configurable === false) {
      throw new UsageError(`${CONFIG_FILE}: unknown option ${JSON.stringify(key)}`);
    }
    values.set(spec.name, convertValue(spec, raw, `${CONFIG_FILE}: ${key}`));
  }
  for (const spec of OPTIONS) {
    if (spec.configurable === false) continue;
    const raw = layers.env[envName(spec.name)];
    if (raw === undefined || (raw === '' && spec.kind !== 'boolean')) continue;
    values.set(spec.name, convertValue(spec, spec.kind === 'list' ? raw.split(/\n/).filter(Boolean) : raw, envName(spec.name)));
  }
  for (const [name, value] of layers.flags) values.set(name, value);

  const get = <T extends OptionValue>(name: string): T | undefined => values.get(name) as T | undefined;
  return {
    source: get<string>('source') as SourceName | undefined,
    dryRun: get<boolean>('dry-run') ?? false,
    maxIterations: get<number>('max-iterations'),
    epic: get<string>('epic'),
    prompt: get<string>('prompt'),
    agent: get<string>('agent') ?? DEFAULTS.agent,
    model: get<string>('model'),
    agentProfile: get<string>('agent-profile'),
    retries: get<number>('retries') ?? DEFAULTS.retries,
    retryDelay: get<number>('retry-delay') ?? DEFAULTS.retryDelay,
    retryMaxDelay: get<number>('retry-max-delay') ?? DEFAULTS.retryMaxDelay,
    timeout: get<number>('timeout') ?? DEFAULTS.timeout,
    idleTimeout: get<number>('idle-timeout') ?? DEFAULTS.idleTimeout,
    killGrace: get<number>('kill-grace') ?? DEFAULTS.killGrace,
    maxWait: get<number>('max-wait') ?? DEFAULTS.maxWait,
    maxCost: get<number>('max-cost'),
    parallel: get<number>('parallel') ?? 1,
    json: get<boolean>('json') ?? false,
    quiet: get<boolean>('quiet') ?? false,
    verbose: get<boolean>('verbose') ?? false,
    help: get<boolean>('help') ?? false,
    version: get<boolean>('version') ?? false,
    extraArgs: layers.passthrough ?? [],
    customAgent: customAgent as Config['customAgent'],
    extra: values,
  };
}
