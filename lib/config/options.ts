// The option table: one row per option, read by the argv parser, the env and file readers, and --help.
export type OptionKind = 'boolean' | 'int' | 'number' | 'duration' | 'size' | 'string' | 'list';

export interface OptionSpec {
  /** Long flag name without dashes, e.g. `max-iterations`. */
  name: string;
  short?: string;
  kind: OptionKind;
  /** Allowed values for a `string` option. */
  choices?: readonly string[];
  /** Smallest value for numeric kinds (durations and sizes included). */
  min?: number;
  /** Largest value for numeric kinds; durations are never above MAX_DURATION_MS. */
  max?: number;
  group: 'Run' | 'Agent' | 'Retries and limits' | 'Spec Kit' | 'PRD' | 'Several machines' | 'Pull request' | 'Containment' | 'Output' | 'Notify and serve' | 'General';
  /** Shown in --help; the real defaults live in config.ts. */
  defaultText?: string;
  help: string;
  /** Value name shown in --help. */
  arg?: string;
  /** False for options that make no sense from env or file (help, version). */
  configurable?: boolean;
}

export const COMMANDS = ['run', 'init', 'resume', 'status', 'report', 'stop', 'pause', 'unpause', 'serve', 'answer'] as const;
export type CommandName = (typeof COMMANDS)[number];

