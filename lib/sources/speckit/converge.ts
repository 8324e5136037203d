// Converge passes (Spec Kit 1.0's /speckit.converge): once every task is ticked, a fresh agent reads the
// spec, the plan and tasks.md against the code and either appends the unbuilt work to tasks.md as new open
// tasks, or answers "Converged" and changes nothing. A pass is judged by the source, not by the agent's
// words: pure functions here, the source wires them to its files.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { RalphError } from '../../errors.ts';
import type { ConvergeSupport, ConvergeVerdict, SourceContext } from '../types.ts';
import { parseTasksMd } from './parse.ts';
import { readText } from './paths.ts';
import type { ProgressWriter } from './progress-writer.ts';
import type { FeatureState } from './state.ts';
import { renderTemplate } from './template.ts';
import { packageFile } from '../../package-files.ts';

export const CONVERGE_TEMPLATE = packageFile('templates/converge-prompt.md');

/**
 * What a pass did: `appended` new open tasks (worked like any other); `converged`: nothing changed and the
 * answer says so; `silent`: nothing changed and no such answer (proves nothing); `broke`: anything but
 * appending (an existing line edited, code touched).
 */
export type { ConvergeVerdict } from '../types.ts';

/** A converged answer: a line of the final answer that starts with it (`✅ Converged`, `**Converged**: …`), not a question. */
const CONVERGED = /^[\s>*_#-]*(?:✅\s*)?[*_]*converged\b(?![ \t]*\?)/im;

/** Whether the agent's final answer says the feature converged. */
export function saysConverged(answer: string): boolean {
  return CONVERGED.test(answer);
}

/**
 * Judges one pass from tasks.md before and after it, the other paths it changed (tasks.md and ralph's own
 * state aside) and the agent's final answer. Only appending to tasks.md is allowed; only open task lines
 * with new ids count as found work.
 */
export function judgeConvergePass(input: { before: string; after: string; otherChanges: readonly string[]; answer: string; tasksPath: string }): ConvergeVerdict {
  const { before, after } = input;
  if (input.otherChanges.length > 0) {
    return { kind: 'broke', reason: `a converge pass may only append to ${input.tasksPath}, but it changed ${input.otherChanges.slice(0, 5).join(', ')}${input.otherChanges.length > 5 ? ` and ${input.otherChanges.length - 5} more` : ''}` };
  }
  if (after === before) {
    return saysConverged(input.answer) ? { kind: 'converged' } : { kind: 'silent', reason: 'the converge pass changed nothing and did not answer "Converged"' };
  }
  const kept = before.endsWith('\n') || before === '' ? before : `${before}\n`;
  if (!after.startsWith(kept)) {
    const line = firstDifferentLine(before, after);
    return { kind: 'broke', reason: `a converge pass may only append to ${input.tasksPath}, but it changed line ${line} (${JSON.stringify(before.split('\n')[line - 1]?.trim().slice(0, 80) ?? '')})` };
  }
  const old = new Set(parseTasksMd(before).tasks.map((task) => task.writtenId));
  const added = parseTasksMd(after).tasks.filter((task) => !old.has(task.writtenId));
  const ticked = added.filter((task) => task.done);
  if (ticked.length > 0) return { kind: 'broke', reason: `a converge pass appends open tasks, but ${ticked.map((task) => task.id).join(', ')} came ticked` };
  if (added.length === 0) {
    return saysConverged(input.answer) ? { kind: 'converged' } : { kind: 'silent', reason: `the converge pass appended to ${input.tasksPath} but no new task (an id like T042 on an open checkbox line)` };
  }
  return { kind: 'appended', tasks: added.map((task) => task.id) };
}

function firstDifferentLine(before: string, after: string): number {
  const a = before.split('\n');
  const b = after.split('\n');
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return index + 1;
  return a.length;
}

/** Where each agent CLI keeps Spec Kit's commands (reference/task-sources.md): a converge command there is used. */
const COMMAND_DIRS: Record<string, readonly string[]> = {
  claude: ['.claude/commands', '.claude/skills'],
  copilot: ['.github/prompts', '.github/agents'],
  gemini: ['.gemini/commands'],
  codex: ['.agents/skills', '.codex/prompts'],
  opencode: ['.opencode/command', '.opencode/commands'],
  amp: ['.agents/commands'],
  cursor: ['.cursor/commands', '.cursor/skills'],
};
const COMMAND_NAMES = ['speckit.converge.md', 'speckit.converge.prompt.md', 'speckit.converge.agent.md', 'speckit.converge.toml', 'speckit.converge', 'speckit-converge'];

/** The project's own `/speckit.converge` for `agent`, when its Spec Kit installed one: the file or folder. */
export function projectConvergeCommand(root: string, agent: string): string | undefined {
  for (const dir of COMMAND_DIRS[agent] ?? []) {
    for (const name of COMMAND_NAMES) {
      const file = path.join(dir, name);
      if (existsSync(path.join(root, file))) return file;
    }
  }
  return undefined;
}

/** The next free task id after the highest one of tasks.md: `T043` after `T042` (at least three digits). */
export function nextTaskId(text: string): string {
  let highest = 0;
  for (const task of parseTasksMd(text).tasks) highest = Math.max(highest, Number(/^T(\d+)/.exec(task.writtenId)?.[1] ?? 0));
  return `T${String(highest + 1).padStart(3, '0')}`;
}

/** A Spec Kit feature's converge passes, on its tasks.md, progress.txt and ralph-tasks.json. */
export function createSpeckitConverge(ctx: SourceContext, state: FeatureState, writer: ProgressWriter): ConvergeSupport {
  const tasksText = (): string => readText(state.paths().tasks) ?? '';
  return {
    resumed() {
      const cycle = state.loadTracking(state.readTasks()).converge;
      return cycle?.open ? cycle.passes : 0;
    },

    prompt(pass, maxPasses, info, agent) {
      const own = projectConvergeCommand(ctx.root, agent);
      if (own) return { text: '/speckit.converge', via: `the project's /speckit.converge (${own})` };
      const template = readText(CONVERGE_TEMPLATE);
      if (template === undefined) throw new RalphError(`prompt template ${CONVERGE_TEMPLATE} cannot be read`, { hint: 'restore templates/converge-prompt.md' });
      const p = state.paths();
      const text = tasksText();
      const values = { FEATURE_NAME: p.feature.name, SPEC_PATH: p.rel.spec, PLAN_PATH: p.rel.plan, TASKS_PATH: p.rel.tasks, PROGRESS_PATH: p.rel.progress, ITERATION_NUMBER: String(info.iteration), MAX_ITERATIONS: String(info.maxIterations), CONVERGE_PASS: String(pass), MAX_CONVERGE: String(maxPasses), NEXT_TASK_ID: nextTaskId(text) };
      return { text: renderTemplate(template, values), via: "ralph's templates/converge-prompt.md" };
    },

    baseline: tasksText,

    judge(baseline, otherChanges, answer) {
      return judgeConvergePass({ before: baseline, after: tasksText(), otherChanges, answer, tasksPath: state.paths().rel.tasks });
    },

    record(pass, maxPasses, verdict, info) {
      writer.recordConverge({ number: pass, of: maxPasses }, verdict, info);
    },

    close(converged) {
      const data = state.loadTracking(state.readTasks());
      state.saveTracking({ ...data, converge: { passes: data.converge?.passes ?? 0, open: false, converged } });
    },
  };
}
