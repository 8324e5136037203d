import { UsageError } from '../errors.ts';
import { COMMAND_FLAGS, COMMAND_POSITIONALS, COMMANDS, OPTIONS, type CommandName, type OptionSpec } from '../config/options.ts';
import { convertValue, type OptionValue } from '../config/values.ts';

export interface ParsedArgv {
  command: CommandName;
  /** Values set on the command line, by option name. */
  flags: Map<string, OptionValue>;
  /** Positional words after the command (e.g. the session for `report`). */
  positionals: string[];
  /** Everything after `--`, passed through to the agent CLI. */
  passthrough: string[];
}

function lookup(name: string): OptionSpec {
  const spec = OPTIONS.find((option) => option.name === name);
  if (!spec) throw new UsageError(`unknown option --${name}`);
  return spec;
}

function lookupShort(letter: string): OptionSpec {
  const spec = OPTIONS.find((option) => option.short === letter);
  if (!spec) throw new UsageError(`unknown option -${letter}`);
  return spec;
}

/** Parses argv (without node and script) into a command, typed flag values and passthrough args. */
export function parseArgv(argv: readonly string[]): ParsedArgv {
  const flags = new Map<string, OptionValue>();
  const positionals: string[] = [];
  let passthrough: string[] = [];
  let command: CommandName | undefined;

  const set = (spec: OptionSpec, raw: unknown, shown: string): void => {
    const value = convertValue(spec, raw, shown);
    if (spec.kind === 'list') {
      const previous = flags.get(spec.name);
      flags.set(spec.name, [...(Array.isArray(previous) ? previous : []), ...(value as string[])]);
    } else {
      flags.set(spec.name, value);
    }
  };

  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (arg === '--') {
      passthrough = argv.slice(index + 1);
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const inline = eq === -1 ? undefined : arg.slice(eq + 1);
      if (name.startsWith('no-') && inline === undefined) {
        const negated = OPTIONS.find((option) => option.name === name.slice(3) && option.kind === 'boolean');
        if (negated) {
          flags.set(negated.name, false);
          continue;
        }
      }
      const spec = lookup(name);
      if (spec.kind === 'boolean') {
        set(spec, inline ?? true, `--${name}`);
        continue;
      }
      const value = inline ?? argv[index + 1];
      if (value === undefined || (inline === undefined && value.startsWith('--'))) {
        throw new UsageError(`option --${name} needs a value${spec.arg ? ` (${spec.arg})` : ''}`);
      }
      if (inline === undefined) index += 1;
      set(spec, value, `--${name}`);
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      const spec = lookupShort(arg.slice(1, 2));
      if (spec.kind === 'boolean' && arg.length === 2) {
        flags.set(spec.name, true);
        continue;
      }
      const value = arg.length > 2 ? arg.slice(2) : argv[index + 1];
      if (value === undefined) throw new UsageError(`option -${spec.short} needs a value`);
      if (arg.length === 2) index += 1;
      set(spec, value, `-${spec.short}`);
      continue;
    }
    if (command === undefined && positionals.length === 0) {
      if (!(COMMANDS as readonly string[]).includes(arg)) {
        throw new UsageError(`unknown command ${JSON.stringify(arg)}`, `commands: ${COMMANDS.join(', ')}`);
      }
      command = arg as CommandName;
      continue;
    }
    positionals.push(arg);
  }
  const parsed = { command: command ?? 'run', flags, positionals, passthrough };
  checkCommand(parsed);
  return parsed;
}

/** Refuses a flag or a word the command would ignore: `ralph run --watch`, `ralph status --parallel 2`. */
function checkCommand(parsed: ParsedArgv): void {
  const { command } = parsed;
  const own = COMMAND_FLAGS[command];
  const elsewhere = (name: string): string[] => Object.entries(COMMAND_FLAGS).filter(([, names]) => names.includes(name)).map(([other]) => other);
  for (const name of parsed.flags.keys()) {
    if (name === 'help' || name === 'version') continue;
    const others = elsewhere(name);
    const read = own ? own.includes(name) : !RUN_IGNORES.has(name);
    if (read) continue;
    const where = own === undefined || others.length > 0 ? `it is an option of ${(others.length > 0 ? others : ['run']).map((other) => `'ralph ${other}'`).join(', ')}` : "it is an option of 'ralph run'";
    throw new UsageError(`--${name} is not an option of 'ralph ${command}': ${where}`, `run 'ralph --help' for the options of each command`);
  }
  const words = COMMAND_POSITIONALS[command];
  if (parsed.positionals.length > (words?.most ?? 0)) {
    throw new UsageError(`'ralph ${command}' takes ${words ? `at most ${words.most} argument${words.most === 1 ? '' : 's'} (${words.what})` : 'no arguments'}, got: ${parsed.positionals.join(' ')}`);
  }
}

/** Options only other commands read. */
const RUN_IGNORES = new Set(['watch', 'now', 'port', 'host', 'force']);
