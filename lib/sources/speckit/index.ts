// Spec Kit mode: specs/<feature>/tasks.md as a task source, with progress.txt and ralph-tasks.json beside it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import dayjs from 'dayjs';
import { formatDuration } from '../../duration.ts';
import { RalphError } from '../../errors.ts';
import { appendText, writeFileAtomic } from '../../fs-atomic.ts';
import { compactAfterAppend } from '../../progress/compact.ts';
import type { IterationInfo, IterationResult, Snapshot, SourceContext, Task, TaskSource } from '../types.ts';
import { agentFromFolders, agentFromInitOptions, COPILOT_PROFILE, COPILOT_PROFILE_FILE } from './agent.ts';
import { countUnchecked, parseTasksMd, type ParsedTasks } from './parse.ts';
import {
  ENTRY_HEADING,
  extractLearnings,
  iterationEntry,
  lastIterationNumber,
  parseTracking,
  progressHeader,
  PROGRESS_FILE,
  recordIteration,
  releaseSkipped,
  sessionHeader,
  SKIP_AFTER,
  syncTracking,
  TRACKING_FILE,
  type Tracking,
} from './progress.ts';
import { listFeatures, resolveFeatureIn, type Resolution, type ResolvedFeature, type ResolvedVia } from './resolve.ts';
import { buildSnapshot, currentTaskBlock, explainStuck, type SkippedNote } from './select.ts';
import { renderTemplate, type TemplateValues } from './template.ts';

export const SPECKIT_MAX_ITERATIONS = 10;
/** A project's own template, used when no `template` option is given. */
export const PROJECT_TEMPLATE = '.specify/templates/ralph-prompt.md';
export const DEFAULT_TEMPLATE = fileURLToPath(new URL('../../../templates/ralph-prompt.md', import.meta.url));

const VIA_TEXT: Record<ResolvedVia, string> = {
  option: '--feature',
  SPECIFY_FEATURE_DIRECTORY: 'SPECIFY_FEATURE_DIRECTORY',
  'feature.json': '.specify/feature.json',
  SPECIFY_FEATURE: 'SPECIFY_FEATURE',
  branch: 'the branch name',
  'only feature': 'the only feature with a tasks.md',
};

