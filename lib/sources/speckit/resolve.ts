// Which Spec Kit feature a run works on. The decision is pure over a gathered view of the project.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface FeatureDir {
  /** Folder name, e.g. `001-user-auth`. */
  name: string;
  hasTasks: boolean;
}

export type ResolvedVia = 'option' | 'SPECIFY_FEATURE_DIRECTORY' | 'SPECIFY_FEATURE' | 'feature.json' | 'branch' | 'only feature';

export interface ResolvedFeature {
  /** Folder name, used as the feature's name. */
  name: string;
  /** Absolute folder path. */
  dir: string;
  /** Path relative to the root with `/` separators (absolute when outside the root). */
  rel: string;
  via: ResolvedVia;
}

export type Resolution = { ok: true; feature: ResolvedFeature } | { ok: false; problem: string };

/** Everything the resolution rules look at, read once from the project. */
export interface ResolveInput {
  root: string;
  option?: string;
  env: { SPECIFY_FEATURE_DIRECTORY?: string; SPECIFY_FEATURE?: string };
  /** Raw text of `.specify/feature.json`, when present. */
  featureJson?: string;
  branch?: string;
  /** Folders under `specs/`. */
  features: FeatureDir[];
  isDir(absolute: string): boolean;
}

export const SPECS_DIR = 'specs';

function relOf(root: string, dir: string): string {
  const rel = path.relative(root, dir);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return dir;
  return rel.split(path.sep).join('/');
}

function found(input: ResolveInput, dir: string, via: ResolvedVia): Resolution {
  return { ok: true, feature: { name: path.basename(dir), dir, rel: relOf(input.root, dir), via } };
}

function listCandidates(names: string[]): string {
  return names.map((name) => `${SPECS_DIR}/${name}`).join(', ');
}

/** The numeric or timestamp prefix of a branch: `feat/004-x` → `004`, `20260118-101500-x` → `20260118-101500`. */
export function branchPrefix(branch: string): string | undefined {
  const last = branch.split('/').at(-1) ?? branch;
  return /^(\d{8}-\d{6})-/.exec(last)?.[1] ?? /^(\d+)-/.exec(last)?.[1];
}

/** A feature given by path (relative to the root, or absolute, or its tasks.md) or by name or number prefix. */
function byNameOrPath(input: ResolveInput, value: string, via: ResolvedVia, what: string): Resolution {
  const trimmed = value.trim();
  let candidate = path.resolve(input.root, trimmed);
  if (path.basename(candidate) === 'tasks.md') candidate = path.dirname(candidate);
  if (input.isDir(candidate)) return found(input, candidate, via);
  const looksLikePath = trimmed.includes('/') || trimmed.includes(path.sep) || path.isAbsolute(trimmed);
  if (!looksLikePath) {
    const exact = input.features.find((feature) => feature.name === trimmed);
    if (exact) return found(input, path.join(input.root, SPECS_DIR, exact.name), via);
    const prefixed = input.features.filter((feature) => feature.name.startsWith(`${trimmed}-`));
    if (prefixed.length === 1) return found(input, path.join(input.root, SPECS_DIR, prefixed[0]!.name), via);
    if (prefixed.length > 1) {
      return { ok: false, problem: `${what} "${trimmed}" matches several features: ${listCandidates(prefixed.map((f) => f.name))}; give the full folder name` };
    }
  }
  const known = input.features.length > 0 ? `; features found: ${listCandidates(input.features.map((f) => f.name))}` : `; ${SPECS_DIR}/ has no feature folders`;
  return { ok: false, problem: `${what} "${trimmed}" is not a feature folder (looked for ${relOf(input.root, candidate)})${known}` };
}

/**
 * First match wins: the `feature` option; SPECIFY_FEATURE_DIRECTORY; `.specify/feature.json`; the older
 * SPECIFY_FEATURE; the branch's numeric or timestamp prefix; the only feature with a tasks.md.
 * An explicit setting that points nowhere is an error rather than a fall-through.
 */
