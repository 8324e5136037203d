// The prd.json task source: picks the highest-priority open task, marks it in_iteration while the agent
// works, and records the verdict in prd.json, history/iteration-N.json and progress.txt.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../../errors.ts';
import { failureLine, formatGateResults, resolveGates, type GateResult } from '../../gates.ts';
import type { IterationInfo, IterationResult, Snapshot, SourceContext, Task, TaskSource } from '../types.ts';
import { historyFile, lastHistoryIteration, writeHistoryRecord, type HistoryRecord, type QualityMetrics } from './history.ts';
import { compactAfterAppend } from '../../progress/compact.ts';
import { appendProgressEntry, lastLoggedIteration, PRD_ENTRY_HEADING, progressContext, progressHeader, progressPath, readProgress, type ProgressEntry } from './progress.ts';
import { buildPrdPrompt, loadPrdTemplate } from './prompt.ts';
import { parseAgentReport, type AgentReport } from './report-parser.ts';
import { decidePrdOutcome } from './outcome.ts';
import { byPriority, PrdFormatError, readPrd, updateItem, writePrd, type PrdDocument, type PrdItem } from './schema.ts';

/** Where a prd.json is looked for when --prd is not given, in this order. */
export const PRD_CANDIDATES = ['.rulebook-ralph/prd.json', '.rulebook/ralph/prd.json', 'prd.json'] as const;
/** Failed iterations after which a task ralph blocked is no longer retried. */
export const MAX_ATTEMPTS = 3;
export const PRD_DEFAULT_MAX_ITERATIONS = 10;

/** The first prd.json candidate that exists under `root` (absolute path), or undefined. */
export function detectPrd(root: string): string | undefined {
  return PRD_CANDIDATES.map((candidate) => path.join(root, candidate)).find((file) => existsSync(file));
}

/**
 * Whether the loop may pick an item: pending, or blocked by ralph itself with attempts to spare. A task
 * blocked outside ralph (no failed attempt recorded) waits for a person.
 */
export function isReady(item: Pick<PrdItem, 'status' | 'attempts'>): boolean {
  return item.status === 'pending' || (item.status === 'blocked' && item.attempts > 0 && item.attempts < MAX_ATTEMPTS);
}

function toTask(item: PrdItem, doc: PrdDocument): Task {
  return {
    id: item.id,
    title: item.title,
    status: item.status,
    ...(item.priority === undefined ? {} : { priority: item.priority }),
    meta: {
      shape: doc.shape,
      attempts: item.attempts,
      ...(item.iterationNumber === undefined ? {} : { iterationNumber: item.iterationNumber }),
      ...(item.lastError === undefined ? {} : { lastError: item.lastError }),
      ...(item.estimatedComplexity === undefined ? {} : { estimatedComplexity: item.estimatedComplexity }),
    },
  };
}

/** Why a remaining task is not ready, as one line. */
export function stuckLine(task: Task): string {
  const meta = task.meta ?? {};
  const attempts = typeof meta.attempts === 'number' ? meta.attempts : 0;
  const head = `${task.id} "${task.title}"`;
  if (task.status === 'in_iteration') {
    return `${head}: in_iteration since iteration ${String(meta.iterationNumber ?? '?')} (another run holds it, or it was interrupted: ralph resume puts it back)`;
  }
  if (task.status === 'blocked' && attempts > 0) {
    return `${head}: blocked after ${attempts} failed attempts: ${String(meta.lastError ?? 'no error recorded')}; fix the cause, then set its status to pending`;
  }
  if (task.status === 'blocked') return `${head}: blocked outside ralph; set its status to pending to let ralph work on it`;
  return `${head}: ${task.status}`;
}

