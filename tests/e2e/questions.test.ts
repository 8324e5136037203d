// Questions (issue 28, item 2): an agent that cannot go on without a person's decision says so inside
// <question>…</question> in its final answer. The task is set aside at once (no retry, not counted by the
// skip rule or the breaker), the run goes on with the others and ends with exit 1 naming the question;
// `ralph answer` records the answer, and the next prompt for that task carries both.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, closeStep, FAST, makeSandbox, runRalph, scenario, seedBeads, startRalph, waitFor, type Sandbox } from './helpers.ts';
import { answer, FEATURE, prdHistory, prdProject, report, specKitProject, tick } from './projects.ts';
import { startWebhook, type Webhook } from './webhook.ts';

let sandbox: Sandbox | undefined;
let hook: Webhook | undefined;
afterEach(async () => {
  await hook?.close();
  hook = undefined;
  sandbox?.cleanup();
  sandbox = undefined;
});

const TASKS = [
  '# Tasks: Demo',
  '',
  '## Phase 1: Setup',
  '',
  '- [X] T001 Create the project structure',
  '',
  '## Phase 2: User Story 1 - Greet (Priority: P1) 🎯 MVP',
  '',
  '- [ ] T002 [US1] Write greet() in src/greet.ts',
  '- [ ] T003 [US1] Test greet() in tests/greet.test.ts',
  '',
  '## Phase 3: User Story 2 - Farewell (Priority: P2)',
  '',
  '- [ ] T004 [US2] Write farewell() in src/farewell.ts',
  '',
].join('\n');

const QUESTION = 'Should greet() return "Hello, X" or "Hi X"? The spec says both.';
const asks = (question = QUESTION): Record<string, unknown> => ({ lines: [answer(`I stopped before changing anything: the spec disagrees with itself.\n\n<question>${question}</question>`)] });
const scenarioFile = (box: Sandbox, data: unknown): void => {
  const file = path.join(box.root, 'scenario.json');
  writeFileSync(file, JSON.stringify(data));
  box.env.FAKE_AGENT_SCENARIO = file;
};
const summaryOf = (stdout: string) => JSON.parse(stdout) as { status: string; exitCode: number; message: string; records: Array<Record<string, unknown>>; questions?: Array<Record<string, unknown>> };
const outcomes = (records: Array<Record<string, unknown>>): string[] => records.map((record) => `${String(record.taskId)}:${String(record.outcome)}`);

