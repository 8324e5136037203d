// Two runs of one repo started within the same second (a quick rerun, a Makefile `until` loop, a tmux
// respawn) must each keep their own logs, session record and reports. ralph runs in-process here, with a
// clock that starts where the test says, so "the same second" does not depend on the machine's speed.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { execCommand, abortableSleep, type Deps } from '../../lib/deps.ts';
import { FAST, makeSandbox, scenario, type Sandbox } from './helpers.ts';
import { answer, specKitProject, tick } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const TASKS = ['# Tasks: Demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create the project', '', '## Phase 2: User Story 1 - Greet (Priority: P1)', '', '- [ ] T002 [US1] Write greet()', ''].join('\n');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs ralph in-process in the sandbox; its clock reads `startAt` on its first call and then runs on. */
async function runAt(box: Sandbox, startAt: number, argv: string[]): Promise<Run> {
  let offset: number | undefined;
  const out: string[] = [];
  const err: string[] = [];
  const deps: Deps = {
    cwd: box.repo,
    env: box.env,
    now: () => {
      offset ??= startAt - Date.now();
      return Date.now() + offset;
    },
    sleep: abortableSleep,
    random: Math.random,
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
    exec: execCommand,
  };
  const code = await main(argv, new AbortController().signal, deps);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const list = (box: Sandbox, ...dir: string[]): string[] => {
  const full = path.join(box.repo, '.ralph', ...dir);
  return existsSync(full) ? readdirSync(full).sort() : [];
};

describe('two runs started in the same second', () => {
  it('each keep their own logs, session record and reports; report and status name the later one', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, TASKS);
    // In-process, ralph's git reads this process's environment, not the sandbox's: ralph commits what the
    // agent leaves, so the repository names who commits.
    for (const [key, value] of [['user.name', 'Ralph Test'], ['user.email', 'ralph@example.test']]) execFileSync('git', ['config', key!, value!], { cwd: sandbox.repo });
    scenario(sandbox, [
      { edit: [tick('T001')], lines: [answer('Did T001.')] },
      { edit: [tick('T002')], lines: [answer('Did T002.')] },
    ]);
    const second = new Date(2026, 0, 18, 10, 15, 0).getTime();
    const first = await runAt(sandbox, second + 100, ['--json', '--max-iterations', '1', ...FAST]);
    expect(first.code, first.stderr).toBe(2);
    const rerun = await runAt(sandbox, second + 600, ['--json', ...FAST]);
    expect(rerun.code, rerun.stderr).toBe(0);

    const ids = [JSON.parse(first.stdout).sessionId as string, JSON.parse(rerun.stdout).sessionId as string];
    expect(ids[0]).not.toBe(ids[1]);
    // Both named by the same second, then the millisecond and the tag (so the names still sort by time).
    expect(ids.map((id) => id.slice(0, 15))).toEqual(['20260118-101500', '20260118-101500']);
    expect(ids.every((id) => /^\d{8}-\d{6}-\d{3}-[0-9a-z]{6}$/.test(id)), ids.join(' ')).toBe(true);
    // Each session's log folder holds its own iteration only.
    expect(list(sandbox, 'logs')).toEqual(ids);
    expect(list(sandbox, 'logs', ids[0]!).filter((name) => name.startsWith('iteration-'))).toEqual(['iteration-1.jsonl', 'iteration-1.stderr.log']);
    expect(list(sandbox, 'logs', ids[1]!).filter((name) => name.startsWith('iteration-'))).toEqual(['iteration-2.jsonl', 'iteration-2.stderr.log']);
    expect(readFileSync(path.join(sandbox.repo, '.ralph', 'logs', ids[0]!, 'iteration-1.jsonl'), 'utf8')).toContain('Did T001.');
    expect(readFileSync(path.join(sandbox.repo, '.ralph', 'logs', ids[1]!, 'iteration-2.jsonl'), 'utf8')).toContain('Did T002.');
    // One record and one pair of reports per session, each with its own outcome.
    expect(list(sandbox, 'sessions')).toEqual(ids.map((id) => `${id}.json`));
    expect(list(sandbox, 'reports')).toEqual(ids.flatMap((id) => [`${id}.html`, `${id}.md`]));
    const saved = ids.map((id) => JSON.parse(readFileSync(path.join(sandbox.repo, '.ralph', 'sessions', `${id}.json`), 'utf8')) as { status: string; sessionId: string });
    expect(saved.map((summary) => [summary.sessionId, summary.status])).toEqual([[ids[0], 'limit_reached'], [ids[1], 'completed']]);

    const report = await runAt(sandbox, second + 900, ['report', '--json']);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).sessionId).toBe(ids[1]);
    const status = await runAt(sandbox, second + 950, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).sessionId).toBe(ids[1]);
  });
});