export const OPTIONS: readonly OptionSpec[] = [
  { name: 'source', kind: 'string', choices: ['beads', 'speckit', 'prd'], group: 'Run', arg: 'NAME', defaultText: 'detected', help: 'task source: .beads/ → beads, then Spec Kit, then prd.json' },
  { name: 'dry-run', short: 'n', kind: 'boolean', group: 'Run', help: 'check everything and show what a run would do; change nothing' },
  { name: 'max-iterations', kind: 'int', min: 1, max: 100_000, group: 'Run', arg: 'N', defaultText: '50 beads, 10 speckit and prd', help: 'stop with exit 2 after N iterations' },
  { name: 'epic', kind: 'string', group: 'Run', arg: 'ID', defaultText: 'from the branch', help: 'beads epic to work on' },
  { name: 'prompt', kind: 'string', group: 'Run', arg: 'TEXT', defaultText: '/sp:next in beads mode', help: 'prompt sent to the agent each iteration' },
  { name: 'progress-max-bytes', kind: 'size', min: 1024, group: 'Run', arg: 'SIZE', defaultText: '256K', help: 'past this size, older iteration entries of progress.txt move verbatim to progress.archive.txt beside it' },
  { name: 'log-max-bytes', kind: 'size', min: 64 * 1024, group: 'Output', arg: 'SIZE', defaultText: '64M', help: "most one agent log file of an iteration keeps (.ralph/logs/): its head, the lines ralph acted on and its last 4 MB; 0 keeps all" },
  { name: 'on-exit', kind: 'string', group: 'Run', arg: 'CMD', help: 'shell command run when ralph ends, with RALPH_STATUS, RALPH_EXIT_CODE, RALPH_REPORT, RALPH_SESSION set' },
  { name: 'agent', kind: 'string', group: 'Agent', arg: 'NAME', defaultText: 'claude', help: 'agent CLI: claude, copilot, gemini, codex, amp, opencode, cursor, custom' },
  { name: 'model', kind: 'string', group: 'Agent', arg: 'NAME', help: 'model passed to the agent CLI' },
  { name: 'agent-profile', kind: 'string', group: 'Agent', arg: 'NAME', help: 'custom agent profile (e.g. copilot --agent NAME)' },
  { name: 'fallback', kind: 'list', group: 'Agent', arg: 'AGENT[:MODEL]', defaultText: 'none', help: 'when the agent hits a usage limit (or runs out of credit), the same iteration goes on at once with the next of these not limited (repeatable, in order; a comma list too); the primary comes back once its limit resets; only when all are limited does ralph wait' },
  { name: 'review', kind: 'string', group: 'Agent', arg: 'AGENT[:MODEL]', defaultText: 'off', help: 'after each passing iteration, a second agent (any of the above, fresh) reviews the work and must answer VERDICT: APPROVE or VERDICT: REJECT: <reasons>; a rejected task is reopened; none turns it off' },
  { name: 'retries', kind: 'int', min: 1, max: 1000, group: 'Retries and limits', arg: 'N', defaultText: '10', help: 'attempts per iteration before giving up (exit 1)' },
  { name: 'retry-delay', kind: 'duration', group: 'Retries and limits', arg: 'DURATION', defaultText: '2s', help: 'backoff base (exponential, full jitter)' },
  { name: 'retry-max-delay', kind: 'duration', group: 'Retries and limits', arg: 'DURATION', defaultText: '5m', help: 'backoff cap' },
  { name: 'timeout', kind: 'duration', group: 'Retries and limits', arg: 'DURATION', defaultText: '60m', help: 'wall-clock limit for one agent run; 0: none' },
  { name: 'idle-timeout', kind: 'duration', group: 'Retries and limits', arg: 'DURATION', defaultText: '15m', help: 'end the agent after this long without output; 0: never' },
  { name: 'kill-grace', kind: 'duration', group: 'Retries and limits', arg: 'DURATION', defaultText: '10s', help: 'time between SIGTERM and SIGKILL for the agent group' },
  { name: 'max-wait', kind: 'duration', group: 'Retries and limits', arg: 'DURATION', defaultText: '6h', help: 'longest single wait for a usage-limit reset' },
  { name: 'max-no-progress', kind: 'int', min: 0, group: 'Retries and limits', arg: 'N', defaultText: '5', help: 'stop (exit 1) after N iterations in a row that finish no task and change no file nor HEAD; 0 turns it off' },
  { name: 'max-task-iterations', kind: 'int', min: 0, group: 'Retries and limits', arg: 'N', defaultText: '10', help: 'stop (exit 1) after N iterations in a row on one task without finishing it, even if they change files; 0 turns it off' },
  { name: 'max-cost', kind: 'number', min: 0, group: 'Retries and limits', arg: 'USD', help: 'stop (exit 2) once the agents have spent this much' },
  { name: 'feature', kind: 'string', group: 'Spec Kit', arg: 'NAME|PATH', defaultText: 'detected', help: 'Spec Kit feature: folder name, number prefix or path (else SPECIFY_FEATURE_DIRECTORY, .specify/feature.json, branch prefix, the only feature with tasks.md)' },
  { name: 'template', kind: 'string', group: 'Spec Kit', arg: 'PATH', defaultText: '.specify/templates/ralph-prompt.md, else built in', help: 'prompt template with {FEATURE_NAME} {SPEC_PATH} {PLAN_PATH} {TASKS_PATH} {PROGRESS_PATH} {ITERATION_NUMBER} {MAX_ITERATIONS} {CURRENT_TASK}' },
  { name: 'converge', kind: 'boolean', group: 'Spec Kit', defaultText: 'off', help: "once every task is done, converge passes (the project's /speckit.converge, else ralph's template) append what the spec still asks for as new tasks, worked like the others; done only when a pass finds nothing" },
  { name: 'max-converge', kind: 'int', min: 1, max: 100, group: 'Spec Kit', arg: 'N', defaultText: '3', help: 'converge passes per run; when the last still found work, the run ends with exit 2 (not proven converged)' },
  { name: 'prd', kind: 'string', group: 'PRD', arg: 'PATH', defaultText: '.rulebook-ralph/prd.json, .rulebook/ralph/prd.json, prd.json', help: 'prd.json to work through (snarktank userStories[] or rulebook tasks[])' },
  { name: 'force', kind: 'boolean', group: 'PRD', configurable: false, help: 'ralph init: replace a prd.json that holds progress (archived first to .rulebook-ralph/archive/<date>/)' },
  { name: 'gate', kind: 'list', group: 'Run', arg: 'CMD', defaultText: 'prd: typecheck, lint and test scripts of package.json; others: none', help: 'quality gate run by a shell after each iteration (repeatable); --gate none for no gates' },
  { name: 'commit', kind: 'boolean', group: 'Run', defaultText: 'on in prd mode, off otherwise', help: 'commit each passing iteration as "ralph: <task> <title>" with Ralph-Iteration and Ralph-Task trailers; --no-commit to skip' },
  { name: 'parallel', kind: 'int', min: 1, max: 64, group: 'Run', arg: 'N', defaultText: '1', help: 'run N agents at once, each in its own git worktree on its own branch; ralph merges their commits back one at a time' },
  { name: 'remote', kind: 'string', group: 'Several machines', arg: 'NAME', defaultText: 'off', help: "work with every other ralph run on this feature branch of the git remote NAME, on any machine: tasks are claimed on the remote (refs/ralph/…; beads: bd's own claims in a shared database) and each passing task is replayed on the remote's head and pushed" },
  { name: 'lease', kind: 'duration', group: 'Several machines', arg: 'DURATION', defaultText: '10m', help: "with --remote: how long a claim lives unrenewed (ralph renews it while the agent works); past it, another host takes the task over" },
  { name: 'remote-wait', kind: 'duration', group: 'Several machines', arg: 'DURATION', defaultText: '30m', help: 'with --remote: how long the remote may not answer (ralph waits and tries again, the work kept in this clone) before the run stops with exit 1' },
  { name: 'host-name', kind: 'string', group: 'Several machines', arg: 'NAME', defaultText: 'the machine\'s hostname', help: 'with --remote: the name the other hosts see in claims, status and reports' },
  { name: 'pr', kind: 'boolean', group: 'Pull request', defaultText: 'off', help: "push the branch as work lands (never forced) and at the end open one draft pull request into the remote's default branch with gh, its body the run's summary; a later run updates it; ready for review once every task is done" },
  { name: 'pr-draft', kind: 'boolean', group: 'Pull request', defaultText: 'off', help: 'with --pr: keep the pull request a draft even when every task is done' },
  { name: 'sandbox', kind: 'string', choices: ['none', 'bwrap'], group: 'Containment', arg: 'KIND', defaultText: 'none', help: "run the agent and the gates under bubblewrap (Linux): the repository, a private /tmp and the agent's own state writable, everything else read-only, ~/.ssh ~/.aws ~/.gnupg ~/.config/gh ~/.netrc ~/.docker … hidden" },
  { name: 'sandbox-network', kind: 'string', choices: ['on', 'off'], group: 'Containment', arg: 'on|off', defaultText: 'on', help: 'off: no network inside the sandbox (for agents that need none)' },
  { name: 'sandbox-hide', kind: 'list', group: 'Containment', arg: 'PATH', help: 'another path to hide inside the sandbox (repeatable; ~ is HOME; must exist)' },
  { name: 'sandbox-writable', kind: 'list', group: 'Containment', arg: 'PATH', help: 'another path the sandboxed agent may write, e.g. ~/.npm (repeatable; must exist)' },
  { name: 'isolate', kind: 'boolean', group: 'Containment', help: "start the agent without the user's own hooks, plugins and MCP servers, where its CLI allows (README: Containment)" },
  { name: 'redact', kind: 'boolean', group: 'Containment', defaultText: 'on', help: 'replace secrets (values of *KEY* *TOKEN* *SECRET* *PASSWORD* *CREDENTIAL* variables, known token shapes) by [redacted:NAME] in everything ralph prints or writes; --no-redact to turn off' },
  { name: 'redact-env', kind: 'list', group: 'Containment', arg: 'NAME', help: 'another environment variable whose value is secret (repeatable; * globs, e.g. DATABASE_URL or *_DSN)' },
  { name: 'heartbeat', kind: 'duration', group: 'Output', arg: 'DURATION', defaultText: '5m', help: "off a terminal, a 'still working' line (task, time so far, last output) when nothing was printed for this long; 0: none" },
  { name: 'json', kind: 'boolean', group: 'Output', help: 'print one JSON summary on stdout' },
  { name: 'quiet', short: 'q', kind: 'boolean', group: 'Output', help: 'only iteration summaries and the result' },
  { name: 'verbose', short: 'v', kind: 'boolean', group: 'Output', help: "add the agent's full text" },
  { name: 'watch', kind: 'boolean', group: 'Output', configurable: false, help: "'ralph status': refresh every second until Ctrl+C" },
  { name: 'notify', kind: 'list', group: 'Notify and serve', arg: 'URL', help: "POST a message to this webhook on start, end, failures, usage-limit waits, stop, pause and an agent's question (repeatable)" },
  { name: 'notify-events', kind: 'list', group: 'Notify and serve', arg: 'LIST', defaultText: 'all: start,end,failure,usage-limit,stop,pause,question', help: 'which events --notify sends (comma-separated)' },
  { name: 'notify-format', kind: 'string', choices: ['generic', 'slack', 'discord', 'ntfy'], group: 'Notify and serve', arg: 'NAME', defaultText: 'from the URL, else generic', help: 'message shape: generic JSON, or what Slack, Discord or ntfy expect' },
  { name: 'notify-timeout', kind: 'duration', group: 'Notify and serve', arg: 'DURATION', defaultText: '5s', help: 'longest wait for a webhook (one retry); the loop never waits for it' },
  { name: 'now', kind: 'boolean', group: 'Notify and serve', configurable: false, help: "'ralph stop': stop the agent at once, like Ctrl+C, instead of after the current iteration" },
  { name: 'port', kind: 'int', min: 0, max: 65_535, group: 'Notify and serve', arg: 'N', defaultText: '7420', help: "'ralph serve': port of the live page (0: any free port)" },
  { name: 'host', kind: 'string', group: 'Notify and serve', arg: 'ADDRESS', defaultText: '127.0.0.1', help: "'ralph serve': address to listen on; beyond loopback the page is read-only" },
  { name: 'help', short: 'h', kind: 'boolean', group: 'General', configurable: false, help: 'show this help' },
  { name: 'version', short: 'V', kind: 'boolean', group: 'General', configurable: false, help: 'print the version' },
];

