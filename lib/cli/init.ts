import { count } from '../progress/tasks-left.ts';
import { Git } from '../repo/git.ts';
import type { Deps } from '../deps.ts';
import { readConfigFile, resolveConfig } from '../config/index.ts';
import { initFromRulebook } from '../sources/prd/init.ts';
import type { ParsedArgv } from './argv.ts';

/** `ralph init`: writes .rulebook-ralph/prd.json from rulebook tasks and prints `{ success, taskCount, prdPath }`. */
export async function initCommand(parsed: ParsedArgv, deps: Deps): Promise<number> {
  const root = (await new Git(deps.cwd).root()) ?? deps.cwd;
  const config = resolveConfig({ flags: parsed.flags, env: deps.env, file: readConfigFile(root) });
  const result = initFromRulebook(root, { force: parsed.flags.get('force') === true, now: deps.now(), warn: (message) => deps.stderr.write(`ralph: warning: ${message}\n`) });
  if (config.json) deps.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const width = Math.max(...result.tasks.map((task) => task.id.length));
    const lines = result.tasks.map((task) => `  ${task.id.padEnd(width)}  ${task.status.padEnd(9)}  ${task.judgedBy}`);
    deps.stdout.write(`wrote ${result.prdPath} with ${count(result.taskCount, 'task')}:\n${lines.join('\n')}\n`);
  }
  return result.success ? 0 : 1;
}
