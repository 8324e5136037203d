// --fallback: a usage limit (or no credit left) moves the same iteration to the next agent of the list at
// once; the primary comes back once its limit resets; only when every agent is limited does ralph wait.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, specKitProject, tick } from './projects.ts';
import { agentCalls, FAST, makeSandbox, runRalph, scenario, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const RECORDINGS = path.join(__dirname, '..', 'fixtures', 'recordings');
const TASKS = ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', '- [ ] T002 Create src/b.ts', ''].join('\n');

/** claude's recorded usage-limit answer (a five-hour window), resetting in `seconds`. */
function claudeLimited(seconds: number): Record<string, unknown> {
  const recorded = readFileSync(path.join(RECORDINGS, 'claude-oauth-unified5h.jsonl'), 'utf8').split('\n').filter(Boolean);
  const rateLimit = recorded.find((line) => line.includes('"rate_limit_event"'))!.replace(/"resetsAt":\d+/, '"resetsAt":__RESET_EPOCH__');
  return { lines: [rateLimit, recorded.find((line) => line.includes('"type":"result"'))!], resetInSeconds: seconds, exit: 1 };
}

/** codex's recorded usage-limit answer, saying it resets in `seconds`. */
function codexLimited(seconds: number): Record<string, unknown> {
  const message = `You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again in ${seconds} seconds.`;
  return { lines: ['{"type":"thread.started","thread_id":"t1"}', '{"type":"turn.started"}', JSON.stringify({ type: 'error', message }), JSON.stringify({ type: 'turn.failed', error: { message } })], exit: 1 };
}

/** codex doing a task: the tick, then its recorded success. */
const codexDoes = (id: string) => ({ edit: [tick(id)], replay: 'codex-ok.jsonl' });
const claudeDoes = (id: string, extra: Record<string, unknown> = {}) => ({ edit: [tick(id)], lines: [answer(`Did ${id}.`)], ...extra });

describe('--fallback', () => {
  it('a primary limited for two hours: the same iteration goes on with the fallback at once, which finishes the feature', async () => {
    sandbox = makeSandbox({ agents: ['claude', 'codex'] });
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [claudeLimited(7200), codexDoes('T001'), codexDoes('T002')]);
    const started = Date.now();
    const result = await runRalph(sandbox, ['--fallback', 'codex', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(agentCalls(sandbox).map((call) => call.name)).toEqual(['claude', 'codex', 'codex']);
    expect(result.stderr).toMatch(/claude limited until \d{4}-\d\d-\d\d \d\d:\d\d \(usage limit \(five_hour\)\): continuing with codex/);
    expect(result.stderr).not.toMatch(/usage limit: waiting until/);
    const summary = JSON.parse(result.stdout);
    expect(summary.records.map((record: { agent?: string; attempts: number }) => [record.agent, record.attempts])).toEqual([['codex', 1], ['codex', 1]]);
    expect(summary.agents).toEqual([
      expect.objectContaining({ agent: 'claude', iterations: 0, limitedUntil: expect.stringMatching(/^\d{4}-/) }),
      expect.objectContaining({ agent: 'codex', iterations: 2, inputTokens: 20, outputTokens: 24 }),
    ]);
    const report = readFileSync(path.join(sandbox.repo, '.ralph', 'reports', `${summary.sessionId}.md`), 'utf8');
    expect(report).toMatch(/## Agents\n\n\| agent \| iterations \| cost \| tokens in \| tokens out \| limited at the end \|\n\| --- \|[^\n]*\n\| claude \| 0 \|[^\n]*\| until [^\n]*\|\n\| codex \| 2 \|/);
  });

  it('the primary comes back once its reset has passed', async () => {
    sandbox = makeSandbox({ agents: ['claude', 'codex'] });
    specKitProject(sandbox, TASKS);
    // claude is limited for 2 s; codex's iteration takes longer than that; the next iteration is claude's.
    scenario(sandbox, [claudeLimited(2), { ...codexDoes('T001'), workMs: 3500 }, claudeDoes('T002')]);
    const result = await runRalph(sandbox, ['--fallback', 'codex', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox).map((call) => call.name)).toEqual(['claude', 'codex', 'claude']);
    expect(result.stderr).toMatch(/claude's usage limit has reset: it works again from iteration 2/);
    expect(JSON.parse(result.stdout).records.map((record: { agent?: string }) => record.agent)).toEqual(['codex', 'claude']);
  });

  it('every agent limited: one wait, for the earliest reset, then the agent whose limit reset goes on', async () => {
    sandbox = makeSandbox({ agents: ['claude', 'codex'] });
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [claudeLimited(2), codexLimited(30), claudeDoes('T001'), claudeDoes('T002')]);
    const result = await runRalph(sandbox, ['--fallback', 'codex', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox).map((call) => call.name)).toEqual(['claude', 'codex', 'claude', 'claude']);
    const waits = result.stderr.split('\n').filter((line) => line.includes('usage limit: waiting until'));
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatch(/every agent is limited \(claude, codex\); codex: /);
    const summary = JSON.parse(result.stdout);
    expect(summary.records[0]).toMatchObject({ agent: 'claude', attempts: 1 });
    expect(summary.agents.find((agent: { agent: string }) => agent.agent === 'codex').limitedUntil).toMatch(/^\d{4}-/);
  });

  it('a primary out of credit: a fallback takes over for the rest of the run; without one it is a setup error', async () => {
    sandbox = makeSandbox({ agents: ['claude', 'codex'] });
    specKitProject(sandbox, TASKS);
    const noCredit = { lines: [JSON.stringify({ type: 'result', subtype: 'success', is_error: true, result: 'Credit balance is too low', num_turns: 1 })], exit: 1 };
    scenario(sandbox, [noCredit, codexDoes('T001'), codexDoes('T002')]);
    const result = await runRalph(sandbox, ['--fallback', 'codex', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/claude limited for the rest of the run \(Credit balance is too low\): continuing with codex/);
    expect(agentCalls(sandbox).map((call) => call.name)).toEqual(['claude', 'codex', 'codex']);
    expect(JSON.parse(result.stdout).agents[0]).toMatchObject({ agent: 'claude', limitedUntil: null });
    // The same answer without a fallback: nothing to wait for, so the run ends at once.
    const alone = makeSandbox({ agents: ['claude'] });
    try {
      specKitProject(alone, TASKS);
      scenario(alone, [noCredit]);
      const failed = await runRalph(alone, FAST);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('ralph: agent setup error: Credit balance is too low');
      expect(failed.stderr).toContain('or name another agent with --fallback; waiting will not help');
    } finally {
      alone.cleanup();
    }
  });

  it('without a fallback, a limit whose reset has already passed is waited out (a second) as before, never a switch to itself', async () => {
    sandbox = makeSandbox({ agents: ['claude'] });
    specKitProject(sandbox, TASKS);
    scenario(sandbox, [claudeLimited(-5), claudeDoes('T001'), claudeDoes('T002')]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/usage limit: waiting until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d .*five_hour/);
    expect(result.stderr).not.toMatch(/continuing with/);
    expect(JSON.parse(result.stdout).agents).toBeUndefined();
  });

  it('claude then codex: the dry run shows each command line and checks each CLI is installed', async () => {
    sandbox = makeSandbox({ agents: ['claude', 'codex'] });
    specKitProject(sandbox, TASKS);
    const plan = await runRalph(sandbox, ['--dry-run', '--model', 'opus', '--fallback', 'claude:sonnet', '--fallback', 'codex']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toContain('fallbacks: on a usage limit (or no credit left) the same iteration goes on with claude:sonnet, then codex; claude:opus comes back once its limit resets; ralph waits only when every one is limited');
    expect(plan.stdout).toMatch(/ {2}fallback 1: claude -p --output-format stream-json --verbose --dangerously-skip-permissions --model sonnet\n {2}fallback 2: codex exec /);
    const missing = await runRalph(sandbox, ['--dry-run', '--fallback', 'gemini']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain("✗ fallback CLI 'gemini' (--fallback gemini) not found on PATH: install it or drop it from --fallback");
    const twice = await runRalph(sandbox, ['--dry-run', '--fallback', 'claude']);
    expect(twice.stdout).toContain('✗ --fallback claude: claude is already in the list (claude)');
  });
});
