import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { needsTool } from './needs-tool.ts';
import { tempDir } from './temp.ts';

function binDir(...names: string[]): string {
  const dir = path.join(tempDir('ralph-needs-tool-'), 'bin');
  mkdirSync(dir);
  for (const name of names) {
    writeFileSync(path.join(dir, name), '#!/bin/sh\n');
    chmodSync(path.join(dir, name), 0o755);
  }
  return dir;
}

describe('needsTool', () => {
  it('finds the tool on PATH: the tests run with its path', () => {
    const dir = binDir('chromium-browser');
    const tool = needsTool('chromium', { bins: ['chromium', 'chromium-browser'], env: { PATH: `/nonexistent:${dir}` } });
    expect(tool).toMatchObject({ path: path.join(dir, 'chromium-browser'), skip: false, reason: '' });
    expect(tool.bin()).toBe(path.join(dir, 'chromium-browser'));
    expect(tool.title('renders')).toBe('renders');
    expect(tool.pathWith('/usr/bin:/bin')).toBe(`${dir}:/usr/bin:/bin`);
  });

  it('skips when it is missing, saying why and how to install it, once per tool', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const env = { PATH: binDir('other') };
    // A name no other test file asks for: the workers run many files, and the note is once per worker.
    const tool = needsTool('ralph-missing-tool', { apt: 'ralph-tool-package', env });
    expect(tool).toMatchObject({ path: undefined, skip: true, reason: 'ralph-missing-tool not found on PATH: install it with `apt-get install -y ralph-tool-package`' });
    expect(tool.title('runs the agent in a sandbox')).toBe('runs the agent in a sandbox [skipped: ralph-missing-tool not found on PATH: install it with `apt-get install -y ralph-tool-package`]');
    needsTool('ralph-missing-tool', { apt: 'ralph-tool-package', env });
    expect(warn.mock.calls).toEqual([['skipped: the tests that need ralph-missing-tool (ralph-missing-tool not found on PATH: install it with `apt-get install -y ralph-tool-package`)']]);
    warn.mockRestore();
  });

  it('fails instead of skipping when RALPH_REQUIRE_TOOLS lists it (CI installed it)', () => {
    const tool = needsTool('tmux', { env: { PATH: binDir(), RALPH_REQUIRE_TOOLS: 'chromium tmux,make' } });
    expect(tool.skip).toBe(false);
    expect(() => tool.bin()).toThrow('tmux not found on PATH: install it with `apt-get install -y tmux`; RALPH_REQUIRE_TOOLS lists tmux, so its tests must run');
  });

  it('does not take a folder or a file without the exec bit for the tool', () => {
    const dir = binDir();
    mkdirSync(path.join(dir, 'make'));
    writeFileSync(path.join(dir, 'tmux'), '');
    expect(needsTool('make', { env: { PATH: dir } }).path).toBeUndefined();
    expect(needsTool('tmux', { env: { PATH: dir } }).path).toBeUndefined();
  });
});
