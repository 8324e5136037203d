import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CRASH_POINTS, parseCrashAt } from '../../../lib/recovery/crash-points.ts';
import { changedNs, splitChanged } from '../../../lib/recovery/index.ts';
import { agentsEnd } from '../../../lib/process/agent-pid.ts';
import { removeDeadSocketDirs, removeDeadTemps, tempWriter } from '../../../lib/recovery/leftover-locks.ts';
import { forcedByUser, hashPath, Journal, JOURNAL_FILE, readJournal, stepAtLeast, type JournalData } from '../../../lib/recovery/journal.ts';

describe('parseCrashAt (the test hook RALPH_TEST_CRASH_AT)', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['agent_started', { point: 'agent_started', nth: 1, early: false }],
    ['merged:3', { point: 'merged', nth: 3, early: false }],
    ['merged:2:early', { point: 'merged', nth: 2, early: true }],
    ['merged:2:late', undefined],
    ['merged:0', undefined],
    ['merged:x', undefined],
    ['agent-started', undefined],
    ['nowhere:2', undefined],
  ])('%j → %j', (value, expected) => {
    expect(parseCrashAt(value)).toEqual(expected);
  });

  it('knows every point once', () => {
    expect(new Set(CRASH_POINTS).size).toBe(CRASH_POINTS.length);
    for (const point of CRASH_POINTS) expect(parseCrashAt(point)?.point).toBe(point);
  });
});

describe('stepAtLeast', () => {
  it.each([
    ['task_claimed', 'state_written', false],
    ['gates_run', 'state_written', false],
    ['state_written', 'state_written', true],
    ['work_committed', 'state_written', true],
  ] as const)('%s at least %s: %s', (step, point, expected) => {
    expect(stepAtLeast(step, point)).toBe(expected);
  });
});

const journal = (userPaths: Record<string, string | null>): JournalData => ({ version: 1, session: 's', pid: 1, startedAt: '', userPaths, inflight: [] });

describe('splitChanged: the user’s paths against a dead run’s work', () => {
  it('without a journal every changed path is the user’s (no evidence of anything else)', () => {
    expect(splitChanged(['a.txt', 'prd.json'], undefined, ['prd.json'])).toEqual({ userPaths: ['a.txt', 'prd.json'], leftovers: [] });
  });
  it('with one, only the paths it names stay the user’s; the rest but the state files are the dead run’s work', () => {
    expect(splitChanged(['mine.txt', 'work/US-001.txt', 'prd.json', '.rulebook-ralph/history/iteration-1.json'], journal({ 'mine.txt': 'h' }), ['prd.json', '.rulebook-ralph'])).toEqual({
      previous: journal({ 'mine.txt': 'h' }),
      userPaths: ['mine.txt'],
      leftovers: ['work/US-001.txt'],
    });
  });
  it('after a run that ended through its door: only its work as it left it is its; a path changed or new since is the user’s', () => {
    const ended = { ...journal({ 'mine.txt': 'h' }), ended: { at: 't', work: { 'work/a.txt': 'A', 'work/b.txt': 'B' } } };
    const hashes: Record<string, string> = { 'work/a.txt': 'A', 'work/b.txt': 'B-edited-since' };
    expect(splitChanged(['mine.txt', 'work/a.txt', 'work/b.txt', 'new.txt', 'prd.json'], ended, ['prd.json'], (file) => hashes[file] ?? null)).toEqual({
      previous: ended,
      userPaths: ['mine.txt', 'work/b.txt', 'new.txt'],
      leftovers: ['work/a.txt'],
    });
  });
  it('a user path no longer changed is simply gone from both', () => {
    expect(splitChanged([], journal({ 'mine.txt': null }), [])).toMatchObject({ userPaths: [], leftovers: [] });
  });

  describe('with the end of the agent the killed run left (its ctime against each path’s)', () => {
    const end = 1_000n;
    const ctimes: Record<string, bigint> = { 'work/agent.txt': 400n, 'work/tie.txt': 1_000n, 'notes.txt': 1_001n, 'work/both.txt': 5_000n, 'mine.txt': 9_000n, 'prd.json': 9_000n };
    const since = { endedNs: end, changedNs: (file: string) => ctimes[file] };
    const cases: Array<[string, string[], { userPaths: string[]; leftovers: string[]; later?: string[] }]> = [
      ['written before the end: the agent’s; after it: the user’s, said', ['work/agent.txt', 'notes.txt'], { userPaths: ['notes.txt'], leftovers: ['work/agent.txt'], later: ['notes.txt'] }],
      ['a tie goes to the agent (its last change is at or before its end, on the same clock)', ['work/tie.txt'], { userPaths: [], leftovers: ['work/tie.txt'] }],
      ['the agent’s file the user edited after: the user’s, left out whole', ['work/both.txt'], { userPaths: ['work/both.txt'], leftovers: [], later: ['work/both.txt'] }],
      ['no ctime known: the run’s, as without an end', ['work/unknown.txt'], { userPaths: [], leftovers: ['work/unknown.txt'] }],
      ['the journal’s user paths stay theirs and the state files go with the task state, whatever their ctime', ['mine.txt', 'prd.json'], { userPaths: ['mine.txt'], leftovers: [] }],
    ];
    it.each(cases)('%s', (_name, changed, expected) => {
      expect(splitChanged(changed, journal({ 'mine.txt': 'h' }), ['prd.json'], () => null, since)).toEqual({ previous: journal({ 'mine.txt': 'h' }), ...expected });
    });
    it('after a run that ended through its door the end recorded in its journal decides, not the agent’s', () => {
      const ended = { ...journal({}), ended: { at: 't', work: { 'notes.txt': 'N' } } };
      expect(splitChanged(['notes.txt'], ended, [], () => 'N', since)).toEqual({ previous: ended, userPaths: [], leftovers: ['notes.txt'] });
    });
  });
});

