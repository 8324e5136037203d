// Beads' claim leases (issue 35.5) and the claims a run leaves behind (issue 33.7), end to end against the bd
// double playing 0.50, 1.0 (`1.x`), 1.2 and the lease line (`main`, beads 1.3) as recorded in
// ../shared/recordings/bd/. On the lease line only a claim's assignee may close it, a claim lives 5 minutes
// unless `bd heartbeat` renews it, and only `bd reclaim` frees an expired one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKE_BD_VERSIONS, type FakeBdVersion } from '../fakes/bd-seed.ts';
import { agentCalls, bdCalls, closeStep, FAST, makeSandbox, readBeads, runRalph, seedBeads, signalRalph, startRalph, waitFor, type Sandbox, type SeedIssue } from './helpers.ts';
import { answer } from './projects.ts';

let sandbox: Sandbox | undefined;
afterEach(() => {
  sandbox?.cleanup();
  sandbox = undefined;
});

function box(version: FakeBdVersion): Sandbox {
  const made = (sandbox = makeSandbox());
  made.env.FAKE_BD_VERSION = version;
  return made;
}

/** An epic of `count` beads that may all start at once. */
function wideEpic(count: number, extra: SeedIssue[] = []): SeedIssue[] {
  return [
    { id: 'ws-9w6', title: 'Feature: ralph-automation', issue_type: 'epic', priority: 1 },
    { id: 'ws-9w6.1', title: '[sp:02-clarify] Clarify the spec', parent: 'ws-9w6', status: 'closed', priority: 1 },
    ...Array.from({ length: count }, (_, index) => ({ id: `ws-9w6.${index + 2}`, title: `Task ${index + 1}`, parent: 'ws-9w6', priority: 2 })),
    ...extra,
  ];
}

function byPrompt(target: Sandbox, entries: Array<{ match: string; steps: unknown[] }>, steps: unknown[] = []): void {
  const file = path.join(target.root, 'scenario.json');
  writeFileSync(file, JSON.stringify({ byPrompt: entries, steps }));
  target.env.FAKE_AGENT_SCENARIO = file;
}

/** Each bead's agent closes it with a plain `bd close`, as /sp:next does: no --actor, whatever the environment says. */
const closesOwn = (ids: string[], extra: Record<string, unknown> = {}) => ids.map((id) => ({ match: `Work on bead ${id} `, steps: [{ ...closeStep(id), write: { [`${id}.txt`]: `${id}\n` }, ...extra }] }));
const held = (target: Sandbox) => readBeads(target).filter((issue) => issue.status === 'in_progress').map((issue) => `${issue.id}:${issue.assignee ?? ''}`);

