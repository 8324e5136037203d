// --isolate: an agent CLI started without the user's own hooks, plugins and MCP servers, as far as the CLI
// allows. The adapters describe it as data (Agent.isolation); this turns the data into arguments.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../repo/fs-atomic.ts';
import { PRIVATE_FILE } from '../repo/private-files.ts';
import type { Agent } from './types.ts';

export interface IsolationContext {
  /** Where the agent works (its project files: .mcp.json, …). */
  cwd: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** A folder of ralph's own for files it hands the CLI (an empty settings file). */
  scratch: string;
  /** False for --dry-run: name the files, write nothing. */
  write?: boolean;
}

/** The names of the MCP servers a JSON config file lists under `mcpServers`; none when unreadable. */
export function mcpServerNames(file: string): string[] {
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers?: unknown };
    const servers = data.mcpServers;
    return servers && typeof servers === 'object' && !Array.isArray(servers) ? Object.keys(servers) : [];
  } catch {
    return [];
  }
}

/** The arguments that isolate `agent` from the user's configuration; empty when it has no way to. */
export function isolationArgs(agent: Agent, context: IsolationContext): string[] {
  const isolation = agent.isolation;
  if (!isolation) return [];
  const args = [...isolation.args];
  if (isolation.keepProjectFile) {
    const file = path.join(context.cwd, isolation.keepProjectFile.file);
    if (existsSync(file)) args.push(isolation.keepProjectFile.flag, file);
  }
  if (isolation.disableUserServers) {
    const { dir, dirEnv, file, flag } = isolation.disableUserServers;
    const folder = (dirEnv && context.env[dirEnv]) || path.join(context.home, dir);
    for (const name of mcpServerNames(path.join(folder, file))) args.push(flag, name);
  }
  if (isolation.emptySettingsFlag) {
    const file = path.join(context.scratch, `${agent.name}-settings.json`);
    if (context.write !== false && !existsSync(file)) writeFileAtomic(file, '{}\n', { mode: PRIVATE_FILE });
    args.push(isolation.emptySettingsFlag, file);
  }
  return args;
}
