// What the beads source knows of its epic between bd calls, and when it must ask bd again.
//
// A bd call is a process (about 200 ms for a real bd 0.50 on SQLite), so the source reads as little as
// it can while staying right when another process changes beads meanwhile:
// - after an agent run (`progress`): `bd list` only, which says what got closed;
// - before picking a task (`next`): `bd ready` always, fresh; the list read after the last agent run is
//   reused unless the ready answer contradicts it (an unknown id, another status, a task that was ready
//   and still open but is no longer ready), and never when nothing is ready: ending a run (complete or
//   stuck) is decided on a fresh list.
import type { BdIssue } from './bd.ts';

export function isClosed(issue: { status: string }): boolean {
  return issue.status === 'closed';
}

export interface EpicState {
  /** The epic's children as last listed (epics left out). */
  children: BdIssue[];
  /** The children list is as of the end of the last agent run (or check/recover): a `next` read may reuse it. */
  carried: boolean;
  /** The last fresh `bd ready` answer. */
  lastReady: BdIssue[];
  /** Ready ids a fresh list did not hold (descendants below a child): no reason to list again. */
  outsideList: Set<string>;
}

export function emptyState(): EpicState {
  return { children: [], carried: false, lastReady: [], outsideList: new Set() };
}

/** Whether a fresh `bd ready` answer agrees with the carried children list (else: list again). */
export function readyAgrees(state: EpicState, ready: readonly BdIssue[]): boolean {
  if (!state.carried || ready.length === 0) return false;
  const byId = new Map(state.children.map((issue) => [issue.id, issue]));
  for (const issue of ready) {
    const listed = byId.get(issue.id);
    if (!listed) {
      if (!state.outsideList.has(issue.id)) return false;
    } else if (listed.status !== issue.status) {
      return false;
    }
  }
  // A task stays ready until someone closes, claims or blocks it; ralph's agent did not run since the list.
  const now = new Set(ready.map((issue) => issue.id));
  return state.lastReady.every((issue) => now.has(issue.id) || byId.get(issue.id)?.status !== 'open');
}

/** After a fresh list: the ready ids it does not hold are descendants below a child, not news. */
export function noteOutsideList(state: EpicState, ready: readonly BdIssue[]): void {
  const listed = new Set(state.children.map((issue) => issue.id));
  state.outsideList = new Set(ready.filter((issue) => !listed.has(issue.id)).map((issue) => issue.id));
}

/** What each open issue waits for, from `bd show` (dependencies as whole issues with a dependency_type). */
export function openBlockers(shown: readonly BdIssue[]): Map<string, string[]> {
  const blockers = new Map<string, string[]>();
  for (const issue of shown) {
    const waits = (issue.dependencies ?? [])
      .filter((dep): dep is { id: string; status?: string; dependency_type?: string } => 'id' in dep && typeof dep.id === 'string')
      .filter((dep) => dep.dependency_type === 'blocks' && dep.status !== 'closed')
      .map((dep) => dep.id);
    blockers.set(issue.id, waits);
  }
  return blockers;
}
