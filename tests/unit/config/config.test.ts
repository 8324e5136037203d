import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgv } from '../../../lib/cli/argv.ts';
import { DEFAULTS, readConfigFile, resolveConfig } from '../../../lib/config/index.ts';
import { tempDir } from '../../support/temp.ts';

const resolve = (argv: string[], env: NodeJS.ProcessEnv = {}, file: Record<string, unknown> = {}) =>
  resolveConfig({ flags: parseArgv(argv).flags, env, file, passthrough: parseArgv(argv).passthrough });

describe('resolveConfig', () => {
  it('uses the defaults when nothing is set', () => {
    const config = resolve([]);
    expect(config.retries).toBe(DEFAULTS.retries);
    expect(config.retryDelay).toBe(2000);
    expect(config.retryMaxDelay).toBe(300_000);
    expect(config.agent).toBe('claude');
    expect(config.maxIterations).toBeUndefined();
  });

  it('flags win over env, env over the file, the file over defaults', () => {
    const file = { maxIterations: 3, retries: 4, 'retry-delay': '1s', model: 'from-file' };
    const env = { RALPH_MAX_ITERATIONS: '5', RALPH_RETRIES: '6' };
    const config = resolve(['--max-iterations', '9'], env, file);
    expect(config.maxIterations).toBe(9);
    expect(config.retries).toBe(6);
    expect(config.retryDelay).toBe(1000);
    expect(config.model).toBe('from-file');
  });

  it('reads booleans and durations from env', () => {
    const config = resolve([], { RALPH_JSON: 'true', RALPH_RETRY_DELAY: '250ms', RALPH_DRY_RUN: '0' });
    expect(config.json).toBe(true);
    expect(config.dryRun).toBe(false);
    expect(config.retryDelay).toBe(250);
  });

  it('names the variable and value when env is bad', () => {
    expect(() => resolve([], { RALPH_MAX_ITERATIONS: 'lots' })).toThrow(/RALPH_MAX_ITERATIONS: invalid value "lots"/);
  });

  it('names the file and key for unknown or bad keys', () => {
    expect(() => resolve([], {}, { maxIteratons: 3 })).toThrow(/ralph.config.json: unknown option "maxIteratons"/);
    expect(() => resolve([], {}, { retries: 'many' })).toThrow(/ralph.config.json: retries: invalid value "many"/);
  });

  it('keeps the passthrough args for the agent', () => {
    expect(resolve(['--', '--max-turns', '5']).extraArgs).toEqual(['--max-turns', '5']);
  });
});

describe('readConfigFile', () => {
  it('is empty when there is no file and names the file when it is not JSON', () => {
    const dir = tempDir('ralph-config-');
    expect(readConfigFile(dir)).toEqual({});
    writeFileSync(path.join(dir, 'ralph.config.json'), '{ nope');
    expect(() => readConfigFile(dir)).toThrow(/ralph.config.json: not valid JSON/);
    writeFileSync(path.join(dir, 'ralph.config.json'), '[1]');
    expect(() => readConfigFile(dir)).toThrow(/expected a JSON object/);
  });
});
