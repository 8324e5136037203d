// Where a resolved Spec Kit feature keeps its files, and the forgiving reads every part of the source uses.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROGRESS_FILE, TRACKING_FILE } from './progress.ts';
import type { ResolvedFeature } from './resolve.ts';

export function isDir(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

export function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Why an existing file cannot be read (a folder in its place, no permission), or undefined. */
export function unreadable(file: string): string | undefined {
  try {
    readFileSync(file);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? undefined : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
  }
}

export interface FeaturePaths {
  feature: ResolvedFeature;
  tasks: string;
  spec: string;
  plan: string;
  progress: string;
  tracking: string;
  checklists: string;
  /** The same, relative to the root, for prompts and messages. */
  rel: { tasks: string; spec: string; plan: string; progress: string; tracking: string };
}

/** The files of a feature, absolute and relative to the root. */
export function pathsOf(feature: ResolvedFeature): FeaturePaths {
  const at = (name: string): string => path.join(feature.dir, name);
  const rel = (name: string): string => `${feature.rel}/${name}`;
  return {
    feature,
    tasks: at('tasks.md'),
    spec: at('spec.md'),
    plan: at('plan.md'),
    progress: at(PROGRESS_FILE),
    tracking: at(TRACKING_FILE),
    checklists: at('checklists'),
    rel: { tasks: rel('tasks.md'), spec: rel('spec.md'), plan: rel('plan.md'), progress: rel(PROGRESS_FILE), tracking: rel(TRACKING_FILE) },
  };
}