describe('agentsEnd: when a dead run’s agents stopped writing', () => {
  it.each([
    ['none recorded: unknown', [], undefined],
    ['one without an end (no record, unreadable): unknown', [5n, undefined], undefined],
    ['the latest of them', [5n, 9n, 7n], 9n],
  ] as Array<[string, Array<bigint | undefined>, bigint | undefined]>)('%s', (_name, ends, expected) => {
    expect(agentsEnd(ends)).toBe(expected);
  });
});

describe('changedNs', () => {
  it('a path’s ctime; a deleted one’s, its nearest folder’s', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'ralph-ctime-'));
    mkdirSync(path.join(root, 'a'));
    writeFileSync(path.join(root, 'a', 'x.txt'), 'x');
    const folder = changedNs(root, 'a');
    expect(changedNs(root, 'a/x.txt')).toBeTypeOf('bigint');
    expect(changedNs(root, 'a/gone.txt')).toBe(folder);
    expect(changedNs(root, 'b/c/gone.txt')).toBe(changedNs(root, '.'));
    rmSync(root, { recursive: true, force: true });
  });
});

describe('Journal', () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes each step at once, ends an iteration, and goes at the end only when nothing is under way', async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ralph-journal-'));
    writeFileSync(path.join(root, 'mine.txt'), 'mine\n');
    const made = new Journal(root, { session: 's1', pid: 7, startedAt: 'now', userPaths: { 'mine.txt': hashPath(root, 'mine.txt') }, inflight: [] });
    const listener = made.listener();
    listener.reached('task_claimed', { iteration: 3, task: { id: 'US-001', title: 'One' }, head: 'abc' });
    listener.reached('agent_started', { iteration: 3 });
    listener.reached('agent_started', { iteration: 9 }); // not under way: nothing
    expect(readJournal(root)?.inflight).toEqual([{ session: 's1', iteration: 3, taskId: 'US-001', title: 'One', head: 'abc', step: 'agent_started' }]);
    listener.reached('state_written', { iteration: 3, outcome: 'pass' });
    expect(readJournal(root)?.inflight[0]).toMatchObject({ step: 'state_written', outcome: 'pass' });
    await made.close(async () => ['work.txt']);
    expect(readJournal(root)?.ended?.work).toEqual({ 'work.txt': null });
    listener.ended(3);
    expect(readJournal(root)?.inflight).toEqual([]);
    expect(readJournal(root)?.userPaths['mine.txt']).toMatch(/^[0-9a-f]{64}$/);
    await made.close(async () => []);
    expect(existsSync(path.join(root, JOURNAL_FILE))).toBe(false);
  });

  it('a forced exit writes its end at once, even with nothing under way: the work then is the run’s, what changes after is the user’s', () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ralph-journal-'));
    writeFileSync(path.join(root, 'half.txt'), 'half\n');
    const made = new Journal(root, { session: 's1', pid: 7, startedAt: 'now', userPaths: {}, inflight: [] });
    made.listener().reached('task_claimed', { iteration: 1, task: { id: 'US-001', title: 'One' } });
    made.closeNow(() => ['half.txt']);
    const previous = readJournal(root)!;
    expect(previous.ended).toMatchObject({ forced: true, work: { 'half.txt': hashPath(root, 'half.txt') } });
    writeFileSync(path.join(root, 'later.txt'), 'mine\n');
    expect(splitChanged(['half.txt', 'later.txt'], previous, [], (file) => hashPath(root, file))).toEqual({ previous, userPaths: ['later.txt'], leftovers: ['half.txt'] });
    // The announcements stopped with it; with nothing under way the end is written all the same.
    made.listener().ended(1);
    made.closeNow(() => []);
    expect(readJournal(root)?.ended).toMatchObject({ forced: true, work: {} });
  });

  it('a forced exit with its code is the user’s choice; the same end without a code (a last-resort exit: a bug) is a death', () => {
    const work = { 'a.txt': null };
    expect(forcedByUser({ at: 'now', work, forced: true, exitCode: 130 })).toBe(true);
    expect(forcedByUser({ at: 'now', work, forced: true })).toBe(false);
    expect(forcedByUser({ at: 'now', work })).toBe(false);
    expect(forcedByUser(undefined)).toBe(false);
  });

  it('an unreadable journal is no evidence', () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ralph-journal-'));
    writeFileSync(path.join(root, '.ralph-x'), '');
    new Journal(root, { session: 's', pid: 1, startedAt: '', userPaths: {}, inflight: [] });
    writeFileSync(path.join(root, JOURNAL_FILE), '{ torn');
    expect(readJournal(root)).toBeUndefined();
    expect(readFileSync(path.join(root, JOURNAL_FILE), 'utf8')).toBe('{ torn');
  });
});

