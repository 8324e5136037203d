// What beads recovery puts back, and how --dry-run says it (lib/sources/beads/claims.ts): pure.
import { describe, expect, it } from 'vitest';
import type { BdIssue } from '../../../../lib/sources/beads/bd.ts';
import { describePutBack, isOrphan, snapshotOnceBack } from '../../../../lib/sources/beads/claims.ts';

const bead = (id: string, status: string, assignee?: string, extra: Partial<BdIssue> = {}): BdIssue => ({ id, title: `Task ${id}`, status, priority: 2, ...(assignee ? { assignee } : {}), ...extra });

describe('isOrphan: what a start puts back', () => {
  it.each([
    ['an agent\'s claim, one machine', bead('a', 'in_progress', 'alice'), undefined, false, true],
    ['an unassigned in_progress bead', bead('a', 'in_progress'), undefined, false, true],
    ['a worker\'s claim, one machine', bead('a', 'in_progress', 'ralph-w2'), undefined, false, true],
    ['an open bead', bead('a', 'open', 'ralph-w2'), undefined, false, false],
    ['a closed bead', bead('a', 'closed', 'ralph-w1'), undefined, false, false],
    ['a --remote host\'s claim on a shared server: that host\'s', bead('a', 'in_progress', 'ralph-hostB-w1'), undefined, true, false],
    ['a person\'s claim on a shared server: put back (the lock holds this clone)', bead('a', 'in_progress', 'alice'), undefined, true, true],
    ['--remote: this host\'s claim', bead('a', 'in_progress', 'ralph-hostA-w1'), 'hostA', true, true],
    ['--remote: another host\'s claim', bead('a', 'in_progress', 'ralph-hostB-w1'), 'hostA', true, false],
    ['--remote: an agent\'s claim without a host', bead('a', 'in_progress', 'alice'), 'hostA', true, false],
  ])('%s', (_name, issue, host, shared, expected) => expect(isOrphan(issue, host, shared)).toBe(expected));
});

describe('describePutBack', () => {
  it('a worker\'s claim is given back; anything else put back, naming who held it', () => {
    expect(describePutBack(bead('ws-1', 'in_progress', 'ralph-w2'))).toBe('give back ws-1 "Task ws-1", claimed by ralph-w2 for a run of this clone that is gone: open again, unassigned');
    expect(describePutBack(bead('ws-1', 'in_progress', 'agent'))).toBe('put ws-1 "Task ws-1" back to open: an interrupted run left it in_progress (assignee agent)');
    expect(describePutBack(bead('ws-1', 'in_progress'))).toBe('put ws-1 "Task ws-1" back to open: an interrupted run left it in_progress');
  });
});

describe('snapshotOnceBack: the beads as the run will see them once recovered', () => {
  const task = (id: string, status = 'open') => ({ id, title: `Task ${id}`, status, priority: 2 });
  it('each bead put back is remaining, ready unless an open blocker holds it, in bd ready\'s order', () => {
    const children = [bead('a', 'in_progress', 'ralph-w1', { created_at: '2026-01-01' }), bead('b', 'closed', 'ralph-w2', { created_at: '2026-01-02' }), bead('c', 'open', undefined, { created_at: '2026-01-03' }), bead('d', 'in_progress', 'agent', { created_at: '2026-01-04' }), bead('e', 'open', undefined, { priority: 1, created_at: '2026-01-05' })];
    const snapshot = { ready: [{ ...task('e'), priority: 1 }, task('c')], remaining: [task('a', 'in_progress'), task('c'), task('d', 'in_progress'), task('e')], done: [task('b', 'closed')] };
    const shown: BdIssue[] = [
      { ...children[0]!, dependencies: [{ id: 'z', title: 'z', status: 'closed', dependency_type: 'blocks' }] },
      { ...children[1]!, dependencies: [] },
      { ...children[3]!, dependencies: [{ id: 'c', title: 'c', status: 'open', dependency_type: 'blocks' }] },
    ];
    const after = snapshotOnceBack(snapshot, [children[0]!, children[1]!, children[3]!], shown, children);
    expect(after.ready.map((item) => item.id)).toEqual(['e', 'a', 'b', 'c']);
    expect(after.remaining.map((item) => item.id).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(after.remaining.find((item) => item.id === 'd')?.status).toBe('open');
    expect(after.done).toEqual([]);
  });
});
