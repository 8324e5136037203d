import { execFileSync } from 'node:child_process';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseArgv } from '../../../lib/cli/argv.ts';
import { remoteLook } from '../../../lib/cli/status-remote.ts';
import { execCommand, type Deps, type ExecResult } from '../../../lib/deps.ts';
import { Git } from '../../../lib/repo/git.ts';
import { tempDir } from '../../support/temp.ts';

/** A clone on branch `feat` with a remote `origin` whose fetches the test answers by hand (`gate`). */
function setup() {
  const root = tempDir('ralph-status-remote-');
  execFileSync('git', ['init', '-q', '-b', 'feat', root]);
  execFileSync('git', ['remote', 'add', 'origin', 'git://127.0.0.1:9/feature.git'], { cwd: root });
  let now = 0;
  const fetches: Array<(result: ExecResult) => void> = [];
  const deps: Deps = {
    cwd: root,
    env: { PATH: process.env.PATH },
    now: () => now,
    sleep: async () => undefined,
    random: () => 0.5,
    stdout: process.stdout,
    stderr: process.stderr,
    exec: (bin, args, options) => (args[0] === 'fetch' ? new Promise<ExecResult>((resolve) => fetches.push(resolve)) : execCommand(bin, args, options)),
  };
  return { root, deps, fetches, tick: (ms: number) => (now += ms) };
}

const refused: ExecResult = { exitCode: 128, stdout: '', stderr: 'fatal: unable to connect to 127.0.0.1:\nConnection refused\n' };
const answered: ExecResult = { exitCode: 0, stdout: '', stderr: '' };
const until = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('remoteLook (ralph status --remote)', () => {
  it('nothing without a remote configured', async () => {
    const { root, deps } = setup();
    expect(await remoteLook(root, parseArgv(['status']), deps, new AbortController().signal)).toBeUndefined();
  });

  it('waits for the first look; then shows the last one while the next is under way (--watch never freezes on a slow remote)', async () => {
    const { root, deps, fetches, tick } = setup();
    // Each look starts by reading the branch, at once when view() starts it: the marker that a look began.
    const looks = vi.spyOn(Git.prototype, 'branch');
    onTestFinished(() => looks.mockRestore());
    const look = (await remoteLook(root, parseArgv(['status', '--remote', 'origin']), deps, new AbortController().signal))!;
    const first = look.view();
    expect(looks).toHaveBeenCalledTimes(1);
    await until(() => fetches.length === 1);
    fetches[0]!(refused);
    expect(await first).toMatchObject({ name: 'origin', branch: 'feat', claims: [] });
    expect((await first).error).toMatch(/^origin does not answer \(fatal: unable to connect to 127\.0\.0\.1:.*\)$/);
    // Within the refresh period: no new fetch.
    tick(4_000);
    await look.view();
    expect(looks).toHaveBeenCalledTimes(1);
    expect(fetches).toHaveLength(1);
    // Past it: a new fetch starts, and the last view is shown meanwhile.
    tick(1_000);
    expect((await look.view()).error).toMatch(/does not answer/);
    expect(looks).toHaveBeenCalledTimes(2);
    await until(() => fetches.length === 2);
    expect((await look.view()).error).toMatch(/does not answer/);
    fetches[1]!(answered);
    let view = await look.view();
    for (let tries = 0; view.error && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      view = await look.view();
    }
    expect(view).toEqual({ name: 'origin', branch: 'feat', claims: [] });
    expect(fetches).toHaveLength(2);
  });
});