export function resolveFeature(input: ResolveInput): Resolution {
  if (input.option?.trim()) return byNameOrPath(input, input.option, 'option', '--feature');
  const envDir = input.env.SPECIFY_FEATURE_DIRECTORY?.trim();
  if (envDir) return byNameOrPath(input, envDir, 'SPECIFY_FEATURE_DIRECTORY', 'SPECIFY_FEATURE_DIRECTORY');

  if (input.featureJson !== undefined) {
    let data: unknown;
    try {
      data = JSON.parse(input.featureJson);
    } catch (error) {
      return { ok: false, problem: `.specify/feature.json is not valid JSON (${(error as Error).message}): fix it, or pass --feature NAME` };
    }
    const dir = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).feature_directory : undefined;
    if (typeof dir === 'string' && dir.trim()) return byNameOrPath(input, dir, 'feature.json', '.specify/feature.json feature_directory');
  }

  // Older Spec Kit scripts named the feature with SPECIFY_FEATURE where there was no git branch.
  const envName = input.env.SPECIFY_FEATURE?.trim();
  if (envName) return byNameOrPath(input, envName, 'SPECIFY_FEATURE', 'SPECIFY_FEATURE');

  const prefix = input.branch ? branchPrefix(input.branch) : undefined;
  if (prefix) {
    const matches = input.features.filter((feature) => feature.name.startsWith(`${prefix}-`));
    if (matches.length === 1) return found(input, path.join(input.root, SPECS_DIR, matches[0]!.name), 'branch');
    if (matches.length > 1) {
      return { ok: false, problem: `branch ${input.branch} matches several features: ${listCandidates(matches.map((f) => f.name))}; pass --feature NAME` };
    }
  }

  const withTasks = input.features.filter((feature) => feature.hasTasks);
  if (withTasks.length === 1) return found(input, path.join(input.root, SPECS_DIR, withTasks[0]!.name), 'only feature');
  if (withTasks.length > 1) {
    return {
      ok: false,
      problem: `cannot tell which feature to work on: several have a tasks.md: ${listCandidates(withTasks.map((f) => f.name))}; pass --feature NAME, set SPECIFY_FEATURE_DIRECTORY, or check out the feature's branch`,
    };
  }
  if (input.features.length === 1) return found(input, path.join(input.root, SPECS_DIR, input.features[0]!.name), 'only feature');
  if (input.features.length > 1) {
    return { ok: false, problem: `no feature has a tasks.md yet (${listCandidates(input.features.map((f) => f.name))}): run /speckit.tasks for the feature first` };
  }
  return { ok: false, problem: `no Spec Kit feature found: ${SPECS_DIR}/ has no feature folders; run /speckit.specify, /speckit.plan and /speckit.tasks first` };
}

function isDir(absolute: string): boolean {
  try {
    return statSync(absolute).isDirectory();
  } catch {
    return false;
  }
}

/** Feature folders under `specs/`, sorted by name. */
export function listFeatures(root: string): FeatureDir[] {
  const specs = path.join(root, SPECS_DIR);
  let entries: string[];
  try {
    entries = readdirSync(specs);
  } catch {
    return [];
  }
  return entries
    .filter((name) => !name.startsWith('.') && isDir(path.join(specs, name)))
    .sort()
    .map((name) => ({ name, hasTasks: existsSync(path.join(specs, name, 'tasks.md')) }));
}

/** A Spec Kit project: a `.specify/` folder or a `specs/*\/tasks.md`. Light: source detection loads only this module. */
export function detectSpeckit(root: string): boolean {
  return isDir(path.join(root, '.specify')) || listFeatures(root).some((feature) => feature.hasTasks);
}

/** Reads the project and applies the rules. */
export function resolveFeatureIn(root: string, options: { option?: string; env: NodeJS.ProcessEnv; branch?: string }): Resolution {
  let featureJson: string | undefined;
  try {
    featureJson = readFileSync(path.join(root, '.specify', 'feature.json'), 'utf8');
  } catch {
    featureJson = undefined;
  }
  return resolveFeature({
    root,
    option: options.option,
    env: { SPECIFY_FEATURE_DIRECTORY: options.env.SPECIFY_FEATURE_DIRECTORY, SPECIFY_FEATURE: options.env.SPECIFY_FEATURE },
    featureJson,
    branch: options.branch,
    features: listFeatures(root),
    isDir,
  });
}
