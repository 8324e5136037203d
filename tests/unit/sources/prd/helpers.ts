import { cpSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveConfig, type Config } from '../../../../lib/config/index.ts';
import type { Deps, ExecOptions, ExecResult } from '../../../../lib/deps.ts';
import type { OptionValue } from '../../../../lib/config/values.ts';
import { tempDir as makeTempDir } from '../../../support/temp.ts';

export const FIXTURES = fileURLToPath(new URL('../../../fixtures/prd/', import.meta.url));

export function tempDir(prefix = 'ralph-prd-'): string {
  return makeTempDir(prefix);
}

/** A temp copy of a fixture folder (dot folders included). */
export function copyFixture(name: string): string {
  const dir = tempDir();
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

export function makeConfig(flags: Record<string, OptionValue> = {}): Config {
  return resolveConfig({ flags: new Map(Object.entries(flags)), env: {}, file: {} });
}

export interface FakeDeps extends Deps {
  calls: Array<{ bin: string; args: readonly string[]; options: ExecOptions }>;
  clock: { now: number };
}

/** Deps with a settable clock and an exec that answers `git log` from a list. */
export function fakeDeps(root: string, commits: string[] = ['a1b2c3d ralph: US-001 Add priority field', '0f0f0f0 initial commit']): FakeDeps {
  const calls: FakeDeps['calls'] = [];
  const clock = { now: Date.parse('2026-11-20T10:00:00.000Z') };
  return {
    calls,
    clock,
    cwd: root,
    env: {},
    now: () => clock.now,
    sleep: async () => {},
    random: () => 0.5,
    stdout: { write: () => true },
    stderr: { write: () => true },
    exec: async (bin: string, args: readonly string[], options: ExecOptions): Promise<ExecResult> => {
      calls.push({ bin, args, options });
      if (bin === 'git' && args[0] === 'log') return { exitCode: 0, stdout: commits.map((line) => `${line}\n`).join(''), stderr: '' };
      return { exitCode: 1, stdout: '', stderr: 'unexpected command' };
    },
  };
}
