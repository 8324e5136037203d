import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT, TSX, RALPH } from './helpers.ts';

const pkg = JSON.parse(execFileSync('node', ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: PROJECT, encoding: 'utf8' })) as { version: string; bin: Record<string, string> };

describe('the three ways to start ralph', () => {
  it('npx-style tsx ralph.ts, the ./ralph.ts shebang and the package bin all answer --version', () => {
    expect(execFileSync(TSX, [RALPH, '--version'], { encoding: 'utf8' })).toBe(`ralph ${pkg.version}\n`);
    expect(execFileSync(RALPH, ['-V'], { cwd: PROJECT, encoding: 'utf8' })).toBe(`ralph ${pkg.version}\n`);
    expect(execFileSync('node', [path.join(PROJECT, pkg.bin.ralph!), '--version'], { cwd: '/', encoding: 'utf8' })).toBe(`ralph ${pkg.version}\n`);
  });

  it('--help groups the options and lists the exit codes and environment variables', () => {
    const help = execFileSync(TSX, [RALPH, '--help'], { encoding: 'utf8' });
    for (const text of ['Run options:', 'Agent options:', 'Retries and limits options:', 'Exit codes:', '129  hung up (SIGHUP', '130  interrupted by Ctrl+C', "141  ralph's output closed", '143  terminated by SIGTERM', 'RALPH_MAX_ITERATIONS', '[default: 2s; RALPH_RETRY_DELAY]']) {
      expect(help).toContain(text);
    }
  });

  it('outside a git repository with no task source, exits 1 saying both, the repository first', () => {
    const result = spawnSync(TSX, [RALPH, '--dry-run'], { cwd: '/', encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      "ralph: ✗ not inside a git work tree (/): run ralph from your project's repository",
      expect.stringMatching(/^ralph: ✗ no task source found in \/: expected \.beads\//),
    ]);
  });
});
