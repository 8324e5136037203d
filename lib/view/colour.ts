// Terminal colours through zx's chalk. ralph decides per stream whether to paint (its view is on stderr,
// `ralph status` on stdout); chalk judges process.stdout alone when it loads, so its level is only raised
// to basic colours here and `paint` is told whether this output wants them.
import { chalk } from '../process/zx.ts';
import type { Output } from '../deps.ts';

// (zx hands chalk out through a proxy that reads a level of 0 as undefined.)
if (!chalk.level) chalk.level = 1;

export type Colour = 'red' | 'green' | 'yellow' | 'blue' | 'magenta' | 'cyan' | 'dim' | 'bold';

/** Colour only on a TTY, without NO_COLOR and not on a dumb terminal. */
export function useColor(out: Output, env: NodeJS.ProcessEnv): boolean {
  return Boolean(out.isTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb';
}

/** `text` in `colour` when `enabled`, else unchanged. */
export function paint(enabled: boolean, colour: Colour, text: string): string {
  return enabled ? chalk[colour](text) : text;
}
