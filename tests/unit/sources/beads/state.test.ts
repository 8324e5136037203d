import { describe, expect, it } from 'vitest';
import { emptyState, noteOutsideList, openBlockers, readyAgrees, type EpicState } from '../../../../lib/sources/beads/state.ts';
import type { BdIssue } from '../../../../lib/sources/beads/bd.ts';

const issue = (id: string, status = 'open'): BdIssue => ({ id, title: id, status, priority: 2 });

function state(children: BdIssue[], lastReady: BdIssue[] = [], carried = true): EpicState {
  return { ...emptyState(), children, lastReady, carried };
}

describe('readyAgrees: may a fresh bd ready reuse the carried children list?', () => {
  const children = [issue('a', 'closed'), issue('b'), issue('c'), issue('d', 'in_progress')];
  it.each([
    ['yes: every ready task is listed with the same status', state(children, [issue('a')]), [issue('b'), issue('c')], true],
    ['no: the list was not read since the last agent run', state(children, [], false), [issue('b')], false],
    ['no: nothing is ready (ending the run needs a fresh list)', state(children), [], false],
    ['no: a ready id the list does not hold (created meanwhile)', state(children), [issue('e')], false],
    ['no: a ready task the list shows with another status', state(children), [issue('d')], false],
    ['no: a task ready before and still open is ready no more (claimed or blocked meanwhile)', state(children, [issue('b'), issue('c')]), [issue('c')], false],
    ['yes: a task ready before and closed since has left ready', state(children, [issue('a'), issue('b')]), [issue('b')], true],
  ])('%s', (_name, current, ready, expected) => {
    expect(readyAgrees(current, ready)).toBe(expected);
  });

  it('remembers ready descendants below the children, so they do not force a list each time', () => {
    const current = state([issue('b')]);
    expect(readyAgrees(current, [issue('b'), issue('b.1')])).toBe(false);
    noteOutsideList(current, [issue('b'), issue('b.1')]);
    expect(readyAgrees(current, [issue('b'), issue('b.1')])).toBe(true);
  });
});

describe('openBlockers', () => {
  it('reads blocks dependencies from bd show (whole issues with dependency_type), open ones only', () => {
    const shown: BdIssue[] = [
      {
        ...issue('c'),
        dependencies: [
          { id: 'ep', status: 'open', dependency_type: 'parent-child' },
          { id: 'a', status: 'closed', dependency_type: 'blocks' },
          { id: 'b', status: 'in_progress', dependency_type: 'blocks' },
        ],
      },
      issue('d'),
    ];
    expect(openBlockers(shown)).toEqual(new Map([['c', ['b']], ['d', []]]));
  });
});
