// Gh, against gh's own answers (the shapes of `gh pr list --json` and `gh pr create`): a fork's pull request
// from a branch of the same name is never taken for ours, and a create GitHub refuses is said as gh said it.
import { describe, expect, it } from 'vitest';
import { realDeps, type Deps, type ExecResult } from '../../../lib/deps.ts';
import { Gh } from '../../../lib/pr/gh.ts';

function gh(answers: Record<string, ExecResult>): { gh: Gh; calls: string[][] } {
  const calls: string[][] = [];
  const deps: Deps = {
    ...realDeps(),
    exec: async (_bin, args) => {
      calls.push([...args]);
      const answer = answers[args.slice(0, 2).join(' ')];
      if (!answer) throw new Error(`unexpected gh ${args.join(' ')}`);
      return answer;
    },
  };
  return { gh: new Gh('gh', '/repo', deps), calls };
}

const listed = (prs: Array<Record<string, unknown>>): ExecResult => ({ exitCode: 0, stdout: `${JSON.stringify(prs)}\n`, stderr: '' });
const fork = { number: 7, url: 'https://github.com/someone/demo/pull/7', isDraft: false, body: 'not ours', isCrossRepository: true };
const ours = { number: 9, url: 'https://github.com/octo/demo/pull/9', isDraft: true, body: 'ours', isCrossRepository: false };

describe('Gh', () => {
  it('finds our open pull request from the branch, passing over a fork\'s of the same branch name', async () => {
    const { gh: client, calls } = gh({ 'pr list': listed([fork, ours]) });
    expect(await client.find('ralph/demo')).toEqual({ number: 9, url: ours.url, isDraft: true, body: 'ours' });
    expect(calls).toEqual([['pr', 'list', '--head', 'ralph/demo', '--state', 'open', '--json', 'number,url,isDraft,body,isCrossRepository']]);
  });

  it('finds none when the only open pull request from that branch name is a fork\'s', async () => {
    const { gh: client } = gh({ 'pr list': listed([fork]) });
    expect(await client.find('ralph/demo')).toBeUndefined();
  });

  it('reads the created pull request from the URL gh prints, and says gh\'s refusal in one line', async () => {
    const { gh: client } = gh({ 'pr create': { exitCode: 0, stdout: 'https://github.com/octo/demo/pull/12\n', stderr: '' } });
    expect(await client.create({ base: 'main', head: 'ralph/demo', title: 't', bodyFile: '/b' })).toEqual({ url: 'https://github.com/octo/demo/pull/12', number: 12 });
    const refused = gh({ 'pr create': { exitCode: 1, stdout: '', stderr: 'a pull request for branch "ralph/demo" into branch "main" already exists:\nhttps://github.com/octo/demo/pull/9\n' } });
    await expect(refused.gh.create({ base: 'main', head: 'ralph/demo', title: 't', bodyFile: '/b' })).rejects.toThrow('gh pr create failed: a pull request for branch "ralph/demo" into branch "main" already exists:');
  });
});
