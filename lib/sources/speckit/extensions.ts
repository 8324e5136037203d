// Spec Kit's extension hooks as a project registers them in .specify/extensions.yml (Spec Kit's
// docs/reference/extensions.md, and what its /speckit.implement does with them):
//
//   hooks:
//     before_implement:
//     - extension: git
//       command: speckit.git.commit
//       enabled: true        # false: skipped; absent: enabled
//       optional: true       # true (Spec Kit's default): offered to a person; false: run automatically
//       prompt: Commit outstanding changes before implementation?
//       description: Auto-commit before implementation
//       condition: null      # non-empty: /speckit.implement skips it (left to Spec Kit's HookExecutor)
//
// Pure: the file's text in, the hooks of an event out, or one error naming the file and the line.
import { RalphError } from '../../errors.ts';
import { parseYaml, YamlError, type YamlNode } from './yaml.ts';

export const EXTENSIONS_FILE = '.specify/extensions.yml';

/** The events ralph runs: the ones around /speckit.implement. */
export type HookEvent = 'before_implement' | 'after_implement';
export const HOOK_EVENTS: readonly HookEvent[] = ['before_implement', 'after_implement'];

export interface Hook {
  event: HookEvent;
  /** The extension that registered it (`git`), when the file says. */
  extension?: string;
  /** The command id: `speckit.git.commit`. */
  command: string;
  optional: boolean;
  prompt?: string;
  description?: string;
  condition?: string;
  /** Its line in extensions.yml. */
  line: number;
}

/** The hooks of one event: those ralph runs (mandatory), those it lists (optional), those it leaves (a condition). */
export interface EventHooks {
  mandatory: Hook[];
  optional: Hook[];
  conditional: Hook[];
}

export type ProjectHooks = Record<HookEvent, EventHooks>;

const none = (): EventHooks => ({ mandatory: [], optional: [], conditional: [] });

/** The hooks of extensions.yml (`rel` names it in errors). Throws a RalphError `rel:line: why`. */
export function readExtensionHooks(text: string, rel: string): ProjectHooks {
  const fail = (line: number, why: string): never => {
    throw new RalphError(`${rel}:${line}: ${why}`, { hint: `fix ${rel} (Spec Kit writes it with 'specify extension add'), or move it aside` });
  };
  let root: YamlNode | null;
  try {
    root = parseYaml(text);
  } catch (error) {
    if (error instanceof YamlError) return fail(error.line, error.why);
    throw error;
  }
  const result: ProjectHooks = { before_implement: none(), after_implement: none() };
  if (root === null) return result;
  if (root.kind !== 'map') return fail(root.line, 'the file must be a mapping (installed:, settings:, hooks:)');
  const hooks = root.entries.get('hooks')?.value;
  if (!hooks || (hooks.kind === 'scalar' && hooks.value === null)) return result;
  if (hooks.kind !== 'map') return fail(hooks.line, '"hooks" must be a mapping of events (before_implement:, after_implement:, …)');
  for (const event of HOOK_EVENTS) {
    const listed = hooks.entries.get(event)?.value;
    if (!listed || (listed.kind === 'scalar' && listed.value === null)) continue;
    // Spec Kit accepts one hook written as a mapping as well as a list of them.
    const entries = listed.kind === 'seq' ? listed.items : [listed];
    entries.forEach((entry, index) => {
      const hook = readHook(entry, event, `hooks.${event}[${index}]`, fail);
      if (!hook) return;
      const kind = hook.condition ? 'conditional' : hook.optional ? 'optional' : 'mandatory';
      result[event][kind].push(hook);
    });
  }
  return result;
}

/** One entry; undefined when `enabled: false`. */
function readHook(node: YamlNode, event: HookEvent, where: string, fail: (line: number, why: string) => never): Hook | undefined {
  if (node.kind !== 'map') return fail(node.line, `${where} must be a mapping with a command`);
  const field = (name: string): YamlNode | undefined => node.entries.get(name)?.value;
  const text = (name: string): string | undefined => {
    const value = field(name);
    if (!value || (value.kind === 'scalar' && value.value === null)) return undefined;
    if (value.kind !== 'scalar' || typeof value.value === 'boolean') return fail(value.line, `${where}.${name} must be text`);
    return String(value.value);
  };
  const flag = (name: string, fallback: boolean): boolean => {
    const value = field(name);
    if (!value || (value.kind === 'scalar' && value.value === null)) return fallback;
    if (value.kind !== 'scalar' || typeof value.value !== 'boolean') return fail(value.line, `${where}.${name} must be true or false`);
    return value.value;
  };
  const command = text('command')?.trim();
  if (!command) return fail(node.line, `${where} has no command`);
  if (!/^[\w.:/-]+$/.test(command)) return fail(node.entries.get('command')!.line, `${where}.command "${command}" is not a command id (like speckit.git.commit)`);
  const enabled = flag('enabled', true);
  const optional = flag('optional', true);
  const condition = text('condition')?.trim();
  if (!enabled) return undefined;
  const extension = text('extension');
  const prompt = text('prompt');
  const description = text('description');
  return { event, command, optional, line: node.line, ...(extension ? { extension } : {}), ...(prompt ? { prompt } : {}), ...(description ? { description } : {}), ...(condition ? { condition } : {}) };
}

/** `speckit.git.commit (git)`: how lines and records name a hook. */
export function hookName(hook: Pick<Hook, 'command' | 'extension'>): string {
  return hook.extension ? `${hook.command} (${hook.extension})` : hook.command;
}

/** The key a passed hook is recorded under: the event and the command. */
export function hookKey(hook: Pick<Hook, 'event' | 'command'>): string {
  return `${hook.event}:${hook.command}`;
}
