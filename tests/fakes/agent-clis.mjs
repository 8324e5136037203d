// What each real agent CLI accepts on its command line, and how it refuses the rest, for the fake agent
// (tests/fakes/fake-agent.mjs) to behave alike: an adapter that sends a flag the real CLI rejects fails the
// tests instead of passing against a fake that took anything.
//
// Sources: ../../../shared/reference/agent-clis.md (the flags it names), ../../../shared/recordings/ (the
// refusals it recorded: claude-noverbose.err, claude-agent-nosuch.err, gemini-notrust.err) and the flags
// ralph's adapters send today (lib/agents/*.ts: the isolation flags are the CLIs' own, from their docs).
// A flag not listed here is refused: when an adapter needs a new one, add it with where it comes from.
// Values are not checked, only which flags come and which must come together.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const recordings = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'recordings');
const recorded = (file) => readFileSync(path.join(recordings, file), 'utf8');

/**
 * Commander's refusal, exit 1: `error: unknown option '--cwd'` (Claude Code, as users reported it in
 * anthropics/claude-code#7333; Copilot adds its help hint, github/copilot-cli#1399). Not in the recordings.
 */
const commander = (after = '') => (flag) => ({ stderr: `error: unknown option '${flag}'\n${after}`, exit: 1 });

/**
 * For the CLIs whose refusal of an unknown flag is not recorded (opencode, Amp, Cursor): a refusal that says
 * it is the fake's, rather than a text the real CLI may not print.
 */
const unrecorded = (name) => (flag) => ({ stderr: `fake-agent: ${name} refuses ${flag}: not a flag it is known to accept (tests/fakes/agent-clis.mjs; the real refusal text is not recorded)\n`, exit: 1 });

/** Agents Claude Code listed in claude-agent-nosuch.err; project and user agents come from .claude/agents. */
const CLAUDE_AGENTS = ['builder', 'claude', 'Explore', 'general-purpose', 'Plan', 'statusline-setup'];

function claudeAgents(cwd, home) {
  const found = new Set(CLAUDE_AGENTS);
  for (const dir of [path.join(cwd, '.claude', 'agents'), home && path.join(home, '.claude', 'agents')]) {
    if (!dir || !existsSync(dir)) continue;
    for (const file of readdirSync(dir)) if (file.endsWith('.md')) found.add(file.slice(0, -3));
  }
  return [...found].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
}

/**
 * Per executable name: `flags` maps each accepted flag to whether it takes a value; `subcommand` is the one
 * ralph runs (its flags follow it); `unknown` is the refusal of any other flag; `check` refuses combinations.
 */
export const CLIS = {
  claude: {
    flags: {
      '-p': false,
      '--print': false,
      '--output-format': true,
      '--verbose': false,
      '--dangerously-skip-permissions': false,
      '--permission-mode': true,
      '--model': true,
      '--agent': true,
      '--max-turns': true,
      '--setting-sources': true,
      '--strict-mcp-config': false,
      '--mcp-config': true,
    },
    unknown: commander(),
    check({ seen, env, cwd, uid }) {
      const print = seen.has('-p') || seen.has('--print');
      if (print && seen.get('--output-format') === 'stream-json' && !seen.has('--verbose')) return { stderr: recorded('claude-noverbose.err'), exit: 1 };
      // reference/agent-clis.md, "Root".
      if (seen.has('--dangerously-skip-permissions') && uid === 0 && env.IS_SANDBOX !== '1') {
        return { stderr: '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n', exit: 1 };
      }
      const agent = seen.get('--agent');
      if (agent !== undefined) {
        const agents = claudeAgents(cwd, env.HOME);
        if (!agents.includes(agent)) return { stderr: `--agent '${agent}' not found. Available agents: ${agents.join(', ')}\n`, exit: 1 };
      }
      return undefined;
    },
  },
  copilot: {
    flags: {
      '-p': true,
      '--prompt': true,
      '--allow-all-tools': false,
      '--allow-all': false,
      '-s': false,
      '--model': true,
      '--output-format': true,
      '--agent': true,
      '-C': true,
      '--autopilot': false,
      '--disable-builtin-mcps': false,
      '--disable-mcp-server': true,
    },
    unknown: commander("\nTry 'copilot --help' for more information.\n"),
  },
  gemini: {
    flags: {
      '-p': true,
      '--prompt': true,
      '--yolo': false,
      '--skip-trust': false,
      '-m': true,
      '--model': true,
      '-o': true,
      '--output-format': true,
      '--extensions': true,
    },
    // yargs in strict mode: the argument without its dashes, then the usage (as users reported it,
    // google-gemini/gemini-cli#26572; not in the recordings).
    unknown: (flag) => ({ stderr: `Unknown argument: ${flag.replace(/^-+/, '')}\nUsage: gemini [options] [command]\n`, exit: 1 }),
    check({ seen, env }) {
      if (!seen.has('--skip-trust') && env.GEMINI_CLI_TRUST_WORKSPACE !== 'true') return { stderr: recorded('gemini-notrust.err'), exit: 55 };
      return undefined;
    },
  },
  codex: {
    subcommand: 'exec',
    flags: {
      '--json': false,
      '--dangerously-bypass-approvals-and-sandbox': false,
      '--sandbox': true,
      '-m': true,
      '--model': true,
      '-o': true,
      '-C': true,
      '--ignore-user-config': false,
    },
    // clap's usage error, exit 2: reference/agent-clis.md names its words ("unexpected argument", for
    // `--full-auto` and `--max-turns`); the whole text and the exit code as users reported them.
    // (`codex exec --full-auto`, reference/agent-clis.md: "unexpected argument"), exit 2.
    unknown: (flag) => ({
      stderr: `error: unexpected argument '${flag}' found\n\n  tip: to pass '${flag}' as a value, use '-- ${flag}'\n\nUsage: codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]\n\nFor more information, try '--help'.\n`,
      exit: 2,
    }),
  },
  opencode: {
    subcommand: 'run',
    flags: { '--format': true, '--auto': false, '-m': true, '--model': true, '--agent': true, '--dir': true, '--pure': false },
    unknown: unrecorded('opencode'),
  },
  amp: {
    flags: { '-x': false, '--execute': false, '--dangerously-allow-all': false, '--stream-json': false, '-m': true, '--settings-file': true },
    unknown: unrecorded('amp'),
  },
  agent: {
    flags: { '-p': false, '--print': false, '--force': false, '--trust': false, '--model': true, '--output-format': true },
    unknown: unrecorded('agent (cursor)'),
  },
};
CLIS['cursor-agent'] = CLIS.agent;

/**
 * How the CLI named `name` answers `args`: undefined when it runs, or the refusal (stderr text and exit
 * code) it gives before doing anything. Names the table does not know accept everything.
 */
export function refusal(name, args, context) {
  const cli = Object.hasOwn(CLIS, name) ? CLIS[name] : undefined;
  if (!cli) return undefined;
  let rest = args;
  if (cli.subcommand && rest[0] === cli.subcommand) rest = rest.slice(1);
  const seen = new Map();
  for (let index = 0; index < rest.length; index += 1) {
    const arg = rest[index];
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') continue;
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = equals > 0 ? arg.slice(0, equals) : arg;
    if (!Object.hasOwn(cli.flags, flag)) return cli.unknown(flag);
    let value = true;
    if (cli.flags[flag]) value = equals > 0 ? arg.slice(equals + 1) : rest[(index += 1)];
    seen.set(flag, value);
  }
  return cli.check?.({ seen, env: context.env, cwd: context.cwd, uid: context.uid });
}
