// The live picture of one repo's run for `ralph serve`: events.jsonl tailed into the model, status.json
// and the lock read beside it, the past reports listed. Only reads; polls a few small stats per tick.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { inspectLock } from '../repo/lock.ts';
import { eventsPath } from '../progress/event-log.ts';
import type { RunStatusFile, WorkerStatus } from '../progress/state.ts';
import { readStatusFile, statusPath } from '../progress/status-file.ts';
import { reportsDir } from '../report/index.ts';
import { QUESTIONS_FILE, readQuestions, type Question } from '../questions/store.ts';
import type { ClaimView, RemoteView } from '../landing/view.ts';
import { landedText } from '../landing/view-text.ts';
import { emptyModel, foldLine, parseLine, type LiveModel } from './model.ts';
import { lastSessionOffset, LineTail } from './tail.ts';

export interface ReportLink {
  session: string;
  html: string | null;
  markdown: string | null;
}

/** Everything the page renders; sent whole on each change (it stays small: the activity is bounded). */
export interface PageState {
  repo: string;
  serverTime: string;
  model: LiveModel;
  /** The session's process still holds the lock. */
  alive: boolean;
  /** status.json when it belongs to the session shown. */
  status: RunStatusFile | null;
  /** The workers' iterations under way, when a run has several (status.json's `workers`). */
  workers: WorkerStatus[] | null;
  reports: ReportLink[];
  /** Whether the page may offer pause and stop buttons (and answer boxes). */
  control: boolean;
  /** The agents' questions: waiting for an answer, or answered and not yet worked on. */
  questions: Question[];
  /** --remote: the feature's claims on the remote (as last fetched) and, once the run ended, who landed what. */
  remote: RemoteState | null;
}

export interface RemoteState {
  name: string;
  branch: string;
  claims: ClaimView[];
  /** Why the claims could not be read; null when they were (or were not looked at yet). */
  error: string | null;
  /** `landed here 2 (T001, T004), by other hosts 3 on origin/feat`, once the run ended. */
  landed: string | null;
}

const MAX_REPORTS = 30;

/** The reports in .ralph/reports/, newest first. */
export function listReports(root: string): ReportLink[] {
  let names: string[];
  try {
    names = readdirSync(reportsDir(root));
  } catch {
    return [];
  }
  const sessions = new Map<string, ReportLink>();
  for (const name of names) {
    const match = /^([\w.-]+)\.(html|md)$/.exec(name);
    if (!match) continue;
    const link = sessions.get(match[1]!) ?? { session: match[1]!, html: null, markdown: null };
    if (match[2] === 'html') link.html = `reports/${encodeURIComponent(name)}`;
    else link.markdown = `reports/${encodeURIComponent(name)}`;
    sessions.set(match[1]!, link);
  }
  return [...sessions.values()].sort((a, b) => b.session.localeCompare(a.session)).slice(0, MAX_REPORTS);
}

function statKey(file: string): string {
  try {
    const stat = statSync(file);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return '';
  }
}

export class LiveFeed {
  private model: LiveModel = emptyModel();
  private readonly tail: LineTail;
  private status: RunStatusFile | undefined;
  private statusKey = '';
  private reportsKey = '';
  private reports: ReportLink[] = [];
  private questionsKey = '';
  private questions: Question[] = [];
  private alive = false;
  private version = 0;
  private remote: RemoteView | undefined;

  constructor(
    private readonly root: string,
    private readonly options: { control: boolean; now?: () => number } = { control: false },
  ) {
    this.tail = new LineTail(eventsPath(root));
    this.reload();
    this.poll();
  }

  /** Grows with every change: the server sends a new state when it moved. */
  get changes(): number {
    return this.version;
  }

  /** Looks at the files once; true when anything the page shows changed. */
  poll(): boolean {
    let changed = false;
    const read = this.tail.read();
    if (read.reset) {
      this.reload();
      return true;
    }
    for (const text of read.lines) {
      const line = parseLine(text);
      if (!line) continue;
      foldLine(this.model, line);
      changed = true;
    }
    const statusKey = statKey(statusPath(this.root));
    if (statusKey !== this.statusKey) {
      this.statusKey = statusKey;
      this.status = readStatusFile(this.root);
      changed = true;
    }
    const reportsKey = statKey(reportsDir(this.root));
    if (reportsKey !== this.reportsKey) {
      this.reportsKey = reportsKey;
      this.reports = listReports(this.root);
      changed = true;
    }
    const questionsKey = statKey(path.join(this.root, QUESTIONS_FILE));
    if (questionsKey !== this.questionsKey) {
      this.questionsKey = questionsKey;
      try {
        this.questions = readQuestions(this.root);
      } catch {
        this.questions = [];
      }
      changed = true;
    }
    const lock = inspectLock(this.root, this.now());
    const alive = lock.held && this.model.session !== null && lock.info?.pid === this.model.session.pid && this.model.end === null;
    if (alive !== this.alive) {
      this.alive = alive;
      changed = true;
    }
    if (changed) this.version += 1;
    return changed;
  }

  /** The claims as the remote watch last read them (lib/serve/remote-watch.ts). */
  setRemote(view: RemoteView | undefined): void {
    this.remote = view;
    this.version += 1;
  }

  /** The shown run's --remote, when it has one. */
  sessionRemote(): { name: string; branch: string } | undefined {
    return this.model.session?.remote ?? undefined;
  }

  state(): PageState {
    const session = this.model.session;
    const status = this.status && session && this.status.sessionId === session.id ? this.status : null;
    return {
      repo: path.basename(this.root),
      serverTime: new Date(this.now()).toISOString(),
      model: this.model,
      alive: this.alive,
      status,
      workers: status?.state === 'finished' ? null : (status?.workers ?? null),
      reports: this.reports,
      control: this.options.control,
      questions: this.questions,
      remote: this.remoteState(),
    };
  }

  private remoteState(): RemoteState | null {
    const end = this.model.end;
    const view = this.remote;
    if (!view && !end?.remote) return null;
    return {
      name: view?.name ?? end!.remote!.name,
      branch: view?.branch ?? end!.remote!.branch,
      claims: view?.claims ?? [],
      error: view?.error ?? null,
      landed: end?.remote ? landedText(end.remote, end.landed) : null,
    };
  }

  /** Starts over from the last session in events.jsonl (at start, and when the file was replaced). */
  private reload(): void {
    this.model = emptyModel();
    this.tail.seek(lastSessionOffset(eventsPath(this.root)));
    this.statusKey = '';
    this.reportsKey = '';
    this.questionsKey = '';
    // Catch up in bounded reads.
    for (let read = this.tail.read(); read.lines.length > 0; read = this.tail.read()) {
      for (const text of read.lines) {
        const line = parseLine(text);
        if (line) foldLine(this.model, line);
      }
    }
    this.version += 1;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}