/**
 * The flags each command reads, beside --help and --version; a flag a command does not read is refused,
 * not ignored. `run` and `resume` read every option but those only other commands read.
 */
export const COMMAND_FLAGS: Partial<Record<CommandName, readonly string[]>> = {
  status: ['json', 'watch', 'source', 'prd', 'feature', 'epic', 'remote', 'lease'],
  report: ['json'],
  stop: ['now'],
  pause: [],
  unpause: [],
  serve: ['port', 'host', 'remote', 'lease'],
  init: ['force', 'json'],
  answer: [],
};
/** Positional words a command takes (the session of `ralph report`); the others take none. */
export const COMMAND_POSITIONALS: Partial<Record<CommandName, { most: number; what: string }>> = {
  report: { most: 1, what: 'a session id' },
  answer: { most: 2, what: 'the task and the answer, e.g. ralph answer T003 "410"' },
};

/** The longest duration a timer can wait (2^31 - 1 ms, about 24.8 days); longer ones would fire at once. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

export function findOption(name: string): OptionSpec | undefined {
  return OPTIONS.find((option) => option.name === name);
}

/** `max-iterations` → `maxIterations` (the key used in ralph.config.json). */
export function camelName(name: string): string {
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** `max-iterations` → `RALPH_MAX_ITERATIONS`. */
export function envName(name: string): string {
  return `RALPH_${name.replace(/-/g, '_').toUpperCase()}`;
}
