// Spec Kit mode: specs/<feature>/tasks.md as a task source, with progress.txt and ralph-tasks.json beside it.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../../errors.ts';
import { Git } from '../../repo/git.ts';
import type { IterationInfo, IterationResult, Snapshot, SourceContext, Task, TaskSource } from '../types.ts';
import { agentFromFolders, agentFromInitOptions, COPILOT_PROFILE, COPILOT_PROFILE_FILE } from './agent.ts';
import { checkFeature } from './check.ts';
import { copiesByTask } from './parse.ts';
import { readText } from './paths.ts';
import { lastIterationNumber, parseTracking, releaseSkipped, type Tracking } from './progress.ts';
import { createProgressWriter } from './progress-writer.ts';
import { createSpeckitConverge } from './converge.ts';
import { createSpeckitHooks, projectHooks } from './hooks.ts';
import { createSpeckitWorkers } from './workers.ts';
import type { ResolvedVia } from './resolve.ts';
import { buildSnapshot, currentTaskBlock, explainStuck, reviewBrief, type SkippedNote } from './select.ts';
import { uncheckLine } from './reopen.ts';
import { writeFileAtomic } from '../../repo/fs-atomic.ts';
import { createFeatureState } from './state.ts';
import { renderTemplate, type TemplateValues } from './template.ts';
import { answeredFor, waitingIds } from '../../questions/store.ts';
import { answersBlock } from '../../questions/text.ts';
import { packageFile } from '../../package-files.ts';

export const SPECKIT_MAX_ITERATIONS = 10;
/** A project's own template, used when no `template` option is given. */
export const PROJECT_TEMPLATE = '.specify/templates/ralph-prompt.md';
export const DEFAULT_TEMPLATE = packageFile('templates/ralph-prompt.md');

const VIA_TEXT: Record<ResolvedVia, string> = {
  option: '--feature',
  SPECIFY_FEATURE_DIRECTORY: 'SPECIFY_FEATURE_DIRECTORY',
  'feature.json': '.specify/feature.json',
  SPECIFY_FEATURE: 'SPECIFY_FEATURE',
  branch: 'the branch name',
  'only feature': 'the only feature with a tasks.md',
};

