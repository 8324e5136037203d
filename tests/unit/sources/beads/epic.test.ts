// Which epic a beads run works on (lib/sources/beads/epic.ts): each way to find it or not, said as the check says it.
import { describe, expect, it } from 'vitest';
import type { Bd, BdIssue } from '../../../../lib/sources/beads/bd.ts';
import { clarifyProblem, findEpic } from '../../../../lib/sources/beads/epic.ts';

const issue = (id: string, title: string, status = 'open'): BdIssue => ({ id, title, status, priority: 2 });
const EPICS = [issue('ws-a', 'Feature: demo'), issue('ws-b', 'Feature: twice'), issue('ws-c', ' feature: TWICE ')];
const bd = { show: async (id: string) => EPICS.find((epic) => epic.id === id), epics: async () => EPICS } as unknown as Bd;

describe('findEpic', () => {
  it.each([
    ['--epic names it', { epic: 'ws-b', branch: '001-demo' }, { epic: EPICS[1] }],
    ['--epic names none', { epic: 'ws-nope' }, { problem: 'epic ws-nope (from --epic) does not exist in beads' }],
    ['a detached HEAD', {}, { problem: 'cannot name the epic: HEAD is detached; check out the feature branch or pass --epic ID' }],
    ['the branch names one (any case, trimmed)', { branch: '001-demo' }, { epic: EPICS[0] }],
    ['the branch names none', { branch: '007-other' }, { problem: 'no epic titled "Feature: other" (from branch 007-other): create it or pass --epic ID' }],
    ['the branch names several', { branch: '002-twice' }, { problem: 'several epics are titled "Feature: twice": ws-b, ws-c; pass --epic ID' }],
  ] as Array<[string, { epic?: string; branch?: string }, object]>)('%s', async (_name, wanted, expected) => {
    expect(await findEpic(bd, wanted)).toEqual(expected);
  });
});

describe('clarifyProblem', () => {
  const epic = EPICS[0]!;
  it.each([
    ['none', [issue('ws-a.2', 'Task')], 'epic ws-a has no clarify phase (a child titled "[sp:NN-clarify] …"): run the clarify phase first'],
    ['not closed', [issue('ws-a.1', '[sp:02-clarify] Clarify', 'in_progress')], 'clarify phase ws-a.1 "[sp:02-clarify] Clarify" is in_progress, not closed: finish /sp:clarify before starting ralph'],
    ['closed', [issue('ws-a.1', '[SP:02-Clarify] Clarify', 'closed')], undefined],
  ] as Array<[string, BdIssue[], string | undefined]>)('%s', (_name, children, expected) => {
    expect(clarifyProblem(epic, children)).toBe(expected);
  });
});
