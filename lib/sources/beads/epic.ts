// Which epic a beads run works on, and whether it may start: --epic, else the one epic titled after the
// branch; its clarify phase (a child titled "[sp:NN-clarify] …") must be closed first.
import type { Bd, BdIssue } from './bd.ts';
import { isClosed } from './state.ts';
import { epicTitleForBranch } from './text.ts';

const CLARIFY = /\[sp:\d+-clarify\]/i;

/** The epic named by `--epic`, else by the branch; otherwise the problem, said as the check says it. */
export async function findEpic(bd: Bd, wanted: { epic?: string; branch?: string }): Promise<{ epic?: BdIssue; problem?: string }> {
  if (wanted.epic) {
    const epic = await bd.show(wanted.epic);
    return epic ? { epic } : { problem: `epic ${wanted.epic} (from --epic) does not exist in beads` };
  }
  if (!wanted.branch) return { problem: 'cannot name the epic: HEAD is detached; check out the feature branch or pass --epic ID' };
  const title = epicTitleForBranch(wanted.branch);
  const matches = (await bd.epics()).filter((candidate) => candidate.title.trim().toLowerCase() === title.toLowerCase());
  if (matches.length === 0) return { problem: `no epic titled "${title}" (from branch ${wanted.branch}): create it or pass --epic ID` };
  if (matches.length > 1) return { problem: `several epics are titled "${title}": ${matches.map((m) => m.id).join(', ')}; pass --epic ID` };
  return { epic: matches[0]! };
}

/** What stops a run on `epic` (its children listed): no clarify phase, or one not closed yet. */
export function clarifyProblem(epic: BdIssue, children: readonly BdIssue[]): string | undefined {
  const clarify = children.find((child) => CLARIFY.test(child.title));
  if (!clarify) return `epic ${epic.id} has no clarify phase (a child titled "[sp:NN-clarify] …"): run the clarify phase first`;
  if (!isClosed(clarify)) return `clarify phase ${clarify.id} "${clarify.title}" is ${clarify.status}, not closed: finish /sp:clarify before starting ralph`;
  return undefined;
}
