import { envName, OPTIONS, type OptionSpec } from '../config/options.ts';

const GROUP_ORDER: OptionSpec['group'][] = ['Run', 'Agent', 'Retries and limits', 'Spec Kit', 'PRD', 'Several machines', 'Pull request', 'Containment', 'Output', 'Notify and serve', 'General'];

/** --help: commands, options grouped with defaults and env names, exit codes. */
export function helpText(version: string): string {
  const lines = [
    `ralph ${version}: runs an AI coding agent in a fresh process, task by task, until the feature is done`,
    '',
    'Usage: ralph [command] [options] [-- extra agent args]',
    '  ralph: /path/to/ralph/ralph.ts or node /path/to/ralph/bin/ralph.mjs from any folder, the `ralph` of',
    '  npm link or npm install -g, or npx tsx ralph.ts inside ralph\'s own folder',
    '',
    'Commands:',
    '  run        run the loop (default)',
    '  resume     continue an interrupted run (same as run; recovers interrupted tasks and numbering)',
    '  init       write .rulebook-ralph/prd.json from rulebook tasks',
    '  status     show the state of a run in this repo (works from another terminal)',
    '  report     write the report of a session (the latest by default)',
    '  stop       end the run of this repo after its current iteration (--now: at once, like Ctrl+C)',
    '  pause      let the current iteration finish, then start no new one until unpause',
    '  unpause    let a paused run go on',
    '  serve      a live page of the current or last run at http://127.0.0.1:7420/',
    '  answer     answer the question an agent asked: ralph answer T003 "410" (no words: list the waiting ones)',
  ];
  for (const group of GROUP_ORDER) {
    const options = OPTIONS.filter((option) => option.group === group);
    if (options.length === 0) continue;
    lines.push('', `${group} options:`);
    for (const option of options) {
      const flag = `${option.short ? `-${option.short}, ` : '    '}--${option.name}${option.kind === 'boolean' ? '' : ` ${option.arg ?? 'VALUE'}`}`;
      const extras = [option.defaultText ? `default: ${option.defaultText}` : '', option.configurable === false ? '' : envName(option.name)].filter(Boolean).join('; ');
      lines.push(`  ${flag.padEnd(34)} ${option.help}${extras ? ` [${extras}]` : ''}`);
    }
  }
  lines.push(
    '',
    'Every option can also be set as RALPH_<NAME> in the environment or as "camelCase" key in',
    'ralph.config.json at the repo root: flags win over env, env over the file, the file over defaults.',
    'Durations: 250ms, 30s, 5m, 2h, 1h30m.',
    '',
    'Exit codes:',
    '  0    all tasks complete',
    '  1    failure: prerequisite missing, lock held, agent still failing after retries, no task can make progress',
    '       (or only tasks waiting for answers to their questions are left: ralph answer lists them)',
    '  2    iteration limit (or --max-cost budget) reached with tasks remaining',
    '  129  hung up (SIGHUP: the terminal, ssh session or tmux pane went away)',
    '  130  interrupted by Ctrl+C (SIGINT), or stopped by ralph stop',
    "  141  ralph's output closed (| head, a tee that died, a dropped ssh session: EPIPE on stdout or stderr)",
    '  143  terminated by SIGTERM',
  );
  return `${lines.join('\n')}\n`;
}
