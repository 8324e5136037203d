// Tests that need a Debian tool (chromium, tmux, bwrap, …): they run when the tool is on PATH, and are
// reported as skipped, with the reason and the install command, when it is not. `.ci/run` installs the
// tools and lists them in RALPH_REQUIRE_TOOLS, where a missing one fails its tests instead of skipping them.
//
//   const tmux = needsTool('tmux');
//   it.skipIf(tmux.skip)(tmux.title('drives the launcher'), () => { execFileSync(tmux.bin(), …) });
import path from 'node:path';
import { findOnPath } from '../../lib/process/zx.ts';

export interface NeededTool {
  name: string;
  /** Absolute path of the first of the tool's binaries found on PATH. */
  path: string | undefined;
  /** Whether tests using the tool should be skipped: missing, and not required by RALPH_REQUIRE_TOOLS. */
  skip: boolean;
  /** Why it is skipped and how to install it (empty when the tool is there). */
  reason: string;
  /** The test title, with the reason appended when skipped, so every reporter shows why. */
  title(text: string): string;
  /** The tool's path; a required tool that is missing fails the test here, naming the install command. */
  bin(): string;
  /** PATH with the tool's folder first, for a child whose PATH is built from scratch (a sandbox). */
  pathWith(base: string | undefined): string;
}

export interface ToolOptions {
  /** Binary names to look for (default: the tool's name). */
  bins?: string[];
  /** Debian package that provides it (default: the tool's name). */
  apt?: string;
  env?: NodeJS.ProcessEnv;
}

const reported = new Set<string>();

/** Looks a tool up on PATH and, when it is missing, says so on stderr (once per test worker). */
export function needsTool(name: string, options: ToolOptions = {}): NeededTool {
  const env = options.env ?? process.env;
  const bins = options.bins ?? [name];
  const found = bins.map((bin) => findOnPath(bin, env)).find((file) => file !== undefined);
  const required = (env.RALPH_REQUIRE_TOOLS ?? '').split(/[\s,]+/).includes(name);
  const install = `apt-get install -y ${options.apt ?? name}`;
  const reason = found ? '' : `${bins.join(' or ')} not found on PATH: install it with \`${install}\``;
  const skip = !found && !required;
  if (skip && !reported.has(name)) {
    reported.add(name);
    console.warn(`skipped: the tests that need ${name} (${reason})`);
  }
  return {
    name,
    path: found,
    skip,
    reason,
    title: (text) => (skip ? `${text} [skipped: ${reason}]` : text),
    bin: () => {
      if (found) return found;
      throw new Error(`${reason}; RALPH_REQUIRE_TOOLS lists ${name}, so its tests must run`);
    },
    pathWith: (base) => [found ? path.dirname(found) : undefined, base].filter(Boolean).join(path.delimiter),
  };
}