function isDir(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Why an existing file cannot be read (a folder in its place, no permission), or undefined. */
function unreadable(file: string): string | undefined {
  try {
    readFileSync(file);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? undefined : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
  }
}

/** A Spec Kit project: a `.specify/` folder or a `specs/*\/tasks.md`. */
export function detectSpeckit(root: string): boolean {
  return isDir(path.join(root, '.specify')) || listFeatures(root).some((feature) => feature.hasTasks);
}

interface FeaturePaths {
  feature: ResolvedFeature;
  tasks: string;
  spec: string;
  plan: string;
  progress: string;
  tracking: string;
  checklists: string;
  /** The same, relative to the root, for prompts and messages. */
  rel: { tasks: string; spec: string; plan: string; progress: string; tracking: string };
}

function pathsOf(feature: ResolvedFeature): FeaturePaths {
  const at = (name: string): string => path.join(feature.dir, name);
  const rel = (name: string): string => `${feature.rel}/${name}`;
  return {
    feature,
    tasks: at('tasks.md'),
    spec: at('spec.md'),
    plan: at('plan.md'),
    progress: at(PROGRESS_FILE),
    tracking: at(TRACKING_FILE),
    checklists: at('checklists'),
    rel: { tasks: rel('tasks.md'), spec: rel('spec.md'), plan: rel('plan.md'), progress: rel(PROGRESS_FILE), tracking: rel(TRACKING_FILE) },
  };
}

/** Spec Kit mode as a task source. Everything is read from `ctx.root`; nothing is cached but the feature and the tracking data. */
export function createSpeckitSource(ctx: SourceContext): TaskSource {
  const option = (name: string): string | undefined => {
    const value = ctx.config.extra.get(name);
    return typeof value === 'string' && value.trim() ? value.trim() : undefined;
  };
  let resolution: Resolution | undefined;
  let tracking: Tracking | undefined;
  let sessionWritten = false;
  let defaults: { agent?: string; profile?: string } | undefined;

  const resolve = (): Resolution => (resolution ??= resolveFeatureIn(ctx.root, { option: option('feature'), env: ctx.deps.env, branch: ctx.branch }));
  const paths = (): FeaturePaths => {
    const result = resolve();
    if (!result.ok) throw new RalphError(result.problem);
    return pathsOf(result.feature);
  };
  const stamp = (): string => dayjs(ctx.deps.now()).format('YYYY-MM-DD HH:mm:ss');
  const iso = (): string => new Date(ctx.deps.now()).toISOString();

  let lastText: string | undefined;
  let lastParsed: ParsedTasks | undefined;
  const readTasks = (): ParsedTasks => {
    const { tasks, rel } = paths();
    const text = readText(tasks);
    if (text === undefined) {
      const why = unreadable(tasks);
      throw new RalphError(why ? `${rel.tasks} cannot be read: ${why}` : `${rel.tasks} not found`, { hint: 'run /speckit.tasks first to generate the task list' });
    }
    // tasks.md is read several times an iteration; parse it again only when its text changed.
    if (text !== lastText) {
      lastParsed = parseTasksMd(text);
      lastText = text;
    }
    const parsed = lastParsed!;
    // check() refuses a list without tasks, so an empty one now was damaged during the run: never "all done".
    if (parsed.tasks.length === 0) {
      throw new RalphError(`${rel.tasks} lists no tasks any more (lines like "- [ ] T001 Description"): it was emptied or damaged during the run`, {
        hint: `restore it (git diff ${rel.tasks}) and start ralph again`,
      });
    }
    return parsed;
  };

  const loadTracking = (parsed: ParsedTasks): Tracking => {
    const p = paths();
    tracking ??= parseTracking(readText(p.tracking), p.feature.name, p.rel.tasks, iso());
    tracking = syncTracking(tracking, parsed, iso());
    return tracking;
  };
  const saveTracking = (data: Tracking): void => {
    tracking = data;
    writeFileAtomic(paths().tracking, `${JSON.stringify(data, null, 2)}\n`);
  };
  const skippedIds = (data: Tracking): Set<string> => new Set(data.tasks.filter((task) => task.skipped).map((task) => task.id));

  const templateFile = (): string => {
    const given = option('template');
    if (given) return path.resolve(ctx.root, given);
    const project = path.join(ctx.root, PROJECT_TEMPLATE);
    return existsSync(project) ? project : DEFAULT_TEMPLATE;
  };

  const warnChecklists = (dir: string, relDir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => name.endsWith('.md')).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const open = countUnchecked(readText(path.join(dir, name)) ?? '');
      if (open > 0) {
        ctx.warn(`${relDir}/checklists/${name} has ${open} unchecked item${open === 1 ? '' : 's'}: /speckit.implement would stop to ask about them; ralph goes on without asking`);
      }
    }
  };

  /** Appends blocks (each ending in a newline) with one blank line between them and before them. */
  const appendProgress = (entry: string, info: IterationInfo): void => {
    const p = paths();
    if (!existsSync(p.progress)) writeFileAtomic(p.progress, progressHeader({ feature: p.feature.name, tasksPath: p.rel.tasks, started: stamp() }));
    const blocks = [entry];
    if (!sessionWritten) blocks.unshift(sessionHeader({ sessionId: info.sessionId, started: stamp(), firstIteration: info.iteration }));
    const existing = readText(p.progress) ?? '';
    const lead = existing === '' || existing.endsWith('\n\n') ? '' : existing.endsWith('\n') ? '\n' : '\n\n';
    appendText(p.progress, lead + blocks.join('\n'));
    sessionWritten = true;
    compactAfterAppend(p.progress, ENTRY_HEADING, ctx.config.extra, ctx.warn);
  };

  /** Notes an iteration a killed run left unfinished in progress.txt, once, under that run's session. */
  const recordInterrupted = (current: NonNullable<Tracking['current']>, data: Tracking): void => {
    const p = paths();
    if (!existsSync(p.progress)) writeFileAtomic(p.progress, progressHeader({ feature: p.feature.name, tasksPath: p.rel.tasks, started: stamp() }));
    const existing = readText(p.progress) ?? '';
    if (lastIterationNumber(existing) >= current.iteration) return;
    const entry = iterationEntry({
      iteration: current.iteration,
      timestamp: stamp(),
      task: { id: current.taskId, title: data.tasks.find((task) => task.id === current.taskId)?.title ?? '' },
      status: 'interrupted',
      reason: `the run stopped before this iteration finished (started ${current.startedAt}; crash, kill or power loss); tasks.md decides what is done`,
      tasksDone: [],
      filesChanged: [],
    });
    const lead = existing === '' || existing.endsWith('\n\n') ? '' : existing.endsWith('\n') ? '\n' : '\n\n';
    appendText(p.progress, lead + entry);
  };

  const source: TaskSource = {
    name: 'speckit',
    defaultMaxIterations: SPECKIT_MAX_ITERATIONS,

    describe() {
      const result = resolve();
      if (!result.ok) return 'Spec Kit feature (unresolved)';
      return `Spec Kit feature ${result.feature.name} (${result.feature.rel}/tasks.md, chosen by ${VIA_TEXT[result.feature.via]})`;
    },

    async check() {
      const result = resolve();
      if (!result.ok) return [result.problem];
      const p = pathsOf(result.feature);
      const problems: string[] = [];
      const text = readText(p.tasks);
      const why = text === undefined ? unreadable(p.tasks) : undefined;
      if (why) {
        problems.push(`${p.rel.tasks} cannot be read: ${why}; put the task list from /speckit.tasks there`);
      } else if (text === undefined) {
        problems.push(`${p.rel.tasks} not found: run /speckit.tasks first to generate the task list`);
      } else if (!text.trim()) {
        problems.push(`${p.rel.tasks} is empty: run /speckit.tasks first to generate the task list`);
      } else {
        const parsed = parseTasksMd(text);
        if (parsed.tasks.length === 0) problems.push(`${p.rel.tasks} lists no tasks (lines like "- [ ] T001 Description"): run /speckit.tasks first`);
        for (const warning of parsed.warnings) ctx.warn(`${p.rel.tasks}: ${warning}`);
      }
      if (!existsSync(p.spec)) problems.push(`${p.rel.spec} not found: run /speckit.specify first`);
      if (!existsSync(p.plan)) problems.push(`${p.rel.plan} not found: run /speckit.plan first`);
      const given = option('template');
      if (given && readText(path.resolve(ctx.root, given)) === undefined) {
        problems.push(`prompt template ${given} (from --template) cannot be read: give the path of a file, relative to ${ctx.root}`);
      }
      warnChecklists(p.checklists, result.feature.rel);
      return problems;
    },

    async recover() {
      const data = loadTracking(readTasks());
      const warnings: string[] = [];
      const released = releaseSkipped(data);
      if (released.released.length > 0) {
        warnings.push(`tasks skipped by an earlier run get another chance: ${released.released.join(', ')}`);
      }
      const { current, ...rest } = released.tracking;
      if (current) {
        warnings.push(`iteration ${current.iteration} on ${current.taskId} did not finish (interrupted run); tasks.md decides what is done`);
        recordInterrupted(current, data);
      }
      // The cut-short iteration's number is spent: the next run continues after it, never reuses it.
      if (released.released.length > 0 || current) saveTracking(current ? { ...rest, lastIteration: Math.max(rest.lastIteration, current.iteration) } : rest);
      return warnings;
    },

    async snapshot(): Promise<Snapshot> {
      const parsed = readTasks();
      return buildSnapshot(parsed, skippedIds(loadTracking(parsed)));
    },

    async claim(task: Task, info: IterationInfo) {
      const data = loadTracking(readTasks());
      saveTracking({ ...data, current: { taskId: task.id, iteration: info.iteration, startedAt: iso() } });
    },

    async prompt(task: Task, info: IterationInfo) {
      const p = paths();
      const parsed = readTasks();
      const found = parsed.tasks.find((item) => item.id === task.id);
      if (!found) throw new RalphError(`task ${task.id} is no longer in ${p.rel.tasks}`);
      const data = loadTracking(parsed);
      const skipped: SkippedNote[] = data.tasks.filter((item) => item.skipped).map((item) => ({ id: item.id, title: item.title, failures: item.consecutiveFailures }));
      const block = currentTaskBlock({ parsed, task: found, skipped, feature: p.feature.name, tasksPath: p.rel.tasks });
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
      const parsed = readTasks();
      const recorded = recordIteration(loadTracking(parsed), { iteration: result.iteration, taskId: result.task.id, kind: result.kind, tasksDone: result.tasksDone });
      const data = syncTracking(recorded.tracking, parsed, iso());
      const remaining = data.summary.open;
      const failures = recorded.consecutiveFailures;
      let reason: string | undefined;
      if (recorded.newlySkipped) {
        reason = `${result.reason}; ${result.task.id} failed ${failures} iterations in a row, so it is skipped and later iterations leave it alone`;
        ctx.warn(`${result.task.id} failed ${failures} iterations in a row: skipped; fix it by hand and check it off, or run ralph again to retry it`);
      } else if (result.kind !== 'pass') {
        reason = `${result.reason} (${failures} of ${SKIP_AFTER} failed iterations in a row before the task is skipped)`;
      }
      const note =
        result.claimedComplete && remaining > 0 ? `the agent claimed completion, but ${remaining} task${remaining === 1 ? '' : 's'} remain open in tasks.md: premature promise, not accepted` : undefined;
      const entry = iterationEntry({
        iteration: result.iteration,
        timestamp: stamp(),
        task: { id: result.task.id, title: result.task.title },
        status: result.kind === 'pass' ? 'completed' : recorded.newlySkipped ? 'skipped' : 'failed',
        reason,
        tasksDone: result.tasksDone,
        filesChanged: result.filesChanged,
        learnings: extractLearnings(result.agentText),
        commit: result.commit,
        duration: formatDuration(result.durationMs),
        note,
      });
      appendProgress(entry, info);
      saveTracking(data);
    },

    explainStuck(snapshot: Snapshot) {
      const p = paths();
      const parsed = readTasks();
      const skipped = new Set((snapshot.skipped ?? []).map((task) => task.id));
      return explainStuck(parsed, skipped, p.rel.tasks);
    },
  };
  return source;
}
