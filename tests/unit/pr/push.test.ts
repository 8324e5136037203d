import { describe, expect, it } from 'vitest';
import { pushFailure } from '../../../lib/pr/push.ts';
import { pullRequestLines } from '../../../lib/pr/lines.ts';

describe('why a push failed, in a line', () => {
  it.each([
    [
      'the remote moved (git refuses before sending)',
      'To ../remote.git\n!\t3f85880433598e9ed01b8547bfa6afa12a57ff8a:refs/heads/feat\t[rejected] (fetch first)\nDone\nerror: failed to push some refs to \'../remote.git\'\nhint: Updates were rejected because the remote contains work that you do',
      'origin/feat has commits this branch lacks (fetch first): merge them (git pull --no-rebase origin feat); ralph never force-pushes',
    ],
    [
      'the server refuses a non-fast-forward',
      'To ../remote.git\n!\tabc:refs/heads/feat\t[remote rejected] (non-fast-forward)\nDone\nremote: error: denying non-fast-forward refs/heads/feat (you should pull first)',
      'origin/feat has commits this branch lacks (non-fast-forward): merge them (git pull --no-rebase origin feat); ralph never force-pushes',
    ],
    ['a hook declines', 'To x\n!\tabc:refs/heads/feat\t[remote rejected] (pre-receive hook declined)\nDone', 'origin refused it (remote rejected: pre-receive hook declined)'],
    ['offline', "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com", "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com"],
    ['a timeout', 'git: timed out after 600000 ms and was stopped', 'git: timed out after 600000 ms and was stopped'],
    ['nothing said', '', 'git push failed'],
  ])('%s', (_what, output, expected) => {
    expect(pushFailure({ exitCode: 1, stdout: output, stderr: '' }, 'origin', 'feat')).toBe(expected);
  });
});

describe('the closing lines of a run with --pr', () => {
  it.each([
    [{ target: 'origin/f', pushed: true, number: 1, url: 'https://github.com/o/r/pull/1', action: 'created' as const, draft: true }, ['pull request: https://github.com/o/r/pull/1 (draft, created)']],
    [{ target: 'origin/f', pushed: true, number: 1, url: 'https://github.com/o/r/pull/1', action: 'updated' as const, draft: false }, ['pull request: https://github.com/o/r/pull/1 (ready for review, updated)']],
    [{ target: 'origin/f', pushed: false, notPushed: '2 commits up to abc1234: offline', none: 'the branch could not be pushed' }, ['not pushed: 2 commits up to abc1234: offline', 'pull request: none (the branch could not be pushed)']],
  ])('%j', (pr, lines) => {
    expect(pullRequestLines(pr)).toEqual(lines);
  });
});