describe.each(FAKE_BD_VERSIONS)('beads claims, bd %s', (version) => {
  it('--parallel 3: each agent runs as its worker\'s actor and closes its own bead; no claim left; a human-labelled question under the epic is never work: not claimed, not counted, left open', async () => {
    // One run checks both: the question sits under the same epic as the four beads the workers share.
    const target = box(version);
    seedBeads(target, wideEpic(4, [{ id: 'ws-9w6.9', title: 'Q: which DB?', parent: 'ws-9w6', labels: ['human'], priority: 0 }]));
    byPrompt(target, closesOwn(['ws-9w6.2', 'ws-9w6.3', 'ws-9w6.4', 'ws-9w6.5']));
    const result = await runRalph(target, ['--parallel', '3', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', tasksCompleted: 4, tasksRemaining: 0 });
    expect(readBeads(target).filter((issue) => issue.id !== 'ws-9w6' && issue.id !== 'ws-9w6.9' && issue.status !== 'closed')).toEqual([]);
    // bd reads the actor from BEADS_ACTOR (1.x) or BD_ACTOR (0.50): both name the worker that claimed the bead.
    for (const call of agentCalls(target)) {
      const id = /Work on bead (\S+) /.exec(call.stdin)![1]!;
      const claim = bdCalls(target).find((argv) => argv[0] === 'update' && argv[1] === id && argv.includes('--claim'))!;
      const actor = claim[claim.indexOf('--actor') + 1];
      expect(call.env).toMatchObject({ BEADS_ACTOR: actor, BD_ACTOR: actor });
      expect(readBeads(target).find((issue) => issue.id === id)?.assignee).toBe(actor);
    }
    expect(result.stderr).not.toMatch(/no change|cannot close/);
    // The question: never claimed nor asked of bd by id, never in a prompt, still open.
    expect(bdCalls(target).some((argv) => argv.includes('ws-9w6.9'))).toBe(false);
    expect(agentCalls(target).map((call) => call.stdin).join('\n')).not.toContain('ws-9w6.9');
    expect(readBeads(target).find((issue) => issue.id === 'ws-9w6.9')?.status).toBe('open');
  });

  it('Ctrl+C while workers hold beads: exit 130, and every bead they held is open and unassigned again', async () => {
    const target = box(version);
    seedBeads(target, wideEpic(3));
    const marker = (id: string) => path.join(target.root, `started-${id}`);
    byPrompt(target, ['ws-9w6.2', 'ws-9w6.3'].map((id) => ({ match: `Work on bead ${id} `, steps: [{ replay: 'claude-ok.jsonl', hang: true, touch: marker(id) }] })));
    const run = startRalph(target, ['--parallel', '2', ...FAST]);
    await waitFor(() => held(target).length === 2 && agentCalls(target).length === 2, 45_000, 'two workers at work');
    await waitFor(() => ['ws-9w6.2', 'ws-9w6.3'].every((id) => existsSync(marker(id))), 45_000, 'both agents started');
    signalRalph(target, 'SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(held(target)).toEqual([]);
    // Each iteration the signal cut short puts its own bead back as it ends (the clean ending of issue 33), so
    // the run's last give-back finds nothing left to give.
    for (const [id, title] of [['ws-9w6.2', 'Task 1'], ['ws-9w6.3', 'Task 2']] as const) expect(result.stderr).toMatch(new RegExp(`${id.replace('.', '\\.')} "${title}" was left in_progress by iteration \\d, which did not finish \\(interrupted by SIGINT\\); put back to open`));
    expect(result.stderr).not.toMatch(/gave back/);
    for (const id of ['ws-9w6.2', 'ws-9w6.3']) expect(readBeads(target).find((issue) => issue.id === id)).toMatchObject({ status: 'open' });
  });

  it('a run that fails (exit 1) leaves no bead in_progress under its workers', async () => {
    const target = box(version);
    seedBeads(target, wideEpic(2));
    byPrompt(target, [], [{ replay: 'claude-500.jsonl', exit: 1 }]);
    const result = await runRalph(target, ['--parallel', '2', '--retries', '1', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    expect(bdCalls(target).filter((argv) => argv.includes('--claim')).length).toBeGreaterThan(0);
    expect(held(target)).toEqual([]);
  });

  it('a worker\'s failed iteration gives its bead back at once: the same run takes it again and finishes', async () => {
    const target = box(version);
    seedBeads(target, wideEpic(2));
    byPrompt(target, [
      { match: 'Work on bead ws-9w6.2 ', steps: [{ replay: 'claude-ok.jsonl' }, { ...closeStep('ws-9w6.2') }] },
      ...closesOwn(['ws-9w6.3']),
    ]);
    const result = await runRalph(target, ['--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).records.map((record: { taskId: string; outcome: string }) => `${record.taskId}:${record.outcome}`).sort()).toEqual(['ws-9w6.2:no_change', 'ws-9w6.2:pass', 'ws-9w6.3:pass']);
    expect(held(target)).toEqual([]);
  });

  it('claims a killed --parallel run left (ralph-w1, ralph-w3) are taken back at the next start, as their holder', async () => {
    const target = box(version);
    const future = new Date(Date.now() + 240_000).toISOString();
    // On the lease line the dead run's claims still have a live lease: nothing but their holder may touch them.
    const lease = version === 'main' ? { lease_expires_at: future, heartbeat_at: new Date().toISOString() } : {};
    seedBeads(target, wideEpic(2).map((issue) => (issue.id === 'ws-9w6.2' ? { ...issue, status: 'in_progress', assignee: 'ralph-w1', ...lease } : issue.id === 'ws-9w6.3' ? { ...issue, status: 'in_progress', assignee: 'ralph-w3', ...lease } : issue)) as SeedIssue[]);
    byPrompt(target, [], [closeStep('ws-9w6.2'), closeStep('ws-9w6.3')]);
    const result = await runRalph(target, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/warning: ws-9w6\.2 "Task 1" was left in_progress by an interrupted run; put back to open/);
    expect(result.stderr).toMatch(/warning: ws-9w6\.3 "Task 2" was left in_progress by an interrupted run; put back to open/);
    expect(bdCalls(target)).toContainEqual(['update', 'ws-9w6.3', '--status', 'open', '--assignee', '', '--actor', 'ralph-w3', '--json']);
    expect(readBeads(target).filter((issue) => issue.id !== 'ws-9w6').every((issue) => issue.status === 'closed')).toBe(true);
  });
});

describe('the lease line (bd main)', () => {
  it('renews a worker\'s claim by bd heartbeat while its agent works: a reclaim sweep meanwhile frees nothing', async () => {
    const target = box('main');
    // A short lease for the test (real bd: 5 minutes); ralph renews every --lease/3 where bd keeps leases.
    target.env.FAKE_BD_LEASE_TTL_MS = '4000';
    seedBeads(target, wideEpic(1));
    const sleep = ['sleep', '6'];
    byPrompt(target, [{ match: 'Work on bead ws-9w6.2 ', steps: [{ run: [sleep, ['bd', 'reclaim', '--older-than', '0s', '--json'], ['bd', 'close', 'ws-9w6.2', '--json']], replay: 'claude-ok.jsonl' }] }]);
    const result = await runRalph(target, ['--parallel', '2', '--lease', '1500ms', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const beats = bdCalls(target).filter((argv) => argv[0] === 'heartbeat');
    expect(beats.length).toBeGreaterThanOrEqual(3);
    for (const argv of beats) expect(argv).toEqual(['heartbeat', 'ws-9w6.2', '--actor', 'ralph-w1', '--json']);
    // Still the worker's when its agent closed it: the sweep found a live lease.
    expect(readBeads(target).find((issue) => issue.id === 'ws-9w6.2')).toMatchObject({ status: 'closed', assignee: 'ralph-w1' });
    expect(bdCalls(target).some((argv) => argv.includes('--set-metadata'))).toBe(false);
  });

  it('a database a newer bd migrated: an older bd\'s refusal to claim is one clear line, exit 1, nothing left claimed', async () => {
    const target = box('1.2');
    seedBeads(target, wideEpic(2));
    const db = path.join(target.repo, '.beads', 'fake-db.json');
    const raw = JSON.parse(readFileSync(db, 'utf8')) as Record<string, unknown>;
    writeFileSync(db, JSON.stringify({ ...raw, schema: 66 }));
    byPrompt(target, closesOwn(['ws-9w6.2', 'ws-9w6.3']));
    const result = await runRalph(target, ['--parallel', '2', ...FAST]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/could not claim ws-9w6\.[23] for worker [12]: Error: schema version mismatch: database is at v66, binary knows up to v53 \(a newer bd migrated this beads database; this bd can read it but not write it: use the same bd version on every clone that shares it\)/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(agentCalls(target)).toHaveLength(0);
    expect(held(target)).toEqual([]);
  });
});

describe.each(['1.2', 'main'] as FakeBdVersion[])('questions in bd human, bd %s', (version) => {
  const QUESTION = '404 or 410 for a deleted user?';
  const asks = { lines: [answer(`Stopped: the spec disagrees with itself.\n\n<question>${QUESTION}</question>`)] };

  // One pair of runs checks both ways to answer: ws-9w6.2's question is answered in beads by a person,
  // ws-9w6.3's with ralph answer.
  it('an agent\'s question is filed where beads keeps questions for people; answered there, the next prompt carries the answer; answered with ralph answer: the question in beads is answered too, and leaves bd human list', async () => {
    const target = box(version);
    seedBeads(target, wideEpic(2));
    byPrompt(target, ['ws-9w6.2', 'ws-9w6.3'].map((id) => ({ match: `Bead ${id}: Your question and its answer`, steps: [closeStep(id)] })), [asks]);
    const first = await runRalph(target, FAST);
    expect(first.code, first.stderr).toBe(1);
    const questionOf = (id: string) => readBeads(target).find((issue) => issue.labels?.includes('human') && issue.title.startsWith(`Question on ${id}: `))!;
    const question = questionOf('ws-9w6.2');
    expect(question).toMatchObject({ title: `Question on ws-9w6.2: ${QUESTION}`, status: 'open' });
    expect(first.stderr).toContain(`ws-9w6.2: the question is in beads too, as ${question.id} (bd human list; answer with bd human respond ${question.id} --response "…" or ralph answer ws-9w6.2 "…")`);
    expect(questionOf('ws-9w6.3')).toMatchObject({ title: `Question on ws-9w6.3: ${QUESTION}`, status: 'open' });
    // A person answers ws-9w6.2's in beads: bd human respond (its 1.2.2 fails as recorded: a comment and a close then).
    const bd = (args: string[]) => execFileSync('bd', args, { cwd: target.repo, env: { ...target.env, BEADS_ACTOR: 'carol', BD_ACTOR: 'carol' }, encoding: 'utf8' });
    if (version === 'main') bd(['human', 'respond', question.id, '--response', '410']);
    else {
      bd(['comments', 'add', question.id, '410']);
      bd(['close', question.id, '--reason', 'Responded']);
    }
    // ws-9w6.3's is answered with ralph answer.
    expect((await runRalph(target, ['answer', 'ws-9w6.3', '410'])).code).toBe(0);
    const second = await runRalph(target, FAST);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`ws-9w6.2: answered in beads (${question.id}): "${QUESTION}" → "410"`);
    const calls = agentCalls(target);
    expect(calls).toHaveLength(4);
    expect(calls[2]!.stdin).toContain('Bead ws-9w6.2: ');
    expect(calls[2]!.stdin).toContain('- Answer: 410');
    expect(calls[3]!.stdin).toContain('Bead ws-9w6.3: ');
    expect(calls[3]!.stdin).toContain('- Answer: 410');
    expect(questionOf('ws-9w6.3')).toMatchObject({ status: 'closed', close_reason: 'Responded' });
  });
});
