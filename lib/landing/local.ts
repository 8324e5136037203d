// One host: this process decides who works on what (the sources' own claims, e.g. beads' `bd update
// --claim`) and lands work by fast-forwarding the feature branch in the main worktree (lib/session/worker.ts).
import type { Git } from '../repo/git.ts';
import { MergeLock } from './replay.ts';
import type { Claim, Dock } from './types.ts';

export function localDock(main: Git, head: string | undefined): Dock {
  const lock = new MergeLock(head);
  return {
    lock,
    target: () => main.head(),
    publish: async () => ({ kind: 'landed' }),
    rewind: async () => undefined,
    claim: async () => undefined,
    lost: () => undefined,
    release: async () => undefined,
    share: async () => undefined,
    elsewhere: async () => new Map<string, Claim>(),
    close: async () => [],
  };
}