describe('questions, end to end', () => {
  it('Spec Kit: a task that asks is set aside after one try, the run ends 1 naming it; answered, its next prompt carries question and answer', async () => {
    const box = (sandbox = makeSandbox());
    specKitProject(box, TASKS);
    hook = await startWebhook();
    // The second run's T002 finishes only when its prompt holds the answer (byPrompt matches on it).
    scenarioFile(box, {
      byPrompt: [{ match: '- Answer: Hello, X (the greeting of the style guide)', steps: [{ edit: [tick('T002')], lines: [answer('Did T002 with "Hello, X".')] }] }],
      steps: [asks(), { edit: [tick('T003')], lines: [answer('Did T003.')] }, { edit: [tick('T004')], lines: [answer('Did T004.')] }, { lines: [answer('No answer in my prompt, nothing done.')] }],
    });
    // --max-no-progress 1: a question counted by the breaker would stop the run after iteration 1.
    const first = await runRalph(box, ['--json', '--max-no-progress', '1', '--notify', hook.url, ...FAST]);
    expect(first.code, first.stderr).toBe(1);
    const summary = summaryOf(first.stdout);
    expect(outcomes(summary.records)).toEqual(['T002:question', 'T003:pass', 'T004:pass']);
    expect(summary.records[0]).toMatchObject({ question: QUESTION, reason: `asked: ${QUESTION}`, attempts: 1, tasksDone: [] });
    expect(summary.records[0]!.gates).toBeUndefined();
    expect(summary.message).toBe(`waiting for answers: T002 "${QUESTION}"; answer with: ralph answer T002 "…"`);
    expect(summary.questions).toEqual([{ taskId: 'T002', taskTitle: 'Write greet() in src/greet.ts', question: QUESTION, iteration: 1, askedAt: expect.any(String) }]);
    // One agent run for the question: not retried.
    expect(agentCalls(box)).toHaveLength(3);
    // T003's prompt tells the agent to leave T002 alone.
    expect(agentCalls(box)[1]!.stdin).toMatch(/Tasks waiting for a person's answer[^\n]*\n- T002 /);
    expect(first.stderr).toMatch(/iteration 1 T002: question in [\d.]+m?s: "Should greet\(\) return "Hello, X" or "Hi X"\? The spec says both\."; set aside until ralph answer T002 "…"/);
    expect(first.stderr).toMatch(/failed: waiting for answers: T002 /);
    // Not a failure of the task: no skip count, one attempt, the question in progress.txt.
    const tracking = JSON.parse(readFileSync(path.join(box.repo, FEATURE, 'ralph-tasks.json'), 'utf8')) as { tasks: Array<Record<string, unknown>> };
    expect(tracking.tasks.find((task) => task.id === 'T002')).toMatchObject({ status: 'open', failures: 0, consecutiveFailures: 0, attempts: 1, lastOutcome: 'question' });
    const progress = readFileSync(path.join(box.repo, FEATURE, 'progress.txt'), 'utf8');
    expect(progress).toContain(`- Status: ❓ Question: waiting for an answer\n- Question: ${QUESTION}\n`);
    // status.json, the report and the notification say it too.
    const status = JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'status.json'), 'utf8')) as Record<string, unknown>;
    expect(status).toMatchObject({ counts: { questions: 1 }, questions: [{ taskId: 'T002', question: QUESTION, iteration: 1 }] });
    const reportFile = readdirSync(path.join(box.repo, '.ralph', 'reports')).find((name) => name.endsWith('.md'))!;
    expect(readFileSync(path.join(box.repo, '.ralph', 'reports', reportFile), 'utf8')).toMatch(/## Questions\n\n\| # \| task \| question \| answer \|\n.*\n\| 1 \| T002 Write greet\(\) in src\/greet\.ts \| Should greet\(\).* \| waiting for an answer: ralph answer T002 "…" \|/);
    await waitFor(() => hook!.received.some((item) => item.json?.event === 'question'), 10_000, 'the question notification');
    expect(hook.received.find((item) => item.json?.event === 'question')!.json).toMatchObject({ level: 'warning', title: expect.stringContaining('T002 waits for your answer'), text: expect.stringContaining('Answer with: ralph answer T002 "…"') });
    // ralph status and ralph answer list it.
    const shown = await runRalph(box, ['status']);
    expect(shown.stdout).toMatch(/tasks \(speckit, .*\): 3 done, 1 remaining \(0 ready, 1 waiting for an answer\)/);
    expect(shown.stdout).toMatch(/waiting for answers \(ralph answer T002 "…"\):\n  T002 \(iteration 1, [^)]* ago\): Should greet\(\)/);
    // The dry run sets it aside as the run does.
    const dry = await runRalph(box, ['--dry-run']);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain('tasks: 3 done, 1 remaining, 0 ready, 1 waiting for an answer to its question (T002; ralph answer lists them)');
    expect(dry.stdout).toContain(`✗ waiting for answers: T002 "${QUESTION}"; answer with: ralph answer T002 "…"`);
    const listed = await runRalph(box, ['answer']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`T002 (iteration 1, `);

    // A task nobody asked about, and a missing answer, are refused (exit 1) and change nothing.
    const unknown = await runRalph(box, ['answer', 'T999', 'yes']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('ralph: no question of T999 waits for an answer; waiting: T002\n');
    const empty = await runRalph(box, ['answer', 'T002']);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('the answer is empty');
    expect(empty.stderr).toContain(`T002 asked: ${QUESTION}`);

    const answered = await runRalph(box, ['answer', 'T002', 'Hello, X (the greeting of the style guide)']);
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toBe(`answered T002: "${QUESTION}" → "Hello, X (the greeting of the style guide)"; the next run takes T002 again, with the question and the answer in its prompt\n`);

    const second = await runRalph(box, ['--json', ...FAST]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('T002: the question of iteration 1 was answered; its next prompt carries the answer');
    const prompt = agentCalls(box)[3]!.stdin;
    expect(prompt).toContain(`- Question: ${QUESTION}\n- Answer: Hello, X (the greeting of the style guide)`);
    const done = summaryOf(second.stdout);
    expect(outcomes(done.records)).toEqual(['T002:pass']);
    // Done with: no question left, in the summary or the store.
    expect(done.questions).toBeUndefined();
    expect((await runRalph(box, ['answer'])).stdout).toMatch(/^no question waits for an answer in /);
  });

  it('PRD: the story that asks stays pending (no attempt spent, no gates), the other passes; answered, it passes', async () => {
    const box = (sandbox = makeSandbox());
    prdProject(box);
    const asked = 'Store times in UTC or in the user\'s zone?';
    scenarioFile(box, {
      byPrompt: [
        { match: '- Answer: UTC', steps: [{ write: { 'app.txt': 'utc\n' }, lines: [report('completed')] }] },
        { match: '**US-001**', steps: [{ lines: [answer(`Blocked on a decision.\n<question>${asked}</question>`)] }] },
        { match: '**US-002**', steps: [{ write: { 'two.txt': 'two\n' }, lines: [report('completed')] }] },
      ],
    });
    const first = await runRalph(box, ['--json', '--max-no-progress', '1', ...FAST]);
    expect(first.code, first.stderr).toBe(1);
    const summary = summaryOf(first.stdout);
    expect(outcomes(summary.records)).toEqual(['US-001:question', 'US-002:pass']);
    expect(summary.message).toBe(`waiting for answers: US-001 "${asked}"; answer with: ralph answer US-001 "…"`);
    expect(agentCalls(box)).toHaveLength(2);
    const story = (JSON.parse(readFileSync(path.join(box.repo, 'prd.json'), 'utf8')) as { userStories: Array<Record<string, unknown>> }).userStories[0]!;
    expect(story.passes).toBe(false);
    expect(prdHistory(box)[0]).toMatchObject({ completionStatus: 'question', question: asked, failedCount: 0, qualityMetrics: { gates: [] } });
    expect(readFileSync(path.join(box.repo, 'progress.txt'), 'utf8')).toMatch(new RegExp(`- US-001 - iteration 1: question: waiting for an answer\\nTask: US-001 First story\\nQuestion: ${asked.replace(/[?']/g, '.')}\\n`));

    expect((await runRalph(box, ['answer', 'US-001', 'UTC'])).code).toBe(0);
    const second = await runRalph(box, ['--json', ...FAST]);
    expect(second.code, second.stderr).toBe(0);
    expect(outcomes(summaryOf(second.stdout).records)).toEqual(['US-001:pass']);
    expect(agentCalls(box)[2]!.stdin).toContain(`- Question: ${asked}\n- Answer: UTC`);
  });

  it('a question echoed from the prompt, in a tool result, in earlier words or in a code block is no question: the task is not set aside', async () => {
    const box = (sandbox = makeSandbox());
    specKitProject(box, TASKS);
    const toolResult = JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'spec.md: <question>Hello or Hi?</question>', is_error: false }] } });
    // Words of the agent on the way, not its final answer.
    const thinking = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'First thought: <question>Hello or Hi?</question> but the plan settles it.' }] } });
    const echoed = readFileSync(path.join(__dirname, '..', '..', 'templates', 'ralph-prompt.md'), 'utf8').split('## 4. Your final answer')[1]!;
    scenario(box, [
      { lines: [thinking, toolResult, answer(`I read the rules:\n${echoed}\nAn example:\n\`\`\`\n<question>Hello or Hi?</question>\n\`\`\`\nNot done yet.`)] },
      { edit: [tick('T002'), tick('T003')], lines: [answer('Did T002 and T003.')] },
      { edit: [tick('T004')], lines: [answer('Did T004.')] },
    ]);
    const result = await runRalph(box, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result.stdout);
    // T002 was taken again at once: it was never set aside.
    expect(outcomes(summary.records)).toEqual(['T002:no_change', 'T002:pass', 'T004:pass']);
    expect(summary.records[0]!.question).toBeUndefined();
    expect(summary.questions).toBeUndefined();
    expect(existsSync(path.join(box.repo, '.ralph', 'questions.jsonl'))).toBe(false);
  });

  it('an answer given while the run works on other tasks is taken by the same run', async () => {
    const box = (sandbox = makeSandbox());
    specKitProject(box, TASKS);
    const go = path.join(box.root, 'go');
    scenarioFile(box, {
      byPrompt: [{ match: '- Answer: Hello, X', steps: [{ edit: [tick('T002')], lines: [answer('Did T002.')] }] }],
      steps: [asks(), { waitFile: go, edit: [tick('T003')], lines: [answer('Did T003.')] }, { edit: [tick('T004')], lines: [answer('Did T004.')] }],
    });
    const run = startRalph(box, ['--json', ...FAST]);
    try {
      // The agent on T003 has started (the fake logs each call first) and waits for the go file.
      await waitFor(() => agentCalls(box).length === 2, 20_000, 'the agent on T003');
      const answered = await runRalph(box, ['answer', 'T002', 'Hello, X']);
      expect(answered.code, answered.stderr).toBe(0);
      expect(answered.stdout).toMatch(/the run in progress \(PID \d+\) takes T002 again when it next picks a task/);
    } finally {
      writeFileSync(go, '');
    }
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(outcomes(summaryOf(result.stdout).records)).toEqual(['T002:question', 'T003:pass', 'T002:pass', 'T004:pass']);
    expect(agentCalls(box)[2]!.stdin).toContain('- Answer: Hello, X');
  });

  it('beads: the bead ralph took is set aside; /sp:next is told to leave it, then gets the answer', async () => {
    const box = (sandbox = makeSandbox());
    seedBeads(box, [
      { id: 'ws-9w6', title: 'Feature: ralph-automation', issue_type: 'epic', priority: 1 },
      { id: 'ws-9w6.1', title: '[sp:02-clarify] Clarify the spec', parent: 'ws-9w6', status: 'closed', priority: 1 },
      { id: 'ws-9w6.2', title: 'Task 1: the endpoint', parent: 'ws-9w6', priority: 2 },
      { id: 'ws-9w6.3', title: 'Task 2: the page', parent: 'ws-9w6', priority: 2 },
    ]);
    scenarioFile(box, {
      byPrompt: [{ match: '- Answer: 410', steps: [closeStep('ws-9w6.2')] }],
      steps: [asks('404 or 410 for a deleted user?'), closeStep('ws-9w6.3')],
    });
    const first = await runRalph(box, ['--json', ...FAST]);
    expect(first.code, first.stderr).toBe(1);
    expect(outcomes(summaryOf(first.stdout).records)).toEqual(['ws-9w6.2:question', 'ws-9w6.3:pass']);
    expect(summaryOf(first.stdout).message).toBe('waiting for answers: ws-9w6.2 "404 or 410 for a deleted user?"; answer with: ralph answer ws-9w6.2 "…"');
    // The first prompt is the bare command; the second names the bead to leave alone.
    expect(agentCalls(box)[0]!.stdin).toBe('/sp:next');
    expect(agentCalls(box)[1]!.stdin).toContain('- ws-9w6.2 "Task 1: the endpoint": "404 or 410 for a deleted user?"');
    expect((await runRalph(box, ['answer', 'ws-9w6.2', '410'])).code).toBe(0);
    const second = await runRalph(box, ['--json', ...FAST]);
    expect(second.code, second.stderr).toBe(0);
    expect(outcomes(summaryOf(second.stdout).records)).toEqual(['ws-9w6.2:pass']);
    expect(agentCalls(box)[2]!.stdin).toContain('Bead ws-9w6.2: Your question and its answer');
  });
});
