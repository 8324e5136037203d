import { describe, expect, it } from 'vitest';
import { beadBrief, createBeadsSource, epicTitleForBranch, featureNameFromBranch, withReviewNotes } from '../../../../lib/sources/beads/source.ts';
import { parseBdArray } from '../../../../lib/sources/beads/bd.ts';
import type { Snapshot, Task, TaskSource } from '../../../../lib/sources/types.ts';
import { FAKE_BD_VERSIONS, type SeedIssue } from '../../../fakes/bd-seed.ts';
import { beadsProject } from './bd-helpers.ts';

describe('branch → epic', () => {
  it.each([
    ['001-ralph-automation', 'Feature: ralph-automation'],
    ['feat/001-ralph-automation', 'Feature: ralph-automation'],
    ['feature/team/012-login-flow', 'Feature: login-flow'],
    ['20260118-101500-timestamped', 'Feature: timestamped'],
    ['no-number', 'Feature: no-number'],
  ])('%s → %s', (branch, title) => expect(epicTitleForBranch(branch)).toBe(title));

  it('keeps names that only start with digits inside', () => {
    expect(featureNameFromBranch('2fa-setup')).toBe('2fa-setup');
  });
});

describe('parseBdArray', () => {
  it('reads arrays and the schema envelope, ignoring unknown fields', () => {
    const issue = { id: 'ws-1', title: 'T', status: 'open', priority: 0, brand_new_field: true, schema_version: 1 };
    expect(parseBdArray(JSON.stringify([issue]), 'bd ready')[0]).toMatchObject({ id: 'ws-1', priority: 0 });
    expect(parseBdArray(JSON.stringify({ schema_version: 1, data: [issue] }), 'bd ready')).toHaveLength(1);
  });

  it('names the command for garbage and wrong shapes', () => {
    expect(() => parseBdArray('{"id": "broken', 'bd ready --parent x')).toThrow(/bd ready --parent x: bd printed invalid JSON/);
    expect(() => parseBdArray('{"id":"x"}', 'bd list')).toThrow(/bd list: expected a JSON array/);
    expect(() => parseBdArray('[{"id":"x"}]', 'bd list')).toThrow(/bd list: item 0 is not a beads issue/);
  });
});