describe('leftovers of a process killed mid-write', () => {
  it.each([
    ['.prd.json.14942.4.tmp', 14942],
    ['specs/001-demo/.tasks.md.77.1.tmp', 77],
    ['prd.json', undefined],
    ['.prd.json.tmp', undefined],
    ['work/x.14942.4.tmp', undefined],
  ])('tempWriter(%j) = %j', (file, pid) => {
    expect(tempWriter(file)).toBe(pid);
  });

  it('removes a temp file whose writer is gone, keeps one of a living writer and anything else', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'ralph-temps-'));
    try {
      const dead = '.prd.json.2147483600.1.tmp';
      const mine = `.prd.json.${process.pid}.1.tmp`;
      for (const file of [dead, mine, 'work.txt']) writeFileSync(path.join(root, file), 'x');
      expect(removeDeadTemps(root, [dead, mine, 'work.txt'])).toEqual([dead]);
      expect([dead, mine, 'work.txt'].map((file) => existsSync(path.join(root, file)))).toEqual([false, true, true]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('removeDeadSocketDirs', () => {
  it('removes the socket folders of dead runs, keeps its own, a living one and anything else', () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'ralph-sockets-'));
    try {
      const names = ['ralph-out-2147483600-abc', `ralph-out-${process.pid}-def`, `ralph-out-${process.ppid}-ghi`, 'ralph-out-xyz', 'other'];
      for (const name of names) mkdirSync(path.join(tmp, name));
      expect(removeDeadSocketDirs(tmp)).toBe(1);
      expect(names.map((name) => existsSync(path.join(tmp, name)))).toEqual([false, true, true, true, true]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
