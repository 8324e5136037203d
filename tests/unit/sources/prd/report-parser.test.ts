import { describe, it, expect } from 'vitest';
import type { GateResult } from '../../../../lib/gates.ts';
import { decidePrdOutcome } from '../../../../lib/sources/prd/outcome.ts';
import { normalizeCheckName, normalizeStatus, parseAgentReport, type AgentReport } from '../../../../lib/sources/prd/report-parser.ts';

const FULL_REPORT = `I added the token helpers and the login route.

## Ralph Report
Status: completed
Summary: added src/auth/token.ts and POST /auth/login
Changes:
- src/auth/token.ts: sign and verify helpers
- src/routes/auth.ts: login route
Quality:
- typecheck: pass
- lint: pass
- tests: fail (1 flaky test in orders.spec.ts)
Learnings:
- The test database is reset by tests/setup.ts, not per file
- Use \`config.jwtSecret\`, never process.env directly
Commits:
- none
`;

describe('parseAgentReport: the Ralph Report block', () => {
  it('reads every field', () => {
    const report = parseAgentReport(FULL_REPORT);
    expect(report).toMatchObject({
      status: 'completed',
      statusSource: 'report',
      hasReport: true,
      summary: 'added src/auth/token.ts and POST /auth/login',
      changes: ['src/auth/token.ts: sign and verify helpers', 'src/routes/auth.ts: login route'],
      learnings: ['The test database is reset by tests/setup.ts, not per file', 'Use `config.jwtSecret`, never process.env directly'],
      commitMessages: [],
      contextLoss: [],
    });
    expect(report.quality).toEqual([
      { name: 'typecheck', passed: true },
      { name: 'lint', passed: true },
      { name: 'test', passed: false, detail: '1 flaky test in orders.spec.ts' },
    ]);
  });

  it('accepts bold labels, bullets and a report wrapped in a code fence', () => {
    const text = 'Done.\n\n```\n## Ralph Report\n- **Status:** partial\n- **Summary:** login route only\n- **Learnings:**\n  - bcrypt needs node-gyp here\n```\n';
    const report = parseAgentReport(text);
    expect(report).toMatchObject({ status: 'partial', hasReport: true, summary: 'login route only', learnings: ['bcrypt needs node-gyp here'], contextLoss: [] });
  });

  it('uses the last report when the agent wrote more than one', () => {
    const text = '## Ralph Report\nStatus: failed\n\nThen I fixed it.\n\n## Ralph Report\nStatus: completed\nSummary: fixed\n';
    expect(parseAgentReport(text)).toMatchObject({ status: 'completed', summary: 'fixed' });
  });

  it('ignores the template line copied verbatim', () => {
    const report = parseAgentReport('## Ralph Report\nStatus: completed | partial | failed\nSummary: x\n');
    expect(report.status).toBeUndefined();
    expect(report.contextLoss).toEqual([]);
  });

  it('reads inline quality and commit lists', () => {
    const report = parseAgentReport('## Ralph Report\nStatus: done\nQuality: typecheck ok, lint 0 errors, tests 2 failed\nCommits: feat(auth): add login\n');
    expect(report.quality).toEqual([
      { name: 'typecheck', passed: true },
      { name: 'lint', passed: true, detail: '0 errors' },
      { name: 'test', passed: false, detail: '2 failed' },
    ]);
    expect(report.commitMessages).toEqual(['feat(auth): add login']);
  });
});

describe('parseAgentReport: free text', () => {
  const statuses: Array<[string, AgentReport['status'], AgentReport['statusSource']]> = [
    ['All good.\n\n<promise>COMPLETE</promise>', 'completed', 'promise'],
    ['I implemented the helpers. The task is complete and all acceptance criteria are met.', 'completed', 'wording'],
    ['I started on the router but the task is not yet finished; remaining work: port POST /orders.', 'partial', 'wording'],
    ['I was unable to complete this: the migration tool is missing from the container.', 'failed', 'wording'],
    ['At first I was unable to complete the build, but after fixing the import the task is now complete.', 'completed', 'wording'],
    ['Here is what I looked at today.', undefined, undefined],
  ];
  for (const [text, status, source] of statuses) {
    it(`status ${String(status)} from: ${text.slice(0, 50)}`, () => {
      const report = parseAgentReport(text);
      expect(report.status).toBe(status);
      expect(report.statusSource).toBe(source);
    });
  }

  it('finds learnings in Learning: lines and a Learnings section', () => {
    const text = 'Work done.\n\nLearning: the ORM caches schemas per process\n\n### Learnings\n- migrations run from scripts/migrate.ts\n- Learning: the ORM caches schemas per process\n\nThat is all.';
    expect(parseAgentReport(text).learnings).toEqual(['the ORM caches schemas per process', 'migrations run from scripts/migrate.ts']);
  });

  it('reads quality from tool output the agent quotes', () => {
    const text = [
      '```',
      'src/a.ts(3,5): error TS2322: Type string is not assignable to type number.',
      'Found 1 error in src/a.ts:3',
      '✖ 3 problems (0 errors, 3 warnings)',
      ' Tests  1 failed | 41 passed (42)',
      '```',
    ].join('\n');
    expect(parseAgentReport(text).quality).toEqual([
      { name: 'typecheck', passed: false, detail: '1 errors' },
      { name: 'lint', passed: true, detail: '3 problems' },
      { name: 'test', passed: false, detail: 'Tests  1 failed | 41 passed (42)' },
    ]);
  });

  it('reads quality from prose, minding negation and intent', () => {
    const report = parseAgentReport('Typecheck passes. No tests fail now. I will make sure lint passes later.');
    expect(report.quality).toEqual([
      { name: 'typecheck', passed: true },
      { name: 'test', passed: true },
    ]);
  });

  it('collects commit messages from commands and git output', () => {
    const text = [
      'I ran `git commit -m "feat: add token helpers"` and then:',
      '```',
      "git commit -am 'fix: lint'",
      '[ralph/auth 1a2b3c4] feat: add token helpers',
      '[main (root-commit) 9f8e7d6] chore: init',
      'git commit -m "$(cat <<\'EOF\'',
      'docs: explain tokens',
      'EOF',
      ')"',
      '```',
    ].join('\n');
    expect(parseAgentReport(text).commitMessages).toEqual(['docs: explain tokens', 'feat: add token helpers', 'fix: lint', 'chore: init']);
  });

  it('summarises with the last paragraph and lists changed files from prose', () => {
    const report = parseAgentReport('- Created `src/auth/token.ts`\n- Updated src/routes/index.ts to mount the router\n\nLogin now issues JWTs; the task is complete.');
    expect(report.summary).toBe('Login now issues JWTs; the task is complete.');
    expect(report.changes).toEqual(['Created `src/auth/token.ts`', 'Updated src/routes/index.ts to mount the router']);
  });
});

