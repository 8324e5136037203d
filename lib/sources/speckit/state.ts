// What a Spec Kit source keeps between calls: the resolved feature, the last parse of tasks.md and the
// tracking data. Everything else is read from `ctx.root` each time.
import dayjs from 'dayjs';
import { RalphError } from '../../errors.ts';
import { writeFileAtomic } from '../../repo/fs-atomic.ts';
import type { SourceContext } from '../types.ts';
import { parseTasksMd, type ParsedTasks } from './parse.ts';
import { pathsOf, readText, unreadable, type FeaturePaths } from './paths.ts';
import { parseTracking, syncTracking, type Tracking } from './progress.ts';
import { resolveFeatureIn, type Resolution } from './resolve.ts';

export interface FeatureState {
  /** A non-empty string option from the config, trimmed. */
  option(name: string): string | undefined;
  resolve(): Resolution;
  /** The feature's files; throws when no feature could be resolved. */
  paths(): FeaturePaths;
  /** The local time, as progress.txt shows it. */
  stamp(): string;
  iso(): string;
  /** tasks.md, parsed; throws when it is missing, unreadable or lists no tasks. */
  readTasks(): ParsedTasks;
  loadTracking(parsed: ParsedTasks): Tracking;
  saveTracking(data: Tracking): void;
}

/** The cached state of one Spec Kit source. */
export function createFeatureState(ctx: SourceContext): FeatureState {
  const option = (name: string): string | undefined => {
    const value = ctx.config.extra.get(name);
    return typeof value === 'string' && value.trim() ? value.trim() : undefined;
  };
  let resolution: Resolution | undefined;
  let tracking: Tracking | undefined;

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

  /** ralph-tasks.json's text as this source last read or wrote it. */
  let trackingText: string | undefined;
  const loadTracking = (parsed: ParsedTasks): Tracking => {
    const p = paths();
    // Read again when the file changed under this source: another host's landing (--remote) brought the
    // main worktree its record, whose tasks a stale copy here would overwrite.
    const text = readText(p.tracking);
    if (tracking === undefined || text !== trackingText) {
      tracking = parseTracking(text, p.feature.name, p.rel.tasks, iso());
      trackingText = text;
    }
    tracking = syncTracking(tracking, parsed, iso());
    return tracking;
  };
  const saveTracking = (data: Tracking): void => {
    tracking = data;
    trackingText = `${JSON.stringify(data, null, 2)}\n`;
    writeFileAtomic(paths().tracking, trackingText);
  };

  return { option, resolve, paths, stamp, iso, readTasks, loadTracking, saveTracking };
}