describe.each(FAKE_BD_VERSIONS)('the beads source against bd %s: what it reads, and how often', (version) => {
  const ids = (tasks: Array<{ id: string }>): string[] => tasks.map((task) => task.id);
  const words = (calls: string[][]): string[] => calls.map((argv) => (argv[0] === 'ready' ? 'ready' : argv[0] === 'list' ? (argv.includes('--type') ? 'list-epics' : 'list') : argv[0]!));
  /** The calls one loop iteration makes: claim, an agent run (`work`), the progress read, the next read. */
  async function iteration(source: TaskSource, task: Task, work: () => void): Promise<{ after: Snapshot; next: Snapshot }> {
    await source.claim?.(task, { iteration: 1, maxIterations: 9, sessionId: 's' });
    work();
    const after = await source.snapshot('progress');
    return { after, next: await source.snapshot() };
  }

  async function started(extra: SeedIssue[] = []) {
    const project = beadsProject(version, extra);
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    expect(await source.recover()).toEqual([]);
    const first = await source.snapshot();
    project.calls.length = 0;
    return { project, source, first };
  }

  it('steady state: two bd calls an iteration (ready before, list after), and a fresh list before "complete"', async () => {
    const { project, source, first } = await started();
    expect(ids(first.ready)).toEqual(['ws-ep.2']);
    let next = first;
    for (const id of ['ws-ep.2', 'ws-ep.3']) {
      const step = await iteration(source, next.ready[0]!, () => project.other('close', id));
      expect(ids(step.after.done)).toContain(id);
      next = step.next;
    }
    expect(words(project.calls)).toEqual(['list', 'ready', 'list', 'ready']);
    expect(ids(next.ready)).toEqual(['ws-ep.4']);
    project.calls.length = 0;
    const last = await iteration(source, next.ready[0]!, () => project.other('close', 'ws-ep.4'));
    expect(last.next.remaining).toEqual([]);
    expect(ids(last.next.done)).toEqual(expect.arrayContaining(['ws-ep.1', 'ws-ep.2', 'ws-ep.3', 'ws-ep.4']));
    // Nothing ready: the end of the run is decided on a list read after that answer.
    expect(words(project.calls)).toEqual(['list', 'ready', 'list']);
  });

  it('another process claims the next task meanwhile: read again, not offered', async () => {
    const { project, source, first } = await started([{ id: 'ws-ep.5', title: 'Task D' }]);
    expect(ids(first.ready)).toEqual(['ws-ep.2', 'ws-ep.5']);
    await source.claim?.(first.ready[0]!, { iteration: 1, maxIterations: 9, sessionId: 's' });
    project.other('close', 'ws-ep.2');
    await source.snapshot('progress');
    project.other('update', 'ws-ep.5', '--status', 'in_progress');
    const next = await source.snapshot();
    expect(ids(next.ready)).toEqual(['ws-ep.3']);
    expect(next.remaining.find((task) => task.id === 'ws-ep.5')?.status).toBe('in_progress');
    expect(words(project.calls)).toEqual(['list', 'ready', 'list']);
  });

  it('another process closes or adds a task meanwhile: the next read shows it', async () => {
    const { project, source, first } = await started([{ id: 'ws-ep.5', title: 'Task D' }]);
    await source.claim?.(first.ready[0]!, { iteration: 1, maxIterations: 9, sessionId: 's' });
    project.other('close', 'ws-ep.2');
    await source.snapshot('progress');
    project.other('close', 'ws-ep.5');
    project.other('create', 'Task E', '--parent', 'ws-ep');
    const next = await source.snapshot();
    expect(ids(next.done)).toEqual(expect.arrayContaining(['ws-ep.2', 'ws-ep.5']));
    expect(ids(next.ready)).toEqual(['ws-ep.3', 'ws-ep.6']);
    expect(ids(next.remaining)).toEqual(expect.arrayContaining(['ws-ep.3', 'ws-ep.4', 'ws-ep.6']));
  });

  it('another process adds a blocked task after the last one closed: stuck on a fresh list, never complete', async () => {
    const { project, source } = await started();
    for (const id of ['ws-ep.2', 'ws-ep.3', 'ws-ep.4']) project.other('close', id);
    await source.snapshot('progress');
    project.other('create', 'Outside', '-p', '1');
    const outside = (project.other('list', '--all', '--limit', '0') as Array<{ id: string; title: string }>).find((issue) => issue.title === 'Outside')!.id;
    project.other('create', 'Late task', '--parent', 'ws-ep', '--deps', outside);
    const next = await source.snapshot();
    expect(next.ready).toEqual([]);
    expect(ids(next.remaining)).toEqual(['ws-ep.5']);
    expect(source.explainStuck(next)).toBe(`no task of epic ws-ep "Feature: demo" is ready; 1 remain:\n  ws-ep.5 "Late task" (open, waits for ${outside})`);
  });

  it('reopen: a bead the reviewer rejected is open and ready again, and the next prompt says why until it closes', async () => {
    const { project, source, first } = await started();
    const task = first.ready[0]!;
    const step = await iteration(source, task, () => project.other('close', task.id));
    expect(ids(step.after.done)).toContain(task.id);
    await source.reopen(task, 'no test for the empty input', { iteration: 4, maxIterations: 9, sessionId: 's' });
    const next = await source.snapshot();
    expect(ids(next.ready)).toEqual([task.id]);
    expect(ids(next.done)).not.toContain(task.id);
    const info = { iteration: 5, maxIterations: 9, sessionId: 's' };
    expect(await source.prompt(task, info)).toBe(`/sp:next\n\nralph's independent reviewer rejected the work on these beads and reopened them; whoever works on one next must fix these problems before closing it again:\n- ${task.id} "Task A" (iteration 4): no test for the empty input\n`);
    await iteration(source, task, () => project.other('close', task.id));
    expect(await source.prompt(task, info)).toBe('/sp:next');
    expect(await source.brief(task)).toContain(`### Bead ${task.id}: Task A`);
  });

  it('abandon(): what an iteration a clean ending cut short left in_progress is open again, and the next recover() is silent', async () => {
    const { project, source, first } = await started();
    const task = first.ready[0]!;
    await source.claim?.(task, { iteration: 2, maxIterations: 9, sessionId: 's' });
    // /sp:next claimed the bead it works on.
    project.other('update', task.id, '--status', 'in_progress');
    expect(await source.abandon!(task, { iteration: 2, maxIterations: 9, sessionId: 's' }, 'interrupted by SIGHUP')).toBe(`${task.id} "Task A" was left in_progress by iteration 2, which did not finish (interrupted by SIGHUP); put back to open`);
    const status = (): string => (project.other('list', '--all', '--limit', '0') as Array<{ id: string; status: string }>).find((issue) => issue.id === task.id)!.status;
    expect(status()).toBe('open');
    expect(await source.abandon!(task, { iteration: 2, maxIterations: 9, sessionId: 's' }, 'again')).toBeUndefined();
    const next = createBeadsSource(project.ctx);
    expect(await next.check()).toEqual([]);
    expect(await next.recover()).toEqual([]);
  });

  it('a dry run reads at most 4 times: epics, children, ready (twice on a bd without --exclude-type)', async () => {
    const project = beadsProject(version);
    const source = createBeadsSource(project.ctx);
    expect(await source.check()).toEqual([]);
    expect(ids((await source.snapshot()).ready)).toEqual(['ws-ep.2']);
    expect(project.calls.length).toBeLessThanOrEqual(4);
    expect(words(project.calls)).toEqual(version === '0.50' ? ['list-epics', 'list', 'ready', 'ready'] : ['list-epics', 'list', 'ready']);
  });
});

describe('review support', () => {
  it('briefs a bead with its description, design and acceptance criteria', () => {
    const brief = beadBrief({ id: 'ws-1.2', title: 'Parse input', status: 'closed', priority: 2, description: 'Read the file.', design: 'One pass.', acceptance_criteria: '- errors name the line' });
    expect(brief).toBe('### Bead ws-1.2: Parse input\n\nRead the file.\n\n#### Design\n\nOne pass.\n\n#### Acceptance criteria\n\n- errors name the line');
    expect(beadBrief({ id: 'ws-1.3', title: 'Bare', status: 'closed', priority: 2 })).toContain('(none recorded in beads: judge by the title and description)');
  });

  it('adds the reviewer\'s reasons for reopened beads to the prompt, and nothing otherwise', () => {
    expect(withReviewNotes('/sp:next', [])).toBe('/sp:next');
    const prompt = withReviewNotes('/sp:next', [{ id: 'ws-1.2', title: 'Parse input', iteration: 3, reasons: 'no test for a missing file' }]);
    expect(prompt.startsWith('/sp:next\n\n')).toBe(true);
    expect(prompt).toContain('- ws-1.2 "Parse input" (iteration 3): no test for a missing file');
  });
});
