// Task titles full of shell metacharacters must never run: ralph hands task text to no shell, in any mode.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentCalls,
  answer,
  closeStep,
  expectLockGone,
  expectNoSurvivors,
  makeSandbox,
  prdProject,
  QUICK,
  readBeads,
  report,
  runRalph,
  scenario,
  seedBeads,
  sessionDirs,
  specKitProject,
  standardEpic,
  TASKS_PATH,
  type Sandbox,
} from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

/** Every way a shell could be talked into running `touch PWNED…`, on one line. */
const ONE_LINE = `$(touch PWNED) \`touch PWNED_BT\` ; touch PWNED_SEMI | touch PWNED_PIPE && touch PWNED_AND || touch PWNED_OR & 'single $(touch PWNED_SQ)' "double $(touch PWNED_DQ)" > PWNED_REDIRECT $HOME \\ end`;
/** The same with a newline in it (beads and prd.json titles can hold one). */
const MULTI_LINE = `${ONE_LINE}\ntouch PWNED_NEWLINE\n$(touch PWNED_LAST)`;

/** Files named PWNED… anywhere under the sandbox (repo, HOME, bin, temp files). */
function pwned(box: Sandbox): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('PWNED')) found.push(path.join(dir, entry.name));
      if (entry.isDirectory() && entry.name !== '.git') walk(path.join(dir, entry.name));
    }
  };
  walk(box.root);
  return found;
}

/** The iteration_start events ralph logged, as written to .ralph/events.jsonl. */
function startedTitles(box: Sandbox): string[] {
  const file = path.join(box.repo, '.ralph', 'events.jsonl');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; task?: { title: string } })
    .filter((event) => event.type === 'iteration_start')
    .map((event) => event.task!.title);
}

describe('task titles full of shell metacharacters', () => {
  it('beads: nothing runs; the title reaches the logs verbatim', async () => {
    sandbox = makeSandbox();
    const issues = standardEpic(1);
    issues[2]!.title = MULTI_LINE;
    seedBeads(sandbox, issues);
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    expect(pwned(sandbox)).toEqual([]);
    expect(readBeads(sandbox).find((issue) => issue.id === 'ws-9w6.2')).toMatchObject({ title: MULTI_LINE, status: 'closed' });
    expect(JSON.parse(result.stdout).records[0].taskTitle).toBe(MULTI_LINE);
    expect(startedTitles(sandbox)).toEqual([MULTI_LINE]);
    expect(result.stderr).toContain(`iteration 1/50: ws-9w6.2 ${MULTI_LINE}`);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });

  it('Spec Kit: nothing runs; the title is in the prompt and the logs verbatim', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, `# Tasks: Demo\n\n## Phase 1: User Story 1 - Danger (Priority: P1)\n\n- [ ] T001 [US1] ${ONE_LINE}\n- [ ] T002 [US1] Second task\n`);
    scenario(sandbox, [{ edit: [{ file: TASKS_PATH, from: '- [ ] T001', to: '- [X] T001' }], lines: [answer('Did T001.')] }]);
    const result = await runRalph(sandbox, ['--max-iterations', '1', '--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(2);
    expect(pwned(sandbox)).toEqual([]);
    expect(agentCalls(sandbox)[0]!.stdin).toContain(`T001 [US1] ${ONE_LINE}`);
    expect(JSON.parse(result.stdout).records[0]).toMatchObject({ taskTitle: ONE_LINE, outcome: 'pass' });
    expect(startedTitles(sandbox)).toEqual([ONE_LINE]);
    expect(readFileSync(path.join(sandbox.repo, 'specs', '001-demo', 'progress.txt'), 'utf8')).toContain(`- Task: T001 ${ONE_LINE}`);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });

  it('PRD: nothing runs, not even in the commit; the title is in the prompt, the commit message and the logs verbatim', async () => {
    sandbox = makeSandbox({ agents: ['claude', 'gemini'] });
    prdProject(sandbox, {
      userStories: [
        { id: 'US-001', title: MULTI_LINE, description: `Also here: ${ONE_LINE}`, acceptanceCriteria: [ONE_LINE], priority: 1, passes: false },
        { id: 'US-002', title: ONE_LINE, description: 'd', acceptanceCriteria: ['works'], priority: 2, passes: false },
      ],
    });
    const recorded = readFileSync(path.join(__dirname, '..', 'fixtures', 'recordings', 'gemini-ok.jsonl'), 'utf8').trim().split('\n');
    const reportText = (JSON.parse(report('completed')) as { result: string }).result;
    const geminiReport = [recorded[0]!, JSON.stringify({ type: 'message', role: 'assistant', content: reportText, delta: true }), recorded[3]!];
    scenario(sandbox, [
      { write: { 'app.txt': 'one\n' }, lines: [report('completed')] },
      // gemini takes the prompt as an argument: it must arrive as one argv element, unexpanded.
      { write: { 'app.txt': 'one\ntwo\n' }, lines: geminiReport },
    ]);
    const first = await runRalph(sandbox, ['--max-iterations', '1', '--json', ...QUICK]);
    expect(first.code, first.stderr).toBe(2);
    const second = await runRalph(sandbox, ['--agent', 'gemini', '--max-iterations', '1', '--json', ...QUICK]);
    expect(second.code, second.stderr).toBe(0);
    expect(pwned(sandbox)).toEqual([]);
    const [claude, gemini] = agentCalls(sandbox);
    expect(claude!.stdin).toContain(MULTI_LINE);
    expect(claude!.stdin).toContain(`Also here: ${ONE_LINE}`);
    expect(gemini!.argv[0]).toBe('-p');
    expect(gemini!.argv[1]).toContain(ONE_LINE);
    const messages = execFileSync('git', ['log', '--format=%B%x00', '-2'], { cwd: sandbox.repo, env: sandbox.env, encoding: 'utf8' }).split('\0').map((text) => text.trim());
    expect(messages[0]).toContain(`ralph: US-002 ${ONE_LINE}`);
    expect(messages[1]).toContain(`ralph: US-001 ${MULTI_LINE}`);
    expect(JSON.parse(first.stdout).records[0].taskTitle).toBe(MULTI_LINE);
    expect(readFileSync(path.join(sessionDirs(sandbox)[0]!, 'iteration-1.jsonl'), 'utf8')).toContain('Ralph Report');
    expect(startedTitles(sandbox)).toEqual([MULTI_LINE, ONE_LINE]);
    // progress.txt keeps each entry's title on one line, so no title can fake an entry heading.
    const progress = readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8');
    expect(progress).toContain(`Task: US-001 ${MULTI_LINE.replace(/\n/g, ' ')}\n`);
    expect(progress.split('\n').filter((line) => line.startsWith('touch PWNED'))).toEqual([]);
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});
