// The prd.json task source: picks the highest-priority open task, marks it in_iteration while the agent
// works, and records the verdict in prd.json, history/iteration-N.json and progress.txt.
import { count } from '../../progress/tasks-left.ts';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../../errors.ts';
import { resolveGates } from '../../gates.ts';
import { compactAfterAppend } from '../../progress/compact.ts';
import type { IterationInfo, IterationResult, Snapshot, SourceContext, Task, TaskSource } from '../types.ts';
import { historyFile, lastHistoryIteration, readHistoryRecord, recordedAfter } from './history.ts';
import { detectPrd, PRD_CANDIDATES } from './locate.ts';
import { decidePrdOutcome } from './outcome.ts';
import { appendProgressEntry, lastLoggedIteration, PRD_ENTRY_HEADING, progressContext, progressHeader, progressPath, readProgress, type ProgressEntry } from './progress.ts';
import { buildPrdPrompt, loadPrdTemplate } from './prompt.ts';
import { recordInterrupted, settleIteration, type Recorder } from './record.ts';
import { parseAgentReport } from './report-parser.ts';
import { PrdFormatError, readPrd, updateItem, writePrd, type PrdDocument, type PrdItem } from './schema.ts';
import { prdSnapshot, stuckLine } from './selection.ts';
import { createPrdWorkers } from './workers.ts';
import { answeredFor, waitingIds } from '../../questions/store.ts';
import { answersBlock } from '../../questions/text.ts';

// Moved to their own modules; still exported from here for existing importers.
export { failureText } from './record.ts';
export { isReady, MAX_ATTEMPTS, stuckLine } from './selection.ts';

export const PRD_DEFAULT_MAX_ITERATIONS = 10;

/** A task as the reviewer sees it: id, title, description and acceptance criteria. */
export function itemBrief(item: Pick<PrdItem, 'id' | 'title' | 'description' | 'acceptanceCriteria'>): string {
  const criteria = item.acceptanceCriteria.length > 0 ? item.acceptanceCriteria.map((line) => `- ${line}`).join('\n') : '(none listed: the title and description are the whole requirement)';
  return [`### Task ${item.id}: ${item.title}`, '', item.description?.trim() || '(no description)', '', '#### Acceptance criteria', '', criteria].join('\n');
}

/** Puts the tasks an interrupted run left in_iteration back to pending, in `doc` (not written); says which. */
function putBack(doc: PrdDocument): { stale: PrdItem[]; warnings: string[] } {
  const stale = doc.items.filter((item) => item.status === 'in_iteration');
  const warnings: string[] = [];
  for (const item of stale) {
    const startedAt = item.startedAt;
    updateItem(doc, item, { status: 'pending', startedAt: undefined });
    warnings.push(`task ${item.id} was left in_iteration by iteration ${item.iterationNumber ?? '?'}${startedAt ? ` (started ${startedAt})` : ''}; put it back to pending`);
  }
  return { stale, warnings };
}