describe('parseAgentReport: context loss', () => {
  it('flags empty output', () => {
    expect(parseAgentReport('  \n').contextLoss).toEqual(['no output from the agent']);
  });

  it('flags output cut off inside a code block', () => {
    const report = parseAgentReport('Now the helper:\n\n```ts\nexport function sign(');
    expect(report.contextLoss).toContain('the output ends inside a code block');
    expect(report.contextLoss).toContain('no final report or status');
  });

  it('flags a context-limit message', () => {
    const report = parseAgentReport('API Error: prompt is too long: 213000 tokens > 200000 maximum');
    expect(report.contextLoss[0]).toMatch(/^context limit: API Error: prompt is too long/);
  });

  it('does not flag a finished report', () => {
    expect(parseAgentReport(FULL_REPORT).contextLoss).toEqual([]);
  });
});

describe('normalizers', () => {
  it('maps status words', () => {
    expect(normalizeStatus('Completed ✅ (no errors)')).toBe('completed');
    expect(normalizeStatus('DONE')).toBe('completed');
    expect(normalizeStatus('in progress')).toBe('partial');
    expect(normalizeStatus('blocked by the missing API key')).toBe('failed');
    expect(normalizeStatus('whatever')).toBeUndefined();
  });

  it('maps check names', () => {
    expect(['type-check', 'tsc', 'TypeScript', 'eslint', 'unit tests', 'vitest', 'coverage'].map(normalizeCheckName)).toEqual([
      'typecheck',
      'typecheck',
      'typecheck',
      'lint',
      'test',
      'test',
      'coverage',
    ]);
  });
});

const gate = (name: string, passed: boolean, extra: Partial<GateResult> = {}): GateResult => ({
  name,
  command: `npm run ${name}`,
  passed,
  exitCode: passed ? 0 : 1,
  durationMs: 10,
  outputTail: '',
  ...extra,
});

describe('decidePrdOutcome', () => {
  const done = parseAgentReport('## Ralph Report\nStatus: completed\nSummary: did it\n');
  const partial = parseAgentReport('## Ralph Report\nStatus: partial\n');
  const failed = parseAgentReport('## Ralph Report\nStatus: failed\nSummary: the API key is missing\n');
  const silent = parseAgentReport('I changed some files.');
  const cut = parseAgentReport('```ts\nexport const');

  const cases: Array<[string, Parameters<typeof decidePrdOutcome>[0], string, RegExp]> = [
    ['agent failed', { agentReport: done, gates: [gate('test', true)], agentFailed: true }, 'fail', /agent run failed/],
    ['gate failed', { agentReport: done, gates: [gate('typecheck', true), gate('test', false)], agentFailed: false }, 'fail', /quality gates failed: test \(exit 1\)/],
    ['gate timed out', { agentReport: done, gates: [gate('test', false, { exitCode: 143, timedOut: true })], agentFailed: false }, 'fail', /test \(timed out\)/],
    ['agent says failed', { agentReport: failed, gates: [gate('test', true)], agentFailed: false }, 'fail', /reported the task as failed: the API key is missing/],
    ['completed, gates pass', { agentReport: done, gates: [gate('typecheck', true), gate('test', true)], agentFailed: false }, 'pass', /2 gates passed/],
    ['completed, no gates', { agentReport: done, gates: [], agentFailed: false }, 'pass', /no gates configured/],
    ['partial', { agentReport: partial, gates: [gate('test', true)], agentFailed: false }, 'no_change', /partial progress/],
    ['partial even if marked done', { agentReport: partial, gates: [], agentFailed: false, markedDone: true }, 'no_change', /partial/],
    ['silent but marked done', { agentReport: silent, gates: [gate('test', true)], agentFailed: false, markedDone: true }, 'pass', /marked the task done in prd.json/],
    ['silent', { agentReport: silent, gates: [gate('test', true)], agentFailed: false }, 'no_change', /no final report or status/],
    ['cut off', { agentReport: cut, gates: [], agentFailed: false }, 'no_change', /ends inside a code block/],
  ];
  for (const [name, input, kind, reason] of cases) {
    it(name, () => {
      const outcome = decidePrdOutcome(input);
      expect(outcome.kind).toBe(kind);
      expect(outcome.reason).toMatch(reason);
    });
  }
});
