// The bd CLI wrapper against the fake bd in both recorded behaviours (beads 0.50 and 1.x).
import { describe, expect, it } from 'vitest';
import { Bd, bdErrorText } from '../../../../lib/sources/beads/bd.ts';
import type { Deps } from '../../../../lib/deps.ts';
import { FAKE_BD_VERSIONS } from '../../../fakes/bd-seed.ts';
import { beadsProject } from './bd-helpers.ts';

describe.each(FAKE_BD_VERSIONS)('Bd against bd %s', (version) => {
  it('asks for --exclude-type once; a bd that refuses it is asked without it for the rest of the run, epics filtered by type', async () => {
    const project = beadsProject(version, [{ id: 'ws-ep.5', title: 'Sub-epic', issue_type: 'epic', parent: 'ws-ep' }]);
    const bd = new Bd(project.ctx.deps, project.root);
    expect((await bd.ready('ws-ep')).map((issue) => issue.id)).toEqual(['ws-ep.2']);
    expect((await bd.ready('ws-ep')).map((issue) => issue.id)).toEqual(['ws-ep.2']);
    const readies = project.calls.filter((argv) => argv[0] === 'ready');
    if (version === '0.50') {
      expect(readies).toEqual([
        ['ready', '--parent', 'ws-ep', '--limit', '0', '--exclude-type', 'epic'],
        ['ready', '--parent', 'ws-ep', '--limit', '0'],
        ['ready', '--parent', 'ws-ep', '--limit', '0'],
      ]);
    } else {
      expect(readies.every((argv) => argv.includes('--exclude-type'))).toBe(true);
      expect(readies).toHaveLength(2);
    }
  });

  it('show: the issue, or undefined when bd does not know it (bd says "no issues found …")', async () => {
    const project = beadsProject(version);
    const bd = new Bd(project.ctx.deps, project.root);
    expect((await bd.show('ws-ep'))?.title).toBe('Feature: demo');
    expect(await bd.show('ws-nope')).toBeUndefined();
    const shown = await bd.showMany(['ws-ep.3']);
    expect(shown[0]?.dependencies).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'ws-ep.2', dependency_type: 'blocks', status: 'open' })]));
  });

  it('setStatus on an id bd does not know fails naming the id, whatever the exit code', async () => {
    const project = beadsProject(version);
    const bd = new Bd(project.ctx.deps, project.root);
    await expect(bd.setStatus('ws-nope', 'open')).rejects.toThrow(
      'cannot set ws-nope to open: beads has no issue ws-nope (bd update ws-nope --status open: Error resolving ws-nope: no issue found matching "ws-nope")',
    );
  });

  it('setStatus with a status bd refuses fails with bd\'s reason, not "invalid JSON"', async () => {
    const project = beadsProject(version);
    const bd = new Bd(project.ctx.deps, project.root);
    const expected = version === '0.50' ? /^cannot set ws-ep\.2 to bogus: bd update ws-ep\.2 --status bogus changed nothing: Error updating ws-ep\.2: validate field update: invalid status: bogus$/ : /^cannot set ws-ep\.2 to bogus: bd update ws-ep\.2 --status bogus failed: invalid status "bogus"/;
    await expect(bd.setStatus('ws-ep.2', 'bogus')).rejects.toThrow(expected);
    await bd.setStatus('ws-ep.2', 'in_progress');
    expect((await bd.show('ws-ep.2'))?.status).toBe('in_progress');
  });
});

describe('Bd with a scripted bd', () => {
  const scripted = (answer: { exitCode: number; stdout: string; stderr: string }): Deps =>
    ({ cwd: '/', env: {}, exec: async () => answer }) as unknown as Deps;

  it('ignores warnings bd prints on stderr beside a success', async () => {
    const bd = new Bd(scripted({ exitCode: 0, stdout: '[{"id":"x-1","title":"T","status":"open"}]', stderr: "Note: bd v0.50+ defaults to Dolt. Run 'bd migrate --to-dolt' to upgrade your database.\n" }), '/');
    expect(await bd.children('x')).toEqual([{ id: 'x-1', title: 'T', status: 'open', priority: 2 }]);
  });

  it('reports another ready failure as it is, with bd\'s words', async () => {
    const bd = new Bd(scripted({ exitCode: 1, stdout: '', stderr: 'Error: database is locked\n' }), '/');
    await expect(bd.ready('x')).rejects.toThrow('bd ready --parent x --limit 0 --exclude-type epic failed: Error: database is locked');
  });

  it('bdErrorText reads a JSON error, an enveloped one, or the first stderr line', () => {
    expect(bdErrorText('{"error": "no issues found matching the provided IDs"}', 'Error fetching x')).toBe('no issues found matching the provided IDs');
    expect(bdErrorText('{"schema_version": 1, "data": {"error": "boom"}}', '')).toBe('boom');
    expect(bdErrorText('', 'first\nsecond')).toBe('first');
  });
});
