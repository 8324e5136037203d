// `ralph serve` with several hosts: the feature's claims on the remote, looked at every few seconds in the
// background, for the remote that `--remote` (RALPH_REMOTE, "remote") names or else the one the shown run
// works with. Only reads: a fetch of the claims into refs/ralph-view/, never the run's refs (lib/landing/view.ts).
import type { Deps } from '../deps.ts';
import { Git } from '../repo/git.ts';
import { readRemoteClaims, type RemoteView } from '../landing/view.ts';

/** How often the claims are fetched again. */
export const REMOTE_WATCH_MS = 5000;

export interface RemoteWatchOptions {
  root: string;
  deps: Deps;
  leaseMs: number;
  everyMs?: number;
  /** The remote to look at now (and its branch when known; else the clone's current branch); none: nothing to look at. */
  target: () => { name: string; branch?: string } | undefined;
  /** The view changed: the page is sent again. */
  changed: (view: RemoteView | undefined) => void;
}

export class RemoteWatch {
  private view: RemoteView | undefined;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private readonly stop = new AbortController();

  constructor(private readonly o: RemoteWatchOptions) {}

  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.o.everyMs ?? REMOTE_WATCH_MS);
    this.timer.unref();
  }

  current(): RemoteView | undefined {
    return this.view;
  }

  /** One look; a look still under way (a remote slow to answer) is not doubled. */
  async tick(): Promise<void> {
    if (this.busy || this.stop.signal.aborted) return;
    this.busy = true;
    try {
      const target = this.o.target();
      let view: RemoteView | undefined;
      if (target) {
        const branch = target.branch ?? (await new Git(this.o.root).branch());
        view = branch
          ? await readRemoteClaims({ root: this.o.root, deps: this.o.deps, remote: target.name, branch, leaseMs: this.o.leaseMs, signal: this.stop.signal })
          : { name: target.name, branch: '(detached HEAD)', claims: [], error: 'HEAD is detached: check out the feature branch to see its claims' };
      }
      if (this.stop.signal.aborted || JSON.stringify(view) === JSON.stringify(this.view)) return;
      this.view = view;
      this.o.changed(view);
    } finally {
      this.busy = false;
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.stop.abort();
  }
}
