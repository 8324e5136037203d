// Faults in what the agent prints: garbage and invalid UTF-8, a huge unterminated line, and the completion
// token where it does not mean "done" (a tool result, an echoed prompt, negated prose).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentCalls,
  answer,
  b64,
  expectLockGone,
  expectNoSurvivors,
  iterationLog,
  makeSandbox,
  progressIterations,
  progressTxt,
  QUICK,
  rawCounts,
  readTasks,
  runRalph,
  scenario,
  specKitProject,
  TASKS,
  tick,
  useRawAgent,
  type Sandbox,
} from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const TOKEN = '<promise>COMPLETE</promise>';
const RECORDINGS = path.join(__dirname, '..', 'fixtures', 'recordings');
const INIT = readFileSync(path.join(RECORDINGS, 'claude-ok.jsonl'), 'utf8').split('\n')[0]!;

interface Record {
  iteration: number;
  outcome: string;
  attempts: number;
  claimedComplete: boolean;
  tasksDone: string[];
}

describe('garbage and invalid UTF-8 on stdout', () => {
  const garbage = Buffer.concat([
    Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a]),
    Buffer.from('not json at all\n{"type":"assistant","message":{"content":[{"type":"te\n'),
    Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0x0a]),
    Buffer.from('\u001b[31mred\u001b[0m \r\n[1, 2, 3]\nnull\n"string"\n{"type":42}\n{"type":"result","result":}\n'),
  ]);

  it('ralph does not crash: a run with only garbage is retried, and one with a readable result counts', async () => {
    sandbox = makeSandbox();
    useRawAgent(sandbox);
    specKitProject(sandbox);
    scenario(sandbox, [
      // Nothing readable at all, exit 0: a cut-off run, retried.
      { rawBefore: b64(garbage), lines: [] },
      // Garbage before and after a readable stream: classified from what can be read.
      { rawBefore: b64(garbage), rawAfter: b64(garbage), edit: [tick('T002'), tick('T003')], lines: [INIT, answer('Did T002 and T003.')] },
      { rawBefore: b64(garbage), edit: [tick('T004'), tick('T005')], lines: [answer(`All done.\n${TOKEN}`)] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/TypeError|RangeError|SyntaxError|at .*\.ts:\d+/);
    expect(result.stderr).toMatch(/attempt 1 failed \(transient\): agent ended without a result/);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: Record) => [record.iteration, record.outcome, record.attempts, record.claimedComplete])).toEqual([
      [1, 'pass', 2, false],
      [2, 'pass', 1, true],
    ]);
    expect(readTasks(sandbox)).toBe(TASKS.replaceAll('- [ ] T00', '- [X] T00'));
    // The logs keep the raw bytes as the agent wrote them, invalid UTF-8 included.
    const counts = rawCounts(sandbox);
    expect(iterationLog(sandbox, 1).length).toBe(counts[0]! + counts[1]!);
    expect(iterationLog(sandbox, 2).length).toBe(counts[2]!);
    expect(iterationLog(sandbox, 1).subarray(0, garbage.length).equals(garbage)).toBe(true);
    // JSON files ralph writes stay valid whatever the agent printed.
    expect(() => JSON.parse(readFileSync(path.join(sandbox.repo, '.ralph', 'status.json'), 'utf8'))).not.toThrow();
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('a 10 MB line without a newline at the end of the output', () => {
  it('is logged completely and does not stop the iteration from counting', async () => {
    sandbox = makeSandbox();
    useRawAgent(sandbox);
    specKitProject(sandbox);
    const tail = 10 * 1024 * 1024;
    scenario(sandbox, [{ edit: [tick('T002'), tick('T003'), tick('T004'), tick('T005')], lines: [INIT, answer('All done.')], tailBytes: tail }]);
    const result = await runRalph(sandbox, ['--json', ...QUICK]);
    expect(result.code, result.stderr).toBe(0);
    const [written] = rawCounts(sandbox);
    expect(written).toBeGreaterThan(tail);
    const log = iterationLog(sandbox, 1);
    expect(log.length).toBe(written);
    expect(log[log.length - 1]).toBe('y'.charCodeAt(0));
    expect(JSON.parse(result.stdout).records[0]).toMatchObject({ outcome: 'pass', attempts: 1 });
    expectLockGone(sandbox);
    await expectNoSurvivors(sandbox);
  });
});

describe('the completion token where it does not mean "done"', () => {
  const toolResult = (text: string) => JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: text, is_error: false }] } });
  const toolUse = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'cat templates/ralph-prompt.md' } }] } });

  /** Exit 2 at the limit, every record not a claim, no premature-promise warning, tasks left open. */
  function expectRanToLimit(result: { code: number | null; stdout: string; stderr: string }, iterations: number, open: number): void {
    expect(result.code, result.stderr).toBe(2);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'limit_reached', iterations, tasksRemaining: open });
    expect(summary.records.map((record: Record) => record.claimedComplete)).toEqual(Array(iterations).fill(false));
    expect(result.stderr).not.toMatch(/premature completion promise/);
    expect((readTasks(sandbox).match(/- \[ \]/g) ?? []).length).toBe(open);
    expect(progressIterations(progressTxt(sandbox))).toEqual(Array.from({ length: iterations }, (_, index) => index + 1));
    expectLockGone(sandbox);
  }

  it('in a tool result (on its own line), the run goes on to the limit', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [
      { edit: [tick('T002')], lines: [INIT, toolUse, toolResult(`# prompt\n\n${TOKEN}\n\nmore`), answer('Did T002; T003 is next.')] },
      { edit: [tick('T003')], lines: [INIT, toolUse, toolResult(TOKEN), answer('Did T003.')] },
    ]);
    const result = await runRalph(sandbox, ['--max-iterations', '2', '--json', ...QUICK]);
    expectRanToLimit(result, 2, 2);
    await expectNoSurvivors(sandbox);
  });

  it("in an echoed prompt: Gemini's user message and a claude 'user' event", async () => {
    sandbox = makeSandbox({ agents: ['gemini', 'claude'] });
    specKitProject(sandbox);
    const gemini = readFileSync(path.join(RECORDINGS, 'gemini-ok.jsonl'), 'utf8').trim().split('\n');
    // gemini echoes the prompt (whose instructions name the token on its own line) as a user message.
    const echo = JSON.stringify({ type: 'message', timestamp: '2026-11-22T00:26:46.631Z', role: 'user', content: readFileSync(path.join(__dirname, '..', '..', 'templates', 'ralph-prompt.md'), 'utf8') });
    scenario(sandbox, [
      { edit: [tick('T002')], lines: [gemini[0]!, echo, gemini[2]!.replace(`Work done. ${TOKEN}`, 'Did T002.'), gemini[3]!] },
      { edit: [tick('T003')], lines: [gemini[0]!, echo, gemini[2]!.replace(`Work done. ${TOKEN}`, 'Did T003, more remain.'), gemini[3]!] },
    ]);
    const result = await runRalph(sandbox, ['--agent', 'gemini', '--max-iterations', '2', '--json', ...QUICK]);
    expectRanToLimit(result, 2, 2);
    expect(agentCalls(sandbox).every((call) => call.name === 'gemini')).toBe(true);

    // claude's stream can carry the user's message back too.
    const userEcho = JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: `Finish the task.\n\n${TOKEN}\n` }] } });
    scenario(sandbox, [{ edit: [tick('T004')], lines: [INIT, userEcho, answer('Did T004.')] }]);
    const again = await runRalph(sandbox, ['--max-iterations', '1', '--json', ...QUICK]);
    expect(again.code, again.stderr).toBe(2);
    expect(JSON.parse(again.stdout).records.map((record: Record) => [record.iteration, record.claimedComplete])).toEqual([[3, false]]);
    await expectNoSurvivors(sandbox);
  });

  it('negated in prose, the run goes on to the limit', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox);
    scenario(sandbox, [
      { edit: [tick('T002')], lines: [INIT, answer(`Did T002. I will not output ${TOKEN} yet`)] },
      { edit: [tick('T003')], lines: [INIT, answer(`Did T003. Tasks remain, so I will not output ${TOKEN}`)] },
      { edit: [tick('T004')], lines: [INIT, answer(`Did T004.\nI'll print ${TOKEN} only when T005 is done.`)] },
    ]);
    const result = await runRalph(sandbox, ['--max-iterations', '3', '--json', ...QUICK]);
    expectRanToLimit(result, 3, 1);
    await expectNoSurvivors(sandbox);
  });
});