/** Spec Kit mode as a task source. Everything is read from `ctx.root`; nothing is cached but the feature and the tracking data. */
export function createSpeckitSource(ctx: SourceContext): TaskSource {
  const state = createFeatureState(ctx);
  const { option, resolve, paths, iso, readTasks, loadTracking, saveTracking } = state;
  const writer = createProgressWriter(ctx, state);
  let defaults: { agent?: string; profile?: string } | undefined;

  const skippedIds = (data: Tracking): Set<string> => new Set(data.tasks.filter((task) => task.skipped).map((task) => task.id));
  // Questions are kept per feature: a T002 of another feature is another task.
  const scope = (): string => {
    const result = resolve();
    return result.ok ? result.feature.name : '';
  };
  const waiting = (): Set<string> => waitingIds(ctx.root, 'speckit', scope());

  const templateFile = (): string => {
    const given = option('template');
    if (given) return path.resolve(ctx.root, given);
    const project = path.join(ctx.root, PROJECT_TEMPLATE);
    return existsSync(project) ? project : DEFAULT_TEMPLATE;
  };

  const source: TaskSource = {
    name: 'speckit',
    defaultMaxIterations: SPECKIT_MAX_ITERATIONS,

    describe() {
      const result = resolve();
      if (!result.ok) return 'Spec Kit feature (unresolved)';
      return `Spec Kit feature ${result.feature.name} (${result.feature.rel}/tasks.md, chosen by ${VIA_TEXT[result.feature.via]})`;
    },

    // spec.md's heading without Spec Kit's `Feature Specification:` (else the feature's folder name).
    title() {
      const result = resolve();
      if (!result.ok) return undefined;
      const heading = /^#\s+(.+)$/m.exec(readText(paths().spec) ?? '')?.[1]?.replace(/^Feature Specification:\s*/i, '').trim();
      return heading || result.feature.name;
    },
    scope,

    async check() {
      const result = resolve();
      if (!result.ok) return [result.problem];
      const problems = checkFeature({ root: ctx.root, feature: result.feature, template: option('template'), warn: ctx.warn });
      // A hook file ralph cannot read stops the run before anything runs: it would skip a mandatory hook.
      try {
        projectHooks(ctx.root);
      } catch (error) {
        problems.push((error as Error).message);
      }
      // Workers' worktrees hold what is committed: an uncommitted feature folder would be missing there.
      if (ctx.config.parallel > 1 && problems.length === 0) {
        const rel = result.feature.rel;
        const tracked = await new Git(ctx.root).attempt(['ls-files', '--', `${rel}/tasks.md`]);
        if (tracked.output.trim() === '') problems.push(`--parallel ${ctx.config.parallel}: ${rel}/tasks.md is not committed, so the agents in the workers' worktrees would not see the feature: commit it first (git add ${rel} && git commit)`);
      }
      return problems;
    },

    async recover() {
      const data = loadTracking(readTasks());
      const warnings: string[] = [];
      const released = releaseSkipped(data);
      if (released.released.length > 0) {
        warnings.push(`tasks skipped by an earlier run get another chance: ${released.released.join(', ')}`);
      }
      const { current, running, ...rest } = released.tracking;
      const cut = [...(current ? [current] : []), ...(running ?? [])].sort((a, b) => a.iteration - b.iteration);
      for (const item of cut) {
        warnings.push(`iteration ${item.iteration} on ${item.taskId} did not finish (interrupted run); tasks.md decides what is done`);
        writer.recordInterrupted(item, data);
      }
      // The cut-short iterations' numbers are spent: the next run continues after them, never reuses them.
      const last = Math.max(rest.lastIteration, ...cut.map((item) => item.iteration));
      if (released.released.length > 0 || cut.length > 0) saveTracking({ ...rest, lastIteration: last });
      return warnings;
    },

    async recorded(iteration: number, taskId: string) {
      if (!resolve().ok) return false;
      const id = taskId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      // Under its number, or (several hosts) a later one its landing took, another host's entry holding this one.
      return [...(readText(paths().progress) ?? '').matchAll(new RegExp(`^## Iteration (\\d+) - [^\n]*\n- Task: ${id}\\b`, 'gm'))].some((match) => Number(match[1]) >= iteration);
    },

    async snapshot(): Promise<Snapshot> {
      const parsed = readTasks();
      return buildSnapshot(parsed, skippedIds(loadTracking(parsed)), waiting());
    },

    async claim(task: Task, info: IterationInfo) {
      const data = loadTracking(readTasks());
      const claim = { taskId: task.id, iteration: info.iteration, startedAt: iso() };
      if (info.worker === undefined) saveTracking({ ...data, current: claim });
      else saveTracking({ ...data, running: [...(data.running ?? []).filter((item) => item.taskId !== task.id), claim] });
    },

    async abandon(task: Task, info: IterationInfo, why: string) {
      const data = loadTracking(readTasks());
      const mine = (item: { taskId: string; iteration: number }): boolean => item.taskId === task.id && item.iteration === info.iteration;
      const cut = data.current && mine(data.current) ? data.current : data.running?.find(mine);
      if (!cut) return undefined;
      writer.recordInterrupted(cut, data, why);
      const { current, running, ...rest } = data;
      const still = running?.filter((item) => !mine(item));
      // The iteration's number is spent: the next run continues after it.
      saveTracking({ ...rest, ...(current && !mine(current) ? { current } : {}), ...(still?.length ? { running: still } : {}), lastIteration: Math.max(rest.lastIteration, info.iteration) });
      return `iteration ${info.iteration} on ${task.id} did not finish (${why}); tasks.md decides what is done`;
    },

    async prompt(task: Task, info: IterationInfo) {
      const p = paths();
      const parsed = readTasks();
      const found = parsed.tasks.find((item) => item.id === task.id);
      if (!found) throw new RalphError(`task ${task.id} is no longer in ${p.rel.tasks}`);
      const data = loadTracking(parsed);
      const skipped: SkippedNote[] = data.tasks.filter((item) => item.skipped).map((item) => ({ id: item.id, title: item.title, failures: item.consecutiveFailures }));
      const review = data.tasks.find((item) => item.id === task.id)?.review;
      const asked = waiting();
      const waitingNotes = parsed.tasks.filter((item) => asked.has(item.id) && !item.done).map((item) => ({ id: item.id, title: item.title }));
      const answers = answersBlock(answeredFor(ctx.root, { source: 'speckit', scope: scope(), taskId: task.id }));
      const block = currentTaskBlock({ parsed, task: found, skipped, feature: p.feature.name, tasksPath: p.rel.tasks, review, waiting: waitingNotes, answers });
      const file = templateFile();
      const template = readText(file);
      if (template === undefined) throw new RalphError(`prompt template ${file} cannot be read`, { hint: 'pass --template PATH or restore templates/ralph-prompt.md' });
      const values: TemplateValues = {
        FEATURE_NAME: p.feature.name,
        SPEC_PATH: p.rel.spec,
        PLAN_PATH: p.rel.plan,
        TASKS_PATH: p.rel.tasks,
        PROGRESS_PATH: p.rel.progress,
        ITERATION_NUMBER: String(info.iteration),
        MAX_ITERATIONS: String(info.maxIterations),
        CURRENT_TASK: block,
      };
      const rendered = renderTemplate(template, values);
      // A custom template without {CURRENT_TASK} still has to say which task, and which to leave alone.
      return template.includes('{CURRENT_TASK}') ? rendered : `${rendered.trimEnd()}\n\n## Current task\n\n${block}\n`;
    },

    agentEnv(): Record<string, string> {
      const result = resolve();
      if (!result.ok) return {};
      return { SPECIFY_FEATURE_DIRECTORY: result.feature.dir, SPECIFY_FEATURE: result.feature.name };
    },

    agentDefaults() {
      if (defaults) return defaults;
      const agent =
        agentFromInitOptions(readText(path.join(ctx.root, '.specify', 'init-options.json'))) ??
        agentFromFolders((dir) => {
          try {
            return readdirSync(path.join(ctx.root, dir));
          } catch {
            return undefined;
          }
        });
      defaults = agent ? { agent } : {};
      if (agent === 'copilot') {
        defaults.profile = COPILOT_PROFILE;
        if (!existsSync(path.join(ctx.root, COPILOT_PROFILE_FILE))) {
          ctx.warn(`${COPILOT_PROFILE_FILE} not found: copilot may not know the agent ${COPILOT_PROFILE}; run 'specify init --here --integration copilot' or pass --agent-profile NAME`);
        }
      }
      return defaults;
    },

    async lastIteration() {
      if (!resolve().ok) return 0;
      const p = paths();
      const fromLog = lastIterationNumber(readText(p.progress) ?? '');
      const fromTracking = parseTracking(readText(p.tracking), p.feature.name, p.rel.tasks, iso()).lastIteration;
      return Math.max(fromLog, fromTracking);
    },

    async settle(result: IterationResult, info: IterationInfo) {
      writer.settle(result, info);
    },

    workers: createSpeckitWorkers(state, waiting),
    converge: createSpeckitConverge(ctx, state, writer),
    hooks: createSpeckitHooks(ctx, state, writer),

    explainStuck(snapshot: Snapshot) {
      const p = paths();
      const parsed = readTasks();
      const skipped = new Set((snapshot.skipped ?? []).map((task) => task.id));
      return explainStuck(parsed, skipped, p.rel.tasks, new Set((snapshot.waiting ?? []).map((task) => task.id)));
    },

    words: { task: 'task', finished: 'checked off' },

    // The files ralph keeps the task state in (tasks.md, progress.txt, …): the same as the workers' state.
    bookkeepingFiles() {
      return resolve().ok ? source.workers.stateFiles() : [];
    },

    async brief(task: Task) {
      const p = paths();
      const parsed = readTasks();
      const found = parsed.tasks.find((item) => item.id === task.id);
      if (!found) return `### ${task.id} ${task.title}

(no longer in ${p.rel.tasks})`;
      return reviewBrief({ parsed, task: found, tasksPath: p.rel.tasks, specPath: p.rel.spec, planPath: p.rel.plan });
    },

    async reopen(task: Task, reasons: string, info: IterationInfo) {
      const p = paths();
      const parsed = readTasks();
      const found = parsed.tasks.find((item) => item.id === task.id);
      const text = readText(p.tasks);
      if (found && text !== undefined) {
        // The copies ticked with the task are opened with it, so the file reads as it did before.
        const ticked = (copiesByTask(parsed).get(found.id) ?? []).filter((copy) => copy.done);
        const opened = [found.line, ...ticked.map((copy) => copy.line)].reduce((current, line) => uncheckLine(current, line) ?? current, text);
        if (opened !== text) writeFileAtomic(p.tasks, opened);
      }
      const data = loadTracking(readTasks());
      saveTracking({ ...data, tasks: data.tasks.map((item) => (item.id === task.id ? { ...item, review: { iteration: info.iteration, reasons } } : item)) });
    },
  };
  return source;
}
