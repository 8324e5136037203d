// --pr end to end: a bare repository in the sandbox is the remote (a local path is a real transport for
// git push), its pre-receive hook records every ref update and refuses a forced one; the gh double
// (tests/fakes/gh) records its calls and keeps its pull requests in a file, so a later run finds the one an
// earlier run opened.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, FEATURE, prdProject, report, specKitProject, tick } from './projects.ts';
import { agentCalls, closeStep, FAKES, FAST, makeSandbox, MIN_WAIT_MS, PROJECT, runRalph, scenario, seedBeads, signalRalph, standardEpic, startRalph, waitFor, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const BRANCH = '001-ralph-automation';
const ZERO = '0'.repeat(40);
const SECRET = 'sk-ant-api03-e2eTEST0123456789abcdefXYZ';

const git = (cwd: string, args: string[], env: NodeJS.ProcessEnv = sandbox.env): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...env, GIT_AUTHOR_NAME: 'Ralph Test', GIT_AUTHOR_EMAIL: 'ralph@example.test', GIT_COMMITTER_NAME: 'Ralph Test', GIT_COMMITTER_EMAIL: 'ralph@example.test' } }).trim();

interface Remote {
  bare: string;
  /** One line per ref update the remote received: `old new ref forced`. */
  updates(): Array<{ old: string; new: string; ref: string; forced: boolean }>;
  /** The remote's commit for a branch, or undefined. */
  head(branch: string): string | undefined;
}

/**
 * A bare repository as `origin`, holding the sandbox's first commit as `main` (its default branch). Its
 * pre-receive hook logs each update and refuses a forced one (the old commit not an ancestor of the new).
 */
