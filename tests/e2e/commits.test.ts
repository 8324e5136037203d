// What ralph commits on a user's own repository: what the run changed, never what the user had changed
// before it, never a secret; and nothing of ralph's left uncommitted once a run ends.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, FEATURE, prdProject, report, SNARK, specKitProject, TASKS_PATH, tick } from './projects.ts';
import { agentCalls, FAST, makeSandbox, runRalph, scenario, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

/** A live-looking key that the run's environment holds (a *_KEY variable: secret by its name). */
const SECRET = 'sk-ant-api03-e2eTEST0123456789abcdefXYZ';
const git = (box: Sandbox, args: string[]): string => execFileSync('git', args, { cwd: box.repo, encoding: 'utf8', env: box.env });
const status = (box: Sandbox): string[] => git(box, ['status', '--porcelain', '--untracked-files=all']).split('\n').filter(Boolean).sort();
/** Every path any commit since `base` touched. */
const committedSince = (box: Sandbox, base: string): string[] => [...new Set(git(box, ['log', '--name-only', '--format=', `${base}..HEAD`]).split('\n').filter(Boolean))].sort();

describe('what ralph commits', () => {
  it('PRD: commits only what the run changed; the user\'s .env and half-edited file stay theirs; a file holding a secret stays out', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    // Before the run: an untracked .env with a key and a tracked file half edited.
    writeFileSync(path.join(sandbox.repo, '.env'), 'STRIPE_KEY=sk_test_user_own_value_123\n');
    writeFileSync(path.join(sandbox.repo, 'README.md'), '# sample project\n\nhalf-written paragraph\n');
    // The agent writes its work, a config file holding the run's API key, and edits the user's file too.
    // A second story that touches neither: the user's file is not named again, its iteration changed nothing of it.
    scenario(sandbox, [{
      write: { 'app.txt': 'one\n', 'config.local.json': JSON.stringify({ apiKey: SECRET }), 'README.md': '# sample project\n\nhalf-written paragraph\nthe agent added this\n' },
      lines: [report('completed')],
    }, { write: { 'app.txt': 'one\ntwo\n' }, lines: [report('completed')] }]);
    // The dry run says it first.
    const plan = await runRalph(sandbox, ['--dry-run'], { ANTHROPIC_API_KEY: SECRET });
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toContain("note: uncommitted changes from before the run (2 paths: .env, README.md) stay yours: ralph's commits leave them out, whatever the agent does to them");
    // The prompt tells the agent too (the dry run shows the prompt the run sends).
    expect(plan.stdout).toContain("  | These paths held the user's own uncommitted changes before this run: .env, README.md. Leave them as they are");
    const result = await runRalph(sandbox, ['--json', ...FAST], { ANTHROPIC_API_KEY: SECRET });
    expect(result.code, result.stderr).toBe(0);
    // Said at the start, and after the iteration, naming the file and the variable, never the value.
    expect(result.stderr).toContain("warning: uncommitted changes from before the run (2 paths: .env, README.md) stay yours: ralph's commits leave them out, whatever the agent does to them");
    expect(result.stderr).toContain('not committed by ralph: README.md (changed before the run: left as you left it); config.local.json (holds the value of ANTHROPIC_API_KEY)');
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    expect(agentCalls(sandbox)[0]!.stdin).toMatch(/## Not yours to commit\n\nThese paths held the user's own uncommitted changes before this run: \.env, README\.md\. Leave them as they are: do not stage, commit, move or delete them\./);
    const summary = JSON.parse(result.stdout);
    expect(summary.records[0].leftOut).toEqual(['README.md (changed before the run: left as you left it)', 'config.local.json (holds the value of ANTHROPIC_API_KEY)']);
    expect(summary.records[1].leftOut).toEqual(['config.local.json (holds the value of ANTHROPIC_API_KEY)']);
    expect(result.stderr.split('\n').filter((line) => line.includes('not committed by ralph'))).toHaveLength(1);
    // The commits hold the work and the task state, nothing else.
    expect(committedSince(sandbox, base)).toEqual(['.rulebook-ralph/history/iteration-1.json', '.rulebook-ralph/history/iteration-2.json', 'app.txt', 'prd.json', 'progress.txt']);
    expect(git(sandbox, ['log', '-p', '--all'])).not.toContain(SECRET);
    // Nothing is lost: the user's files as they were (with the agent's addition), the secret file in place.
    expect(readFileSync(path.join(sandbox.repo, '.env'), 'utf8')).toBe('STRIPE_KEY=sk_test_user_own_value_123\n');
    expect(readFileSync(path.join(sandbox.repo, 'README.md'), 'utf8')).toContain('half-written paragraph\nthe agent added this');
    expect(JSON.parse(readFileSync(path.join(sandbox.repo, 'config.local.json'), 'utf8'))).toEqual({ apiKey: SECRET });
    expect(status(sandbox)).toEqual([' M README.md', '?? .env', '?? config.local.json']);
  });

  it('PRD: an environment file or a private key the agent creates is never committed, and said so once', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n';
    scenario(sandbox, [
      { write: { 'app.txt': 'one\n', '.env.local': 'DEBUG=1\n', 'deploy/access': key, '.env.example': 'DEBUG=\n' }, lines: [report('completed')] },
      { write: { 'app.txt': 'one\ntwo\n' }, lines: [report('completed')] },
    ]);
    const result = await runRalph(sandbox, ['--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(committedSince(sandbox, base)).toEqual(['.env.example', '.rulebook-ralph/history/iteration-1.json', '.rulebook-ralph/history/iteration-2.json', 'app.txt', 'prd.json', 'progress.txt']);
    const warned = result.stderr.split('\n').filter((line) => line.includes('not committed by ralph'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('.env.local (an environment file: never committed by ralph); deploy/access (a private key: never committed by ralph)');
    // The second commit left them out too, and its record says so.
    expect(JSON.parse(result.stdout).records[1].leftOut).toEqual(['.env.local (an environment file: never committed by ralph)', 'deploy/access (a private key: never committed by ralph)']);
    expect(status(sandbox)).toEqual(['?? .env.local', '?? deploy/access']);
  });

  it('Spec Kit, the agent committing its stories: ralph\'s record joins the agent\'s commit, the tree ends clean, and a later run raises no false alarm', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', '', '## Phase 2: Story', '', '- [ ] T002 Create src/b.ts', ''].join('\n'));
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    const commit = (message: string) => [['git', 'add', '-A'], ['git', 'commit', '-qm', message]];
    scenario(sandbox, [
      { write: { 'src/a.ts': 'a\n' }, edit: [tick('T001')], after: commit('feat(demo): T001'), lines: [answer('Did T001.')] },
      { write: { 'src/b.ts': 'b\n' }, edit: [tick('T002')], after: commit('feat(demo): T002'), lines: [answer('Did T002.\n\n<promise>COMPLETE</promise>')] },
    ]);
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(status(sandbox)).toEqual([]);
    expect(git(sandbox, ['log', '--format=%s', `${base}..HEAD`]).split('\n').filter(Boolean)).toEqual(['feat(demo): T002', 'feat(demo): T001']);
    // Each story's commit carries its progress entry.
    expect(git(sandbox, ['show', 'HEAD~1:' + `${FEATURE}/progress.txt`])).toContain('## Iteration 1');
    expect(git(sandbox, ['show', 'HEAD~1:' + `${FEATURE}/progress.txt`])).not.toContain('## Iteration 2');
    expect(git(sandbox, ['show', `HEAD:${FEATURE}/progress.txt`])).toContain('## Iteration 2');
    const again = await runRalph(sandbox, ['--dry-run']);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(again.stderr + again.stdout).not.toMatch(/uncommitted/);
  });

  it("the agent's own commit holding a secret: said at once, with the file and the variable (ralph never rewrites the agent's commits)", async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', ''].join('\n'));
    scenario(sandbox, [{ write: { 'src/a.ts': 'a\n', 'src/config.ts': `export const key = '${SECRET}';\n` }, edit: [tick('T001')], after: [['git', 'add', '-A'], ['git', 'commit', '-qm', 'feat: T001']], lines: [answer('Did T001.\n\n<promise>COMPLETE</promise>')] }]);
    const result = await runRalph(sandbox, ['--json', ...FAST], { ANTHROPIC_API_KEY: SECRET });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/warning: iteration 1: the agent's own commits add src\/config\.ts \(holds the value of ANTHROPIC_API_KEY\): ralph never rewrites them; remove it before you push \(git log -p [0-9a-f]{12}\.\.HEAD\)/);
    expect(JSON.parse(result.stdout).records[0].unsafeCommits).toEqual(['src/config.ts (holds the value of ANTHROPIC_API_KEY)']);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });

  it('Spec Kit with --no-commit: ralph commits nothing, not even into the agent\'s commits', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', ''].join('\n'));
    scenario(sandbox, [{ write: { 'src/a.ts': 'a\n' }, edit: [tick('T001')], after: [['git', 'add', 'src/a.ts', TASKS_PATH], ['git', 'commit', '-qm', 'feat: T001']], lines: [answer('Did T001.\n\n<promise>COMPLETE</promise>')] }]);
    const result = await runRalph(sandbox, ['--no-commit', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(git(sandbox, ['show', '--name-only', '--format=', 'HEAD']).split('\n').filter(Boolean).sort()).toEqual(['specs/001-demo/tasks.md', 'src/a.ts']);
    expect(status(sandbox)).toEqual([`?? ${FEATURE}/progress.txt`, `?? ${FEATURE}/ralph-tasks.json`]);
  });

  it('several workers: a secret file the agent wrote in a worktree is kept under .ralph/left-out, never committed, and the tree ends clean', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const base = git(sandbox, ['rev-parse', 'HEAD']).trim();
    const file = path.join(sandbox.root, 'scenario.json');
    writeFileSync(file, JSON.stringify({ byPrompt: [
      { match: 'US-001', steps: [{ write: { 'one.txt': '1\n', 'secrets.json': JSON.stringify({ key: SECRET }) }, lines: [report('completed')] }] },
      { match: 'US-002', steps: [{ write: { 'two.txt': '2\n' }, lines: [report('completed')] }] },
    ] }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', ...FAST], { ANTHROPIC_API_KEY: SECRET });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/not committed by ralph: secrets\.json \(holds the value of ANTHROPIC_API_KEY\), copied to \.ralph\/left-out\/[^/]+\/w\d-i\d/);
    expect(git(sandbox, ['log', '-p', '--all'])).not.toContain(SECRET);
    expect(committedSince(sandbox, base)).toEqual(['.rulebook-ralph/history/iteration-1.json', '.rulebook-ralph/history/iteration-2.json', 'one.txt', 'prd.json', 'progress.txt', 'two.txt']);
    expect(status(sandbox)).toEqual([]);
    const saved = /copied to (\.ralph\/left-out\/\S+?)(?:;|$)/m.exec(result.stderr)![1]!;
    expect(JSON.parse(readFileSync(path.join(sandbox.repo, saved, 'secrets.json'), 'utf8'))).toEqual({ key: SECRET });
    expect(existsSync(path.join(sandbox.repo, 'secrets.json'))).toBe(false);
  });

  it("several workers: a worker whose agent committed a secret itself is not merged; its work is kept on a branch", async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const file = path.join(sandbox.root, 'scenario.json');
    const commit = [['git', 'add', '-A'], ['git', 'commit', '-qm', 'work']];
    writeFileSync(file, JSON.stringify({ byPrompt: [
      { match: 'US-001', steps: [{ write: { 'one.txt': '1\n', 'keys.ts': `const k = '${SECRET}';\n` }, after: commit, lines: [report('completed')] }, { write: { 'one.txt': '1\n' }, after: commit, lines: [report('completed')] }] },
      { match: 'US-002', steps: [{ write: { 'two.txt': '2\n' }, lines: [report('completed')] }] },
    ] }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    const result = await runRalph(sandbox, ['--parallel', '2', '--json', ...FAST], { ANTHROPIC_API_KEY: SECRET });
    expect(result.code, result.stderr).toBe(0);
    const records = JSON.parse(result.stdout).records as Array<{ taskId: string; outcome: string; reason: string; kept?: string }>;
    const refused = records.find((record) => record.taskId === 'US-001' && record.outcome === 'fail')!;
    expect(refused.reason).toMatch(/^not merged: the agent's own commits add keys\.ts \(holds the value of ANTHROPIC_API_KEY\); the work is kept on branch ralph-kept\/\S+ and the task runs again$/);
    // The feature branch never held it; the second try, without it, landed.
    expect(git(sandbox, ['log', '-p', 'HEAD'])).not.toContain(SECRET);
    expect(records.filter((record) => record.taskId === 'US-001').map((record) => record.outcome)).toEqual(['fail', 'pass']);
  });
});
