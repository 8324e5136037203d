// Secrets from the environment never land in ralph's output: not in its logs, state files, reports,
// progress entries, commit messages, nor on either of its streams; --no-redact keeps them (so this can fail).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST, makeSandbox, runRalph, scenario, type Sandbox } from './helpers.ts';
import { answer, prdProject, reportText, SNARK } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const KEY = 'sk-ant-test-Q2h1bmt5U2VjcmV0S2V5MDEy';
const TOKEN = 'svc-token-8f2e61a9c3d7';
const SECRETS = { ANTHROPIC_API_KEY: KEY, MY_SERVICE_TOKEN: TOKEN };

/** Every file below `dir` (skipping .git), with its bytes read as latin1 so any byte sequence is searchable. */
function files(dir: string): Array<{ file: string; text: string; mode: number }> {
  const found: Array<{ file: string; text: string; mode: number }> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '.git') found.push(...files(file));
    } else if (entry.isFile()) {
      found.push({ file, text: readFileSync(file, 'latin1'), mode: statSync(file).mode & 0o777 });
    }
  }
  return found;
}

const assistant = (text: string) => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text }] } });
const toolUse = (command: string) => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command } }] } });
const finalReport = (learning: string) => `${assistant(reportText('completed', learning))}\n${answer(reportText('completed', learning))}`;
const toolResult = (text: string) => JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: text }] } });

// An agent that echoes both secrets whole, and each split across two writes ralph surely reads apart, in
// text, tool calls, tool results, stderr and its final report; and a gate that prints them and fails once.
function leakyRun(box: Sandbox): void {
  const splitKey = 12;
  const splitToken = 7;
  const leaks = {
    lines: [assistant(`Using ${KEY} now`), toolUse(`curl -H "Authorization: Bearer ${TOKEN}" https://api.example.test`), toolResult(`env: ANTHROPIC_API_KEY=${KEY}`)],
    chunks: [
      { text: `${assistant(`split-key-marker `).slice(0, -5)} ${KEY.slice(0, splitKey)}` },
      { waitForLog: 'split-key-marker', text: `${KEY.slice(splitKey)} end"}]}}\n` },
      { stream: 'stderr', text: `split-token-marker ${TOKEN.slice(0, splitToken)}` },
      { stream: 'stderr', waitForLog: 'split-token-marker', text: `${TOKEN.slice(splitToken)} done\n` },
    ],
    stderr: `debug: key=${KEY} token=${TOKEN}`,
  };
  scenario(box, [
    // The report comes last (the chunks are written after the lines), as assistant text and final answer.
    { ...leaks, chunks: [...leaks.chunks, { text: `${finalReport(`the key was ${KEY}`)}\n` }] },
    { ...leaks, write: { 'done.txt': 'done\n' }, chunks: [...leaks.chunks, { text: `${finalReport(`token ${TOKEN}`)}\n` }] },
  ]);
  const gate = `node -e "console.log('gate sees ' + process.env.MY_SERVICE_TOKEN); console.error('gate key ' + process.env.ANTHROPIC_API_KEY); process.exit(require('fs').existsSync('done.txt') ? 0 : 1)"`;
  prdProject(box, { ...SNARK, userStories: [SNARK.userStories[0]] }, gate);
}

describe('redaction, end to end', () => {
  it('keeps both secrets out of every file ralph writes, its commits and its output', async () => {
    sandbox = makeSandbox();
    leakyRun(sandbox);
    const result = await runRalph(sandbox, ['--json', '--on-exit', 'echo "hook: $RALPH_STATUS"', ...FAST], SECRETS);
    expect(result.code, result.stderr).toBe(0);

    const written = files(sandbox.repo);
    const log = written.find((entry) => entry.file.endsWith(path.join('iteration-1.jsonl')))!;
    const stderrLog = written.find((entry) => entry.file.endsWith(path.join('iteration-1.stderr.log')))!;
    // The redaction happened where the secrets were (so the checks below look at the right files).
    expect(log.text).toContain('Using [redacted:ANTHROPIC_API_KEY] now');
    expect(log.text).toContain('split-key-marker  [redacted:ANTHROPIC_API_KEY] end');
    expect(log.text).toContain('Bearer [redacted:MY_SERVICE_TOKEN]');
    expect(stderrLog.text).toContain('split-token-marker [redacted:MY_SERVICE_TOKEN] done');
    expect(stderrLog.text).toContain('debug: key=[redacted:ANTHROPIC_API_KEY] token=[redacted:MY_SERVICE_TOKEN]');
    const progress = readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8');
    expect(progress).toContain('[redacted:ANTHROPIC_API_KEY]');
    expect(progress).toContain('gate key [redacted:ANTHROPIC_API_KEY]');

    for (const secret of [KEY, TOKEN]) {
      for (const entry of written) expect(entry.text.includes(secret), `${secret} in ${entry.file}`).toBe(false);
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
      const commits = execFileSync('git', ['log', '--all', '--format=%B'], { cwd: sandbox.repo, env: sandbox.env, encoding: 'utf8' });
      expect(commits).not.toContain(secret);
    }
    expect(result.stderr).toContain('hook: completed');
    // .ralph/ and everything in it is for its owner only.
    const ralphDir = path.join(sandbox.repo, '.ralph');
    expect(statSync(ralphDir).mode & 0o777).toBe(0o700);
    for (const entry of written.filter((item) => item.file.startsWith(ralphDir + path.sep))) {
      expect(entry.mode & 0o077, `${entry.file} is ${entry.mode.toString(8)}`).toBe(0);
    }
  });

  it('keeps them with --no-redact (the control: the same run does leak without redaction)', async () => {
    sandbox = makeSandbox();
    leakyRun(sandbox);
    const result = await runRalph(sandbox, ['--no-redact', '--json', ...FAST], SECRETS);
    expect(result.code, result.stderr).toBe(0);
    const log = files(sandbox.repo).find((entry) => entry.file.endsWith('iteration-1.jsonl'))!;
    expect(log.text).toContain(`Using ${KEY} now`);
    expect(log.text).toContain(`split-key-marker  ${KEY} end`);
    expect(readFileSync(path.join(sandbox.repo, 'progress.txt'), 'utf8')).toContain(TOKEN);
  });
});