function addRemote(box: Sandbox, options: { noRemote?: boolean } = {}): Remote {
  const bare = path.join(box.root, 'remote.git');
  const log = path.join(box.root, 'remote-updates.log');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  const hook = path.join(bare, 'hooks', 'pre-receive');
  writeFileSync(hook, [
    '#!/bin/sh',
    'while read old new ref; do',
    '  forced=no',
    `  if [ "$old" != ${ZERO} ] && [ "$new" != ${ZERO} ] && ! git merge-base --is-ancestor "$old" "$new"; then forced=yes; fi`,
    `  echo "$old $new $ref $forced" >> '${log}'`,
    '  if [ "$forced" = yes ]; then echo "refusing a forced update of $ref" >&2; exit 1; fi',
    'done',
    '',
  ].join('\n'));
  chmodSync(hook, 0o755);
  if (!options.noRemote) {
    git(box.repo, ['remote', 'add', 'origin', bare]);
    const first = git(box.repo, ['rev-list', '--max-parents=0', 'HEAD']);
    git(box.repo, ['push', '-q', 'origin', `${first}:refs/heads/main`]);
  }
  return {
    bare,
    updates: () => (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter(Boolean).map((line) => {
      const [old, next, ref, forced] = line.split(' ');
      return { old: old!, new: next!, ref: ref!, forced: forced === 'yes' };
    }).filter((update) => update.ref !== 'refs/heads/main'),
    head: (branch) => {
      try {
        return execFileSync('git', ['rev-parse', '-q', '--verify', `refs/heads/${branch}`], { cwd: bare, encoding: 'utf8' }).trim();
      } catch {
        return undefined;
      }
    },
  };
}

/** Puts the gh double on PATH, its call log and state in the sandbox. */
function addGh(box: Sandbox): void {
  symlinkSync(path.join(FAKES, 'gh'), path.join(box.bin, 'gh'));
  box.env.FAKE_GH_LOG = path.join(box.root, 'gh.log');
  box.env.FAKE_GH_STATE = path.join(box.root, 'gh-state.json');
}

interface GhCall {
  argv: string[];
  body?: string;
}
const ghCalls = (box: Sandbox): GhCall[] => (existsSync(box.env.FAKE_GH_LOG!) ? readFileSync(box.env.FAKE_GH_LOG!, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as GhCall) : []);
const ghCommands = (box: Sandbox): string[] => ghCalls(box).map((call) => call.argv.slice(0, 2).join(' '));
const ghState = (box: Sandbox): { prs: Array<{ number: number; body: string; isDraft: boolean; title: string; head: string; base: string }> } => JSON.parse(readFileSync(box.env.FAKE_GH_STATE!, 'utf8'));
const lastLines = (stderr: string, count: number): string[] => stderr.trimEnd().split('\n').slice(-count).map((line) => line.replace(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /, ''));

const prdSteps = (count: number) => Array.from({ length: count }, (_, index) => ({ append: { 'app.txt': `story ${index + 1}\n` }, lines: [report('completed')] }));

describe('--pr: a pull request at the end', () => {
  it('PRD: the dry run says what it would do; the run pushes after each story, opens one draft pull request with the summary, and marks it ready once every story is done', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const remote = addRemote(sandbox);
    addGh(sandbox);
    scenario(sandbox, prdSteps(2));

    const plan = await runRalph(sandbox, ['--dry-run', '--pr']);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`pr: push ${BRANCH} to origin as work lands (upstream origin/${BRANCH}, set on the first push; never forced), then open a draft pull request into main (the default branch of origin, from git ls-remote); marked ready for review once every task is done`);
    // The dry run pushed nothing and opened nothing: it asked gh who is logged in and which pull request is open.
    expect(remote.updates()).toEqual([]);
    expect(ghCommands(sandbox)).toEqual(['auth status', 'pr list']);

    const result = await runRalph(sandbox, ['--pr', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const local = git(sandbox.repo, ['rev-list', '--max-count=2', 'HEAD']).split('\n');
    // One push per story, each a fast-forward of the one before: the remote ends where the branch ends.
    expect(remote.updates()).toEqual([
      { old: ZERO, new: local[1], ref: `refs/heads/${BRANCH}`, forced: false },
      { old: local[1], new: local[0], ref: `refs/heads/${BRANCH}`, forced: false },
    ]);
    expect(remote.head(BRANCH)).toBe(local[0]);
    expect(git(sandbox.repo, ['rev-parse', '--abbrev-ref', `${BRANCH}@{upstream}`])).toBe(`origin/${BRANCH}`);
    expect(result.stderr).toContain(`pushed ${local[1]!.slice(0, 7)} to origin/${BRANCH}; origin/${BRANCH} is the branch's upstream from now on`);

    const calls = ghCalls(sandbox).slice(2);
    expect(calls.map((call) => call.argv.slice(0, 2).join(' '))).toEqual(['auth status', 'pr list', 'pr create', 'pr ready']);
    const create = calls[2]!;
    expect(create.argv.slice(0, 11)).toEqual(['pr', 'create', '--draft', '--base', 'main', '--head', BRANCH, '--title', 'Demo: demo', '--body-file', expect.stringMatching(/\.ralph\/pr\/[^/]+\.md$/)]);
    expect(create.body).toContain(`### ralph on \`${BRANCH}\`: complete`);
    expect(create.body).toContain('| **tasks** | 2 done in this run, 0 left |');
    expect(create.body).toMatch(/\| 1 \| US-001 First story \| pass \|/);
    expect(create.body).toMatch(/\| 2 \| US-002 Second story \| pass \|/);
    expect(calls[3]!.argv).toEqual(['pr', 'ready', '1']);

    const summary = JSON.parse(result.stdout);
    expect(summary.pr).toEqual({ target: `origin/${BRANCH}`, pushed: true, number: 1, url: 'https://github.com/octo/demo/pull/1', action: 'created', draft: false });
    expect(lastLines(result.stderr, 1)).toEqual(['pull request: https://github.com/octo/demo/pull/1 (ready for review, created)']);
    expect(readFileSync(path.join(sandbox.repo, '.ralph', 'reports', `${summary.sessionId}.md`), 'utf8')).toContain('| **pull request** | https://github.com/octo/demo/pull/1 (ready for review, created) |');
    expect(ghState(sandbox).prs).toHaveLength(1);
  });

  it('a later run updates the pull request an earlier one opened: its own summary rewritten, what someone wrote kept, no second one; ready once complete', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const remote = addRemote(sandbox);
    addGh(sandbox);
    scenario(sandbox, prdSteps(2));
    // The first run stops at its limit: a draft with one story done.
    const first = await runRalph(sandbox, ['--pr', '--json', '--max-iterations', '1', ...FAST]);
    expect(first.code, first.stderr).toBe(2);
    expect(JSON.parse(first.stdout).pr).toEqual({ target: `origin/${BRANCH}`, pushed: true, number: 1, url: 'https://github.com/octo/demo/pull/1', action: 'created', draft: true });
    expect(lastLines(first.stderr, 1)).toEqual(['pull request: https://github.com/octo/demo/pull/1 (draft, created)']);
    expect(ghCommands(sandbox)).not.toContain('pr ready');
    // Someone writes above ralph's summary.
    const state = ghState(sandbox);
    state.prs[0]!.body = `Reviewer notes: look at app.txt first.\n\n${state.prs[0]!.body}`;
    writeFileSync(sandbox.env.FAKE_GH_STATE!, JSON.stringify(state));
    const before = ghCalls(sandbox).length;

    const second = await runRalph(sandbox, ['--pr', '--json', ...FAST]);
    expect(second.code, second.stderr).toBe(0);
    const calls = ghCalls(sandbox).slice(before);
    expect(calls.map((call) => call.argv.slice(0, 2).join(' '))).toEqual(['auth status', 'pr list', 'pr edit', 'pr ready']);
    expect(calls[2]!.argv).toEqual(['pr', 'edit', '1', '--body-file', expect.stringMatching(/\.ralph\/pr\/[^/]+\.md$/)]);
    const [pr] = ghState(sandbox).prs;
    expect(ghState(sandbox).prs).toHaveLength(1);
    expect(pr!.body.startsWith('Reviewer notes: look at app.txt first.\n\n<!-- ralph:summary')).toBe(true);
    expect(pr!.body.match(/<!-- ralph:summary/g)).toHaveLength(1);
    expect(pr!.body).toContain('| 2 | US-002 Second story | pass |');
    expect(pr!.body).not.toContain('US-001 First story');
    expect(pr!.isDraft).toBe(false);
    expect(JSON.parse(second.stdout).pr).toEqual({ target: `origin/${BRANCH}`, pushed: true, number: 1, url: 'https://github.com/octo/demo/pull/1', action: 'updated', draft: false });
    expect(lastLines(second.stderr, 1)).toEqual(['pull request: https://github.com/octo/demo/pull/1 (ready for review, updated)']);
    expect(remote.head(BRANCH)).toBe(git(sandbox.repo, ['rev-parse', 'HEAD']));
    expect(remote.updates().every((update) => !update.forced)).toBe(true);
    // The dry run now names the pull request it would update.
    const plan = await runRalph(sandbox, ['--dry-run', '--pr']);
    expect(plan.stdout).toContain('then update pull request #1 (https://github.com/octo/demo/pull/1)');
    // A run with nothing to do leaves the summary of the run that did the work.
    const body = ghState(sandbox).prs[0]!.body;
    const idle = await runRalph(sandbox, ['--pr', '--json', ...FAST]);
    expect(idle.code, idle.stderr).toBe(0);
    expect(JSON.parse(idle.stdout).pr).toMatchObject({ number: 1, action: 'unchanged', draft: false });
    expect(ghState(sandbox).prs[0]!.body).toBe(body);
    expect(ghCommands(sandbox).filter((command) => command === 'pr edit' || command === 'pr create')).toEqual(['pr create', 'pr edit']);
  });

  it('interrupted: what landed before stays pushed; no more network, no pull request, said so', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const remote = addRemote(sandbox);
    addGh(sandbox);
    const started = path.join(sandbox.root, 'second-started');
    scenario(sandbox, [{ append: { 'app.txt': 'one\n' }, lines: [report('completed')] }, { touch: started, hang: true }]);
    const run = startRalph(sandbox, ['--pr', '--json', ...FAST]);
    try {
      await waitFor(() => existsSync(started) && run.output().stderr.includes(`to origin/${BRANCH}`), MIN_WAIT_MS, 'the second story and the first push');
    } catch (error) {
      // ralph stops its hanging agent: a failed wait leaves nothing running.
      signalRalph(sandbox, 'SIGINT');
      await run.done;
      throw error;
    }
    signalRalph(sandbox, 'SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    // The story that landed is pushed; after the interruption only ralph's closing commit of the task state
    // (the second story back to pending) is made, locally: no more network.
    expect(git(sandbox.repo, ['log', '-1', '--format=%s'])).toMatch(/^ralph: task state at the end of session /);
    expect(git(sandbox.repo, ['log', '-1', '--format=%s', 'HEAD~1'])).toBe('ralph: US-001 First story');
    expect(remote.head(BRANCH)).toBe(git(sandbox.repo, ['rev-parse', 'HEAD~1']));
    expect(JSON.parse(result.stdout).pr).toEqual({ target: `origin/${BRANCH}`, pushed: false, notPushed: `1 commit up to ${git(sandbox.repo, ['rev-parse', '--short=7', 'HEAD'])}: the run was interrupted before its last push`, none: 'the run was interrupted; the next run with --pr pushes what is left and opens or updates it' });
    expect(lastLines(result.stderr, 1)).toEqual(['pull request: none (the run was interrupted; the next run with --pr pushes what is left and opens or updates it)']);
    expect(ghCommands(sandbox)).toEqual(['auth status']);
  });

  it('stopped with ralph stop: the iteration under way ends and stays local; no push after the stop, no pull request', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const remote = addRemote(sandbox);
    addGh(sandbox);
    const started = path.join(sandbox.root, 'second-started');
    const release = path.join(sandbox.root, 'release-second');
    scenario(sandbox, [{ append: { 'app.txt': 'one\n' }, lines: [report('completed')] }, { append: { 'app.txt': 'two\n' }, touch: started, awaitFiles: [release], lines: [report('completed')] }]);
    const run = startRalph(sandbox, ['--pr', '--json', ...FAST]);
    await waitFor(() => existsSync(started) && run.output().stderr.includes(`to origin/${BRANCH}`), MIN_WAIT_MS, 'the second story and the first push');
    const pushedFirst = remote.head(BRANCH);
    execFileSync(process.execPath, [path.join(PROJECT, 'bin', 'ralph.mjs'), 'stop'], { cwd: sandbox.repo, env: sandbox.env, encoding: 'utf8' });
    writeFileSync(release, '');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    // The second story finished and landed here after the stop; nothing went to the remote after it.
    expect(git(sandbox.repo, ['log', '--format=%s']).split('\n')).toContain('ralph: US-002 Second story');
    expect(remote.head(BRANCH)).toBe(pushedFirst);
    expect(JSON.parse(result.stdout).pr).toMatchObject({ target: `origin/${BRANCH}`, pushed: false, none: 'the run was interrupted; the next run with --pr pushes what is left and opens or updates it' });
    expect(ghCommands(sandbox)).toEqual(['auth status']);
  });

  describe('refused before any agent, in the dry run and the run', () => {
    const refused = async (setup: (box: Sandbox) => void, extraArgs: string[], messages: string | string[], env: NodeJS.ProcessEnv = {}): Promise<void> => {
      sandbox = makeSandbox();
      prdProject(sandbox);
      setup(sandbox);
      scenario(sandbox, prdSteps(2));
      const plan = await runRalph(sandbox, ['--dry-run', '--pr', ...extraArgs], env);
      expect(plan.code, plan.stdout).toBe(1);
      for (const message of [messages].flat()) expect(plan.stdout).toContain(`✗ ${message}`);
      const run = await runRalph(sandbox, ['--pr', ...extraArgs, ...FAST], env);
      expect(run.code, run.stderr).toBe(1);
      for (const message of [messages].flat()) expect(run.stderr).toContain(`ralph: ✗ ${message}`);
      expect(agentCalls(sandbox)).toEqual([]);
      expect(existsSync(path.join(sandbox.repo, '.ralph.lock'))).toBe(false);
    };

    it('when gh is not logged in', async () => {
      await refused((box) => {
        addRemote(box);
        addGh(box);
      }, [], '--pr: gh is not logged in to GitHub (You are not logged into any GitHub hosts. To log in, run: gh auth login): run gh auth login, or set GH_TOKEN', { FAKE_GH_AUTH: 'logged-out' });
      expect(ghCommands(sandbox)).toEqual(['auth status', 'auth status']);
    });

    // Each problem is looked for whatever the others are (lib/pr/target.ts): one refused dry run and run name both.
    it('without gh on PATH, and without a remote to push to', async () => {
      await refused((box) => addRemote(box, { noRemote: true }), [], [
        "--pr opens the pull request with GitHub's CLI, but 'gh' is not on PATH: install it (https://cli.github.com: apt install gh, brew install gh or winget install GitHub.cli), then gh auth login",
        "--pr needs a remote to push to: the branch has no upstream and there is no 'origin' (git remote add origin URL, or git branch --set-upstream-to REMOTE/BRANCH)",
      ]);
    });

    it('on the default branch itself, and --pr-draft without --pr', async () => {
      await refused((box) => {
        addRemote(box);
        addGh(box);
        git(box.repo, ['push', '-q', 'origin', `HEAD:refs/heads/${BRANCH}`]);
        execFileSync('git', ['symbolic-ref', 'HEAD', `refs/heads/${BRANCH}`], { cwd: path.join(box.root, 'remote.git') });
      }, [], `--pr opens a pull request from the current branch into the default branch of origin, but the current branch is that branch (${BRANCH}): check out a feature branch (git switch -c NAME)`);
      const plan = await runRalph(sandbox, ['--dry-run', '--pr-draft']);
      expect(plan.stdout).toContain('✗ --pr-draft keeps the pull request of --pr a draft, but --pr is off: add --pr, or drop --pr-draft (or "prDraft" in ralph.config.json)');
    });
  });

  it('Spec Kit, the agent committing its stories, --pr-draft: its commits pushed, the pull request titled by the spec and kept a draft', async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', '', '## Phase 2: Story', '', '- [ ] T002 Create src/b.ts', ''].join('\n'));
    const remote = addRemote(sandbox);
    addGh(sandbox);
    const commit = (message: string) => [['git', 'add', '-A'], ['git', 'commit', '-qm', message]];
    scenario(sandbox, [
      { write: { 'src/a.ts': 'a\n' }, edit: [tick('T001')], after: commit('feat(demo): T001'), lines: [answer('Did T001.')] },
      { write: { 'src/b.ts': 'b\n' }, edit: [tick('T002')], after: commit('feat(demo): T002'), lines: [answer('Did T002.\n\n<promise>COMPLETE</promise>')] },
    ]);
    const result = await runRalph(sandbox, ['--pr', '--pr-draft', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    // Each story's commit (ralph's record amended into it before the push) went as it landed.
    expect(git(remote.bare, ['log', '--format=%s', BRANCH]).split('\n').slice(0, 2)).toEqual(['feat(demo): T002', 'feat(demo): T001']);
    expect(remote.updates().map((update) => update.forced)).toEqual([false, false]);
    expect(remote.head(BRANCH)).toBe(git(sandbox.repo, ['rev-parse', 'HEAD']));
    expect(git(sandbox.repo, ['status', '--porcelain'])).toBe('');
    const create = ghCalls(sandbox).find((call) => call.argv[1] === 'create')!;
    expect(create.argv.slice(7, 9)).toEqual(['--title', 'Spec: demo']);
    expect(ghCommands(sandbox)).not.toContain('pr ready');
    expect(JSON.parse(result.stdout).pr).toMatchObject({ pushed: true, action: 'created', draft: true });
    expect(lastLines(result.stderr, 1)).toEqual(['pull request: https://github.com/octo/demo/pull/1 (draft, created)']);
    expect(existsSync(path.join(sandbox.repo, FEATURE, 'tasks.md'))).toBe(true);
  });

  it('beads, the agent closing its bead and committing: pushed as each bead lands, the pull request titled by the epic', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(2));
    const remote = addRemote(sandbox);
    addGh(sandbox);
    const commit = (file: string) => ({ write: { [file]: `${file}\n` }, after: [['git', 'add', file], ['git', 'commit', '-qm', `feat: ${file}`]] });
    scenario(sandbox, [closeStep('ws-9w6.2', commit('one.txt')), closeStep('ws-9w6.3', commit('two.txt'))]);
    const result = await runRalph(sandbox, ['--pr', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    const local = git(sandbox.repo, ['rev-list', '--max-count=2', 'HEAD']).split('\n');
    expect(remote.updates().map((update) => [update.old, update.new, update.forced])).toEqual([[ZERO, local[1], false], [local[1], local[0], false]]);
    const create = ghCalls(sandbox).find((call) => call.argv[1] === 'create')!;
    expect(create.argv.slice(7, 9)).toEqual(['--title', 'Feature: ralph-automation']);
    expect(create.body).toContain('| 1 | ws-9w6.2 Task 1: build part 1 | pass |');
    expect(JSON.parse(result.stdout).pr).toEqual({ target: `origin/${BRANCH}`, pushed: true, number: 1, url: 'https://github.com/octo/demo/pull/1', action: 'created', draft: false });
  });

  it('another host opened the pull request between this run\'s look and its create: GitHub refuses a second one, and this run updates that one', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const remote = addRemote(sandbox);
    addGh(sandbox);
    // Several hosts ending at once: just before this run's `gh pr create`, another host's create goes through.
    const gh = path.join(FAKES, 'gh');
    unlinkSync(path.join(sandbox.bin, 'gh')); // the double's link, replaced by this wrapper (never written through)
    writeFileSync(path.join(sandbox.bin, 'gh'), [
      '#!/bin/sh',
      'if [ "$1 $2" = "pr create" ]; then',
      `  printf 'Opened by host2.\\n' > '${sandbox.root}/host2-body.md'`,
      `  FAKE_GH_LOG=/dev/null '${gh}' pr create --draft --base main --head ${BRANCH} --title 'Demo: demo' --body-file '${sandbox.root}/host2-body.md' > /dev/null || exit 9`,
      'fi',
      `exec '${gh}' "$@"`,
      '',
    ].join('\n'), { mode: 0o755 });
    scenario(sandbox, prdSteps(2));
    const result = await runRalph(sandbox, ['--pr', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(ghCommands(sandbox).slice(-5)).toEqual(['pr list', 'pr create', 'pr list', 'pr edit', 'pr ready']);
    expect(result.stderr).toContain('pull request #1, which another host opened meanwhile, updated with this run\'s summary: https://github.com/octo/demo/pull/1');
    expect(JSON.parse(result.stdout).pr).toEqual({ target: `origin/${BRANCH}`, pushed: true, number: 1, url: 'https://github.com/octo/demo/pull/1', action: 'updated', draft: false });
    const prs = ghState(sandbox).prs;
    expect(prs).toHaveLength(1);
    expect(prs[0]!.body.startsWith('Opened by host2.\n')).toBe(true);
    expect(prs[0]!.body).toContain('| 2 | US-002 Second story | pass |');
    expect(prs[0]!.isDraft).toBe(false);
    expect(remote.head(BRANCH)).toBe(git(sandbox.repo, ['rev-parse', 'HEAD']));
  });

  it('--parallel 2: the merged branch pushed, never the workers\' branches; one pull request', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const remote = addRemote(sandbox);
    addGh(sandbox);
    const file = path.join(sandbox.root, 'scenario.json');
    writeFileSync(file, JSON.stringify({ byPrompt: [
      { match: 'US-001', steps: [{ write: { 'one.txt': '1\n' }, lines: [report('completed')] }] },
      { match: 'US-002', steps: [{ write: { 'two.txt': '2\n' }, lines: [report('completed')] }] },
    ] }));
    sandbox.env.FAKE_AGENT_SCENARIO = file;
    const result = await runRalph(sandbox, ['--pr', '--parallel', '2', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(remote.head(BRANCH)).toBe(git(sandbox.repo, ['rev-parse', 'HEAD']));
    expect(remote.updates().length).toBeGreaterThanOrEqual(1);
    expect(remote.updates().every((update) => !update.forced && update.ref === `refs/heads/${BRANCH}`)).toBe(true);
    expect(git(remote.bare, ['for-each-ref', '--format=%(refname)']).split('\n').sort()).toEqual(['refs/heads/001-ralph-automation', 'refs/heads/main']);
    expect(ghCommands(sandbox).filter((command) => command === 'pr create')).toHaveLength(1);
    expect(JSON.parse(result.stdout).pr).toMatchObject({ pushed: true, number: 1, action: 'created', draft: false });
  });

  it('a remote that moved refuses the push: a warning, the run not failed, never forced; the end says what is not pushed and leaves the pull request alone', async () => {
    sandbox = makeSandbox();
    prdProject(sandbox);
    const remote = addRemote(sandbox);
    addGh(sandbox);
    // The branch is on the remote, and someone else adds a commit to it there.
    git(sandbox.repo, ['push', '-q', '-u', 'origin', BRANCH]);
    const other = path.join(sandbox.root, 'other');
    git(sandbox.root, ['clone', '-q', '-b', BRANCH, remote.bare, other]);
    writeFileSync(path.join(other, 'theirs.txt'), 'theirs\n');
    git(other, ['add', 'theirs.txt']);
    git(other, ['commit', '-qm', 'their commit']);
    git(other, ['push', '-q', 'origin', BRANCH]);
    const theirs = git(other, ['rev-parse', 'HEAD']);
    scenario(sandbox, prdSteps(2));

    const result = await runRalph(sandbox, ['--pr', '--json', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    // Never forced: the remote's hook saw no update that drops its commit.
    expect(remote.updates().filter((update) => update.forced)).toEqual([]);
    const head = git(sandbox.repo, ['rev-parse', 'HEAD']);
    const why = `origin/${BRANCH} has commits this branch lacks (fetch first): merge them (git pull --no-rebase origin ${BRANCH}); ralph never force-pushes`;
    // Said once, not once per iteration.
    expect(result.stderr.split('\n').filter((line) => line.includes('--pr: could not push'))).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`warning: --pr: could not push [0-9a-f]{7} to origin/${BRANCH}: ${why.replace(/[()]/g, '\\$&')}; tried again when the next iteration lands and at the end`));
    expect(remote.head(BRANCH)).toBe(theirs);
    expect(lastLines(result.stderr, 2)).toEqual([`not pushed: 2 commits up to ${head.slice(0, 7)}: ${why}`, 'pull request: none (the branch could not be pushed, so the pull request is left as it is)']);
    expect(JSON.parse(result.stdout).pr).toEqual({ target: `origin/${BRANCH}`, pushed: false, notPushed: `2 commits up to ${head.slice(0, 7)}: ${why}`, none: 'the branch could not be pushed, so the pull request is left as it is' });
    expect(ghCommands(sandbox).filter((command) => command.startsWith('pr '))).toEqual([]);
  });

  it("the agent's own commit holding a secret: nothing more is pushed, no pull request, said; a later run does not push it either", async () => {
    sandbox = makeSandbox();
    specKitProject(sandbox, ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', '- [ ] T002 Create src/config.ts', ''].join('\n'));
    const remote = addRemote(sandbox);
    addGh(sandbox);
    const commit = (message: string) => [['git', 'add', '-A'], ['git', 'commit', '-qm', message]];
    scenario(sandbox, [
      { write: { 'src/a.ts': 'a\n' }, edit: [tick('T001')], after: commit('feat: T001'), lines: [answer('Did T001.')] },
      { write: { 'src/config.ts': `export const key = '${SECRET}';\n` }, edit: [tick('T002')], after: commit('feat: T002'), lines: [answer('Did T002.\n\n<promise>COMPLETE</promise>')] },
    ]);
    const env = { ANTHROPIC_API_KEY: SECRET };
    const result = await runRalph(sandbox, ['--pr', '--json', ...FAST], env);
    expect(result.code, result.stderr).toBe(0);
    const clean = git(sandbox.repo, ['rev-parse', 'HEAD~1']);
    expect(git(sandbox.repo, ['log', '-1', '--format=%s', clean])).toBe('feat: T001');
    // T001 went out as it landed; T002's commit, holding the key, never did.
    expect(remote.head(BRANCH)).toBe(clean);
    expect(result.stderr).toMatch(/warning: --pr: nothing more is pushed in this run and no pull request is opened: the commits to push \([0-9a-f]{7} and those before it that origin lacks\) add src\/config\.ts \(holds the value of ANTHROPIC_API_KEY\); take it out of the branch's history \(git log -p HEAD --not --remotes=origin\), then run again/);
    expect(ghCommands(sandbox).filter((command) => command.startsWith('pr '))).toEqual([]);
    const summary = JSON.parse(result.stdout);
    expect(summary.pr).toMatchObject({ pushed: false, none: 'the branch holds what ralph never pushes (said above)' });
    expect(summary.pr.notPushed).toMatch(/^1 commit up to [0-9a-f]{7}: the commits to push/);
    expect(lastLines(result.stderr, 1)).toEqual(['pull request: none (the branch holds what ralph never pushes (said above))']);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    expect(git(remote.bare, ['log', '-p', '--all'])).not.toContain(SECRET);

    // Nothing left to do, the commit still on the branch: a later run refuses to push it as well.
    const again = await runRalph(sandbox, ['--pr', ...FAST], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('warning: --pr: nothing more is pushed in this run and no pull request is opened');
    expect(remote.head(BRANCH)).toBe(clean);
    expect(ghCommands(sandbox).filter((command) => command.startsWith('pr '))).toEqual([]);
  });

  describe('Spec Kit, an agent that ticks its tasks but commits nothing', () => {
    const tasks = ['# Tasks: demo', '', '## Phase 1: Setup', '', '- [ ] T001 Create src/a.ts', '', '## Phase 2: Story', '', '- [ ] T002 Create src/b.ts', ''].join('\n');
    const steps = [
      { write: { 'src/a.ts': 'a\n' }, edit: [tick('T001')], lines: [answer('Did T001.')] },
      { write: { 'src/b.ts': 'b\n' }, edit: [tick('T002')], lines: [answer('Did T002.\n\n<promise>COMPLETE</promise>')] },
    ];

    it('ralph commits what the agent left, so the pushed branch holds every tick: complete, ready for review', async () => {
      sandbox = makeSandbox();
      specKitProject(sandbox, tasks);
      const remote = addRemote(sandbox);
      addGh(sandbox);
      scenario(sandbox, steps);
      const result = await runRalph(sandbox, ['--pr', '--json', ...FAST]);
      expect(result.code, result.stderr).toBe(0);
      expect(git(sandbox.repo, ['status', '--porcelain'])).toBe('');
      expect(remote.head(BRANCH)).toBe(git(sandbox.repo, ['rev-parse', 'HEAD']));
      // The remote's tasks.md has both ticks, and the work.
      expect(git(remote.bare, ['show', `${BRANCH}:${FEATURE}/tasks.md`])).toContain('- [X] T001 Create src/a.ts');
      expect(git(remote.bare, ['show', `${BRANCH}:${FEATURE}/tasks.md`])).toContain('- [X] T002 Create src/b.ts');
      expect(git(remote.bare, ['show', `${BRANCH}:src/b.ts`])).toBe('b');
      const create = ghCalls(sandbox).find((call) => call.argv[1] === 'create')!;
      expect(create.body).toContain(`### ralph on \`${BRANCH}\`: complete`);
      expect(ghCommands(sandbox)).toContain('pr ready');
      expect(JSON.parse(result.stdout).pr).toEqual({ target: `origin/${BRANCH}`, pushed: true, number: 1, url: 'https://github.com/octo/demo/pull/1', action: 'created', draft: false });
      expect(lastLines(result.stderr, 1)).toEqual(['pull request: https://github.com/octo/demo/pull/1 (ready for review, created)']);
    });

    it('--no-commit: the pushed branch holds none of it, so the pull request is not complete nor ready, and the last lines say what the remote lacks', async () => {
      sandbox = makeSandbox();
      specKitProject(sandbox, tasks);
      const remote = addRemote(sandbox);
      addGh(sandbox);
      scenario(sandbox, steps);
      const result = await runRalph(sandbox, ['--pr', '--no-commit', '--json', ...FAST]);
      expect(result.code, result.stderr).toBe(0);
      // The remote's tasks.md is still unticked: the work is only here.
      expect(git(remote.bare, ['show', `${BRANCH}:${FEATURE}/tasks.md`])).toContain('- [ ] T001 Create src/a.ts');
      const missing = [`${FEATURE}/progress.txt`, `${FEATURE}/ralph-tasks.json`, `${FEATURE}/tasks.md`, 'src/a.ts', 'src/b.ts'];
      const create = ghCalls(sandbox).find((call) => call.argv[1] === 'create')!;
      expect(create.body).not.toContain(': complete');
      expect(create.body).toContain(`### ralph on \`${BRANCH}\`: done in the working tree, not on origin/${BRANCH}`);
      expect(create.body).toMatch(new RegExp(`\\| \\*\\*status\\*\\* \\| completed: .* \\(exit 0\\); in the working tree only, not on origin/${BRANCH} \\|`));
      expect(create.body).toContain(`| **not on the remote** | 5 paths left uncommitted by the run, so this branch lacks them: ${missing.join(', ')} |`);
      expect(ghCommands(sandbox)).not.toContain('pr ready');
      const summary = JSON.parse(result.stdout);
      expect(summary.uncommitted).toEqual(missing);
      expect(summary.pr).toMatchObject({ pushed: true, action: 'created', draft: true, notOnRemote: missing });
      expect(result.stderr).toContain(`pull request #1 stays a draft: every task is done here, but origin/${BRANCH} lacks what stays uncommitted`);
      expect(lastLines(result.stderr, 2)).toEqual([
        `not on the remote: 5 paths uncommitted here: ${missing.join(', ')}; commit and push them`,
        'pull request: https://github.com/octo/demo/pull/1 (draft, created)',
      ]);
    });
  });
});