/** The error text a failed iteration leaves on its task: each failed gate with its telling line, else the reason. */
export function failureText(reason: string, gates: readonly GateResult[]): string {
  const failed = gates.filter((gate) => !gate.passed);
  if (failed.length === 0) return reason;
  return failed
    .map((gate) => {
      const line = failureLine(gate.outputTail);
      return `${gate.name} (\`${gate.command}\`) failed with ${gate.timedOut ? 'a timeout' : `exit ${gate.exitCode}`}${line ? `: ${line}` : ''}`;
    })
    .join('; ');
}

function qualityMetrics(gates: readonly GateResult[], report: AgentReport): QualityMetrics {
  const passed = gates.filter((gate) => gate.passed).length;
  return {
    gates: gates.map((gate) => ({
      name: gate.name,
      command: gate.command,
      passed: gate.passed,
      exitCode: gate.exitCode,
      durationMs: gate.durationMs,
      ...(gate.timedOut ? { timedOut: true } : {}),
      ...(gate.passed ? {} : { outputTail: gate.outputTail }),
    })),
    gatesPassed: passed,
    gatesFailed: gates.length - passed,
    allPassed: passed === gates.length,
    reported: report.quality,
  };
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

  async function recentCommits(): Promise<string[]> {
    const result = await deps.exec('git', ['log', '--oneline', '-20'], { cwd: root, timeoutMs: 15_000 });
    if (result.exitCode !== 0) return [];
    return result.stdout.split('\n').map((line) => line.trim()).filter(Boolean);
  }

  return {
    name: 'prd',
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

    async recordCommit(iteration: number, commit: string) {
      const file = historyFile(root, iteration);
      if (!existsSync(file)) return;
      const record = JSON.parse(readFileSync(file, 'utf8')) as HistoryRecord;
      writeHistoryRecord(root, { ...record, commit });
    },
    defaultMaxIterations: PRD_DEFAULT_MAX_ITERATIONS,

    describe() {
      if (!prdFile) return 'prd.json (not found)';
      try {
        const doc = readPrd(prdFile);
        const project = typeof doc.data.project === 'string' ? ` "${doc.data.project}"` : '';
        return `prd.json ${shown(prdFile)}${project} (${doc.shape} shape, ${doc.items.length} tasks)`;
      } catch {
        return `prd.json ${shown(prdFile)}`;
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
      const stale = doc.items.filter((item) => item.status === 'in_iteration');
      if (stale.length === 0) return [];
      const warnings: string[] = [];
      for (const item of stale) {
        const iteration = item.iterationNumber;
        updateItem(doc, item, { status: 'pending', startedAt: undefined });
        warnings.push(`task ${item.id} was left in_iteration by iteration ${iteration ?? '?'}${item.startedAt ? ` (started ${item.startedAt})` : ''}; put it back to pending`);
      }
      writePrd(doc);
      for (const item of stale) {
        const iteration = item.iterationNumber;
        if (iteration === undefined) continue;
        const reason = 'the run stopped before this iteration finished (Ctrl+C, crash or kill); the task is back to pending';
        // Record the cut-short iteration once, so history and progress.txt agree and its number is never reused.
        if (!existsSync(historyFile(root, iteration))) {
          const started = item.startedAt ? Date.parse(item.startedAt) : Number.NaN;
          const record: HistoryRecord = {
            iterationNumber: iteration,
            timestamp: iso(),
            taskId: item.id,
            taskTitle: item.title,
            tasksAttempted: [item.id],
            tasksCompleted: [],
            failedCount: 0,
            qualityMetrics: { gates: [], gatesPassed: 0, gatesFailed: 0, allPassed: false, reported: [] },
            durationMs: Number.isNaN(started) ? 0 : Math.max(0, deps.now() - started),
            agent: config.agent,
            commit: null,
            learnings: [],
            completionStatus: 'interrupted',
            reason,
          };
          writeHistoryRecord(root, record);
          appendProgress({ now: deps.now(), iteration, taskId: item.id, taskTitle: item.title, status: 'interrupted', reason }, doc);
        }
      }
      return warnings;
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
      const doc = load();
      const ordered = byPriority(doc.items);
      return {
        ready: ordered.filter(isReady).map((item) => toTask(item, doc)),
        remaining: ordered.filter((item) => item.status !== 'completed').map((item) => toTask(item, doc)),
        done: ordered.filter((item) => item.status === 'completed').map((item) => toTask(item, doc)),
      };
    },

    async claim(task: Task, info: IterationInfo) {
      const doc = load();
      updateItem(doc, find(doc, task.id), { status: 'in_iteration', iterationNumber: info.iteration, startedAt: iso() });
      writePrd(doc);
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
        commits: await recentCommits(),
        gates: resolveGates(root, config),
        ...(typeof item.raw.sourcePath === 'string' ? { sourcePath: item.raw.sourcePath } : {}),
        extra: config.prompt,
      });
    },

    async settle(result: IterationResult, info: IterationInfo) {
      const doc = load();
      const item = doc.items.find((candidate) => candidate.id === result.task.id);
      const report = parseAgentReport(result.agentText);
      const gates = result.gates ?? [];
      const now = deps.now();
      const error = result.kind === 'fail' ? failureText(result.reason, gates) : undefined;

      if (item) {
        if (result.kind === 'pass') updateItem(doc, item, { status: 'completed', completedAt: new Date(now).toISOString(), lastError: undefined });
        else if (result.kind === 'fail') updateItem(doc, item, { status: 'blocked', attempts: item.attempts + 1, lastError: error });
        else updateItem(doc, item, { status: 'pending' });
        writePrd(doc);
      } else {
        ctx.warn(`${doc.file}: task ${result.task.id} disappeared during iteration ${info.iteration}; its status was not recorded`);
      }

      const failureNote = error
        ? `Iteration ${info.iteration} failed on ${result.task.id}: ${error}. ${item && item.attempts + 1 >= MAX_ATTEMPTS ? 'The task is now blocked for good until a person looks at it.' : 'Fix this first when the task is retried.'}`
        : undefined;
      const learnings = [...report.learnings, ...(failureNote ? [failureNote] : [])];
      const completionStatus = result.kind === 'pass' ? 'completed' : result.kind === 'fail' ? 'failed' : 'partial';
      writeHistoryRecord(root, {
        iterationNumber: info.iteration,
        timestamp: new Date(now).toISOString(),
        sessionId: info.sessionId,
        taskId: result.task.id,
        taskTitle: result.task.title,
        tasksAttempted: [result.task.id],
        tasksCompleted: result.kind === 'pass' ? [result.task.id] : [],
        failedCount: result.kind === 'fail' ? 1 : 0,
        qualityMetrics: qualityMetrics(gates, report),
        durationMs: result.durationMs,
        agent: config.agent,
        commit: result.commit ?? null,
        learnings,
        completionStatus,
        reason: result.reason,
        ...(report.summary ? { summary: report.summary } : {}),
        ...(report.commitMessages.length > 0 ? { commitMessages: report.commitMessages } : {}),
        ...(report.contextLoss.length > 0 ? { contextLoss: report.contextLoss } : {}),
      });
      appendProgress(
        {
          now,
          iteration: info.iteration,
          taskId: result.task.id,
          taskTitle: result.task.title,
          status: result.kind === 'fail' ? 'failed (blocked)' : completionStatus,
          reason: result.reason,
          ...(gates.length > 0 ? { gates: formatGateResults(gates) } : {}),
          ...(report.summary ? { summary: report.summary } : {}),
          changes: report.changes,
          ...(result.commit ? { commit: result.commit } : {}),
          learnings,
        },
        doc,
      );
    },

    explainStuck(snapshot: Snapshot) {
      const ready = new Set(snapshot.ready.map((task) => task.id));
      const lines = snapshot.remaining.filter((task) => !ready.has(task.id)).map(stuckLine);
      return lines.length > 0 ? lines.join('\n') : 'no task is ready although some remain';
    },
  };
}
