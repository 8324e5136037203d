// A Spec Kit project's extension hooks around the work: the mandatory before_implement hooks pass before
// the first task, the after_implement ones once every task is done, each as an agent pass of its own that
// runs the hook's command (as /speckit.implement would). A hook passes once per cycle of work: a run cut
// short, and the run that resumes it, never run a passed hook again (ralph-tasks.json keeps them).
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { HookPassInfo, HookSupport, SourceContext } from '../types.ts';
import { EXTENSIONS_FILE, hookKey, hookName, readExtensionHooks, type Hook, type HookEvent, type ProjectHooks } from './extensions.ts';
import { readText } from './paths.ts';
import type { ProgressWriter } from './progress-writer.ts';
import type { FeatureState } from './state.ts';

const EVENT: Record<HookPassInfo['when'], HookEvent> = { before: 'before_implement', after: 'after_implement' };

/** Where agents keep Spec Kit's commands as skills (`speckit-git-commit/`), invoked by the skill's name. */
const SKILL_DIRS: Record<string, readonly string[]> = { claude: ['.claude/skills'], codex: ['.agents/skills'], cursor: ['.cursor/skills'] };

/**
 * How `agent` invokes a hook's command, as Spec Kit renders it: a skill by its name (`$speckit-git-commit`
 * for codex, `/speckit-git-commit` for the others) when the project installed it as one, else
 * `/speckit.git.commit`.
 */
export function hookInvocation(root: string, agent: string, command: string): string {
  const skill = command.startsWith('speckit.') ? `speckit-${command.slice('speckit.'.length).replace(/\./g, '-')}` : undefined;
  if (skill && (SKILL_DIRS[agent] ?? []).some((dir) => existsSync(path.join(root, dir, skill)))) return agent === 'codex' ? `$${skill}` : `/${skill}`;
  return `/${command}`;
}

/** The project's hooks, read from .specify/extensions.yml (none when the file is absent). Throws a RalphError naming the line. */
export function projectHooks(root: string): ProjectHooks | undefined {
  const text = readText(path.join(root, EXTENSIONS_FILE));
  return text === undefined ? undefined : readExtensionHooks(text, EXTENSIONS_FILE);
}

function info(hook: Hook, when: HookPassInfo['when']): HookPassInfo {
  const title = `${hook.extension ? `${hook.extension} extension's hook` : 'extension hook'}${hook.description ? `: ${hook.description}` : ''}`;
  return { when, event: hook.event, command: hook.command, ...(hook.extension ? { extension: hook.extension } : {}), ...(hook.description ? { description: hook.description } : {}), name: `${hook.event} ${hookName(hook)}`, title, key: hookKey(hook) };
}

/** The hooks of a Spec Kit feature (none when the project has no .specify/extensions.yml). */
export function createSpeckitHooks(ctx: SourceContext, state: FeatureState, writer: ProgressWriter): HookSupport {
  let cached: { text: string | undefined; hooks: ProjectHooks | undefined } | undefined;
  const hooks = (): ProjectHooks | undefined => {
    const text = readText(path.join(ctx.root, EXTENSIONS_FILE));
    if (!cached || cached.text !== text) cached = { text, hooks: text === undefined ? undefined : readExtensionHooks(text, EXTENSIONS_FILE) };
    return cached.hooks;
  };
  const tracking = () => state.loadTracking(state.readTasks());

  return {
    pending(when) {
      const all = hooks()?.[EVENT[when]].mandatory ?? [];
      if (all.length === 0) return [];
      let data = tracking();
      if (when === 'before' && data.hooks?.closed) {
        data = { ...data, hooks: { passed: [], closed: false } };
        state.saveTracking(data);
      }
      const passed = new Set(data.hooks?.passed ?? []);
      return all.filter((hook) => !passed.has(hookKey(hook))).map((hook) => info(hook, when));
    },

    prompt(hook, agent) {
      return hookInvocation(ctx.root, agent, hook.command);
    },

    record(hook, ok, reason, iteration) {
      writer.recordHook(hook, ok, reason, iteration);
      if (!ok) return;
      const data = tracking();
      const passed = [...new Set([...(data.hooks?.passed ?? []), hook.key])];
      const after = (hooks()?.after_implement.mandatory ?? []).map(hookKey);
      const closed = hook.when === 'after' && after.every((key) => passed.includes(key));
      state.saveTracking({ ...data, hooks: { passed, closed } });
    },

    describe(agent) {
      const all = hooks();
      if (!all) return [];
      const lines: string[] = [];
      const list = (items: readonly Hook[], show: (hook: Hook) => string): string => items.map(show).join(', ');
      const passed = new Set(tracking().hooks?.passed ?? []);
      const closed = tracking().hooks?.closed === true;
      for (const [when, text] of [['before', 'before the first task'], ['after', 'once every task is done']] as const) {
        const event = all[EVENT[when]];
        if (event.mandatory.length > 0) {
          const done = (hook: Hook): string => (passed.has(hookKey(hook)) && !(when === 'before' && closed) ? ' (passed in this cycle: not run again)' : '');
          lines.push(`hooks ${EVENT[when]} (${EXTENSIONS_FILE}), each an agent pass ${text}: ${list(event.mandatory, (hook) => `${hookInvocation(ctx.root, agent, hook.command)}${hook.extension ? ` (${hook.extension})` : ''}${done(hook)}`)}`);
        }
        if (event.optional.length > 0) lines.push(`hooks ${EVENT[when]}, optional (not run by ralph; run them yourself): ${list(event.optional, (hook) => `/${hook.command}${hook.prompt ? ` "${hook.prompt}"` : ''}`)}`);
        if (event.conditional.length > 0) lines.push(`hooks ${EVENT[when]} with a condition (not run, as /speckit.implement does not): ${list(event.conditional, (hook) => `/${hook.command} if ${hook.condition}`)}`);
      }
      return lines;
    },
  };
}