/** The prd.json source. */
export function createPrdSource(ctx: SourceContext): TaskSource {
  const { root, config, deps } = ctx;
  const option = config.extra.get('prd');
  const configured = typeof option === 'string' && option.trim() !== '' ? path.resolve(root, option) : undefined;
  const prdFile = configured ?? detectPrd(root);
  const shown = (file: string): string => {
    const relative = path.relative(root, file);
    return relative && !relative.startsWith('..') ? relative : file;
  };

  const requireFile = (): string => {
    if (!prdFile) {
      throw new RalphError(`no prd.json found in ${root}: looked for ${PRD_CANDIDATES.join(', ')}`, {
        hint: "run 'ralph init' to create .rulebook-ralph/prd.json from rulebook tasks, or pass --prd PATH",
      });
    }
    return prdFile;
  };
  const load = (): PrdDocument => readPrd(requireFile());
  const progressFile = (): string => progressPath(requireFile());
  const header = (doc: PrdDocument) => () => progressHeader({ now: deps.now(), prd: shown(doc.file), taskCount: doc.items.length });
  const find = (doc: PrdDocument, id: string): PrdItem => {
    const item = doc.items.find((candidate) => candidate.id === id);
    if (!item) throw new RalphError(`${doc.file}: task ${id} is no longer in the file`, { hint: 'restore the task or start ralph again' });
    return item;
  };
  const iso = (): string => new Date(deps.now()).toISOString();
  /** Appends an entry, then moves old entries to the archive once the log passes its size limit. */
  const appendProgress = (entry: ProgressEntry, doc: PrdDocument): void => {
    const file = progressFile();
    appendProgressEntry(file, entry, header(doc));
    compactAfterAppend(file, PRD_ENTRY_HEADING, config.extra, ctx.warn);
  };
  const recorder: Recorder = { root, agent: config.agent, now: () => deps.now(), warn: ctx.warn, appendProgress };

  // The last 20 commits only change with HEAD: ask git again only when HEAD moved.
  let commitsAt: { head: string; lines: string[] } | undefined;
  async function recentCommits(head: string | undefined): Promise<string[]> {
    if (head && commitsAt?.head === head) return commitsAt.lines;
    const result = await deps.exec('git', ['log', '--oneline', '-20'], { cwd: root, timeoutMs: 15_000 });
    if (result.exitCode !== 0) return [];
    const lines = result.stdout.split('\n').map((line) => line.trim()).filter(Boolean);
    if (head) commitsAt = { head, lines };
    return lines;
  }

  // Questions are kept per prd.json: a US-001 of another file is another task.
  const scope = (): string => (prdFile ? shown(prdFile) : '');
  const waiting = (): Set<string> => waitingIds(root, 'prd', scope());
  const workers = createPrdWorkers(root, requireFile, async () => prdSnapshot(load(), waiting()));
  return {
    name: 'prd',
    workers,
    gatesByDefault: true,
    commitByDefault: true,

    decideOutcome(input) {
      return decidePrdOutcome({
        agentReport: parseAgentReport(input.agentText),
        gates: input.gates,
        agentFailed: input.classification.kind !== 'ok',
        ...('reason' in input.classification ? { agentFailure: input.classification.reason } : {}),
        markedDone: input.tasksDone.includes(input.task.id),
      });
    },

    // The history record is part of the commit it would name, so it names none: the commit's
    // Ralph-Iteration trailer points back to it. Only the cached log learns the new commit.
    async recordCommit(iteration: number, commit: string, parent?: string) {
      // ralph made this commit on top of the cached HEAD: extend the cached log instead of asking git again.
      if (commitsAt && parent !== undefined && commitsAt.head === parent) {
        const record = readHistoryRecord(root, iteration);
        commitsAt = { head: commit, lines: [`${commit.slice(0, 7)} ralph: ${record?.taskId ?? ''} ${record?.taskTitle ?? ''}`.trim(), ...commitsAt.lines].slice(0, 20) };
      }
    },
    defaultMaxIterations: PRD_DEFAULT_MAX_ITERATIONS,

    scope,

    describe() {
      if (!prdFile) return 'prd.json (not found)';
      try {
        const doc = readPrd(prdFile);
        const project = typeof doc.data.project === 'string' ? ` "${doc.data.project}"` : '';
        return `${shown(prdFile)}${project} (${doc.shape} shape, ${count(doc.items.length, 'task')})`;
      } catch {
        return shown(prdFile);
      }
    },

    // `project: description` (snarktank's prd.json), either alone when the other is missing.
    title() {
      if (!prdFile) return undefined;
      try {
        const { data } = readPrd(prdFile);
        const words = [data.project, data.description].filter((value): value is string => typeof value === 'string' && value.trim() !== '').map((value) => value.trim().split('\n')[0]!);
        return words.length > 0 ? words.join(': ') : undefined;
      } catch {
        return undefined;
      }
    },

    async check() {
      const problems: string[] = [];
      if (!prdFile) {
        problems.push(`no prd.json found in ${root}: looked for ${PRD_CANDIDATES.join(', ')}; run 'ralph init' to create one from rulebook tasks, or pass --prd PATH`);
      } else if (configured && !existsSync(configured)) {
        problems.push(`--prd ${String(option)}: file not found (${configured})`);
      } else {
        try {
          readPrd(prdFile);
        } catch (error) {
          problems.push(error instanceof PrdFormatError ? `${error.message} (fix the file; ralph leaves it untouched)` : (error as Error).message);
        }
      }
      try {
        loadPrdTemplate();
      } catch (error) {
        problems.push(`prompt template missing: ${(error as Error).message}`);
      }
      return problems;
    },

    async recover() {
      if (!prdFile || !existsSync(prdFile)) return [];
      const doc = load();
      const { stale, warnings } = putBack(doc);
      if (stale.length === 0) return [];
      writePrd(doc);
      for (const item of stale) {
        const iteration = item.iterationNumber;
        if (iteration === undefined) continue;
        recordInterrupted(recorder, doc, item, iteration);
      }
      return warnings;
    },

    async recorded(iteration: number, taskId: string) {
      const file = historyFile(root, iteration);
      if (existsSync(file)) {
        try {
          if ((JSON.parse(readFileSync(file, 'utf8')) as { taskId?: string }).taskId === taskId) return true;
        } catch {
          return true; // a record of that number is there (unreadable): never record the iteration twice
        }
      }
      // Several hosts: its landing may have taken a later number, another host's record holding this one.
      return recordedAfter(root, iteration, taskId);
    },

    async afterRecovery() {
      if (!prdFile || !existsSync(prdFile)) return { messages: [], snapshot: { ready: [], remaining: [], done: [] } };
      const doc = load();
      const { warnings } = putBack(doc);
      // putBack changed the raw objects; the items' own status is what a new read would give.
      const items = doc.items.map((item): PrdItem => (item.status === 'in_iteration' ? { ...item, status: 'pending' } : item));
      return { messages: warnings.map((line) => line.replace(/; put it back to pending$/, ': put it back to pending')), snapshot: prdSnapshot({ ...doc, items }, waiting()) };
    },

    async lastIteration() {
      let last = lastHistoryIteration(root);
      if (prdFile && existsSync(prdFile)) {
        try {
          for (const item of readPrd(prdFile).items) last = Math.max(last, item.iterationNumber ?? 0);
        } catch (error) {
          if (!(error instanceof PrdFormatError)) throw error;
        }
        last = Math.max(last, lastLoggedIteration(readProgress(progressPath(prdFile))));
      }
      return last;
    },

    async snapshot(): Promise<Snapshot> {
      return prdSnapshot(load(), waiting());
    },

    async claim(task: Task, info: IterationInfo) {
      const doc = load();
      updateItem(doc, find(doc, task.id), { status: 'in_iteration', iterationNumber: info.iteration, startedAt: iso() });
      writePrd(doc);
    },

    async abandon(task: Task, info: IterationInfo, why: string) {
      if (!prdFile || !existsSync(prdFile)) return undefined;
      const doc = load();
      const item = doc.items.find((candidate) => candidate.id === task.id);
      if (item?.status !== 'in_iteration' || item.iterationNumber !== info.iteration) return undefined;
      // Recorded first (with its start time): a kill in between leaves the task in flight for recovery,
      // which finds the record written and only puts the task back.
      recordInterrupted(recorder, doc, item, info.iteration, why);
      updateItem(doc, item, { status: 'pending', startedAt: undefined });
      writePrd(doc);
      return `task ${task.id} is back to pending: iteration ${info.iteration} did not finish (${why})`;
    },

    async prompt(task: Task, info: IterationInfo) {
      const doc = load();
      const item = find(doc, task.id);
      const { patterns, recent } = progressContext(readProgress(progressFile()));
      return buildPrdPrompt({
        template: loadPrdTemplate(),
        iteration: info.iteration,
        maxIterations: info.maxIterations,
        prdPath: shown(doc.file),
        progressPath: shown(progressFile()),
        item,
        patterns,
        progress: recent,
        commits: await recentCommits(info.head),
        gates: resolveGates(root, config),
        ...(typeof item.raw.sourcePath === 'string' ? { sourcePath: item.raw.sourcePath } : {}),
        answers: answersBlock(answeredFor(root, { source: 'prd', scope: scope(), taskId: item.id })),
        extra: config.prompt,
      });
    },

    async settle(result: IterationResult, info: IterationInfo) {
      settleIteration(recorder, load(), result, info);
    },

    explainStuck(snapshot: Snapshot) {
      const ready = new Set(snapshot.ready.map((task) => task.id));
      const lines = snapshot.remaining.filter((task) => !ready.has(task.id)).map(stuckLine);
      return lines.length > 0 ? lines.join('\n') : 'no task is ready although some remain';
    },

    words: { task: 'task', finished: 'completed' },

    // prd.json, progress.txt and the history: the same as the workers' state.
    bookkeepingFiles() {
      return prdFile ? workers.stateFiles() : [];
    },

    async brief(task: Task) {
      return itemBrief(find(load(), task.id));
    },

    async reopen(task: Task, reasons: string, info: IterationInfo) {
      const doc = load();
      // settle() then records the failed iteration (blocked, one more attempt, the reasons as lastError).
      updateItem(doc, find(doc, task.id), { status: 'pending', completedAt: undefined, lastError: `the reviewer rejected iteration ${info.iteration}: ${reasons}` });
      writePrd(doc);
    },
  };
}
