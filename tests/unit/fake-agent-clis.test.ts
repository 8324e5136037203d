// The fake agent's knowledge of the real CLIs (tests/fakes/agent-clis.mjs): it accepts every command line
// ralph's adapters build, in every shape, and refuses what the real CLIs refuse, with their recorded words.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_PROMPT_ARG_BYTES } from '../../lib/agents/common.ts';
import { BUILT_IN_AGENTS, getAgent } from '../../lib/agents/index.ts';
import { isolationArgs } from '../../lib/agents/isolation.ts';
import type { Agent, AgentRequest } from '../../lib/agents/types.ts';
import { CLIS, refusal, type CliContext } from '../fakes/agent-clis.mjs';
import { tempDir } from '../support/temp.ts';

const RECORDINGS = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'recordings');
const recorded = (file: string): string => readFileSync(path.join(RECORDINGS, file), 'utf8');

/** A project with the files that make --isolate add every flag it can: a project .mcp.json, user MCP servers. */
function project(): { cwd: string; home: string } {
  const root = tempDir('ralph-fake-clis-');
  const cwd = path.join(root, 'repo');
  const home = path.join(root, 'home');
  mkdirSync(path.join(cwd, '.claude', 'agents'), { recursive: true });
  mkdirSync(path.join(home, '.copilot'), { recursive: true });
  writeFileSync(path.join(cwd, '.mcp.json'), '{"mcpServers":{}}\n');
  writeFileSync(path.join(cwd, '.claude', 'agents', 'reviewer.md'), '---\nname: reviewer\n---\n');
  writeFileSync(path.join(home, '.copilot', 'mcp-config.json'), JSON.stringify({ mcpServers: { github: {}, 'my-db': {} } }));
  return { cwd, home };
}

const context = (cwd: string, home: string, env: NodeJS.ProcessEnv = {}, uid: number | undefined = 1000): CliContext => ({ cwd, uid, env: { HOME: home, ...env } });

/** Every command line the adapter builds: prompt in argv or on stdin (too big, or starting with `-`), model, profile, --isolate. */
function commandLines(agent: Agent, cwd: string, home: string): string[][] {
  const isolation = isolationArgs(agent, { cwd, home, env: { HOME: home }, scratch: path.join(cwd, '.ralph'), write: false });
  const lines: string[][] = [];
  for (const prompt of ['Work on T001', 'x'.repeat(MAX_PROMPT_ARG_BYTES + 1), '--looks like a flag']) {
    for (const extra of [{}, { model: 'm1' }, { model: 'm1', profile: 'reviewer' }, { profile: 'Plan', isolationArgs: isolation }, { model: 'm1', isolationArgs: isolation }]) {
      const request: AgentRequest = { prompt, extraArgs: [], cwd, ...extra };
      lines.push(agent.command(request).args);
    }
  }
  return lines;
}

describe('the fake agent CLIs', () => {
  it('knows the CLI of every built-in adapter', async () => {
    for (const name of BUILT_IN_AGENTS) expect(Object.keys(CLIS), name).toContain((await getAgent(name)).bin);
  });

  it.each(BUILT_IN_AGENTS)('accepts every command line the %s adapter builds', async (name) => {
    const { cwd, home } = project();
    const agent = await getAgent(name);
    const lines = commandLines(agent, cwd, home);
    // --isolate added flags for every CLI that has any: they are checked too.
    if (agent.isolation) expect(lines.some((args) => agent.isolation!.args.every((flag) => args.includes(flag)))).toBe(true);
    for (const args of lines) expect(refusal(agent.bin, args, context(cwd, home)), args.join(' ').slice(0, 300)).toBeUndefined();
  });

  it.each(BUILT_IN_AGENTS)('refuses a flag the %s CLI does not have, with its own words and exit code', async (name) => {
    const { cwd, home } = project();
    const agent = await getAgent(name);
    const args = agent.command({ prompt: 'Work on T001', extraArgs: ['--no-such-flag'], cwd }).args;
    const refused = refusal(agent.bin, args, context(cwd, home));
    expect(refused).toEqual(CLIS[agent.bin]!.unknown('--no-such-flag'));
    expect(refused!.stderr).toContain('no-such-flag');
    expect(refused!.exit).not.toBe(0);
  });

  it('refuses the flags of the recorded refusals in the words the real CLIs used', () => {
    const { cwd, home } = project();
    const ctx = context(cwd, home);
    expect(refusal('claude', ['-p', '--output-format', 'stream-json', '--dangerously-skip-permissions'], ctx)).toEqual({ stderr: recorded('claude-noverbose.err'), exit: 1 });
    expect(refusal('claude', ['--print', '--output-format=stream-json'], ctx)).toEqual({ stderr: recorded('claude-noverbose.err'), exit: 1 });
    expect(refusal('claude', ['-p', '--output-format', 'json'], ctx)).toBeUndefined();
    // With no project or user agents, the list is the recorded one.
    expect(refusal('claude', ['-p', '--agent', 'nosuch'], context(path.join(cwd, 'elsewhere'), path.join(home, 'elsewhere')))).toEqual({ stderr: recorded('claude-agent-nosuch.err'), exit: 1 });
    expect(refusal('claude', ['-p', '--agent', 'nosuch'], ctx)!.stderr).toContain('Available agents: builder, claude, Explore, general-purpose, Plan, reviewer, statusline-setup');
    expect(refusal('claude', ['-p', '--agent', 'reviewer'], ctx)).toBeUndefined();
    expect(refusal('gemini', ['-p', 'hi', '--yolo', '-o', 'stream-json'], ctx)).toEqual({ stderr: recorded('gemini-notrust.err'), exit: 55 });
    expect(refusal('gemini', ['-p', 'hi', '--yolo', '-o', 'stream-json'], context(cwd, home, { GEMINI_CLI_TRUST_WORKSPACE: 'true' }))).toBeUndefined();
    // reference/agent-clis.md: removed flags that codex exec rejects as an unexpected argument.
    for (const flag of ['--full-auto', '--max-turns']) {
      expect(refusal('codex', ['exec', '--json', flag, '-'], ctx)).toMatchObject({ stderr: expect.stringContaining(`error: unexpected argument '${flag}' found`), exit: 2 });
    }
  });

  it('refuses --dangerously-skip-permissions to root unless IS_SANDBOX=1, like claude', () => {
    const { cwd, home } = project();
    const args = ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
    expect(refusal('claude', args, context(cwd, home, {}, 0))).toEqual({ stderr: '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n', exit: 1 });
    expect(refusal('claude', args, context(cwd, home, { IS_SANDBOX: '1' }, 0))).toBeUndefined();
    expect(refusal('claude', args, context(cwd, home, {}, 1000))).toBeUndefined();
  });

  it('reads values as values, whatever they look like, and a name it does not know accepts anything', () => {
    const { cwd, home } = project();
    const ctx = context(cwd, home);
    expect(refusal('copilot', ['-p', 'review the --force flag', '--allow-all-tools', '--model=m1'], ctx)).toBeUndefined();
    expect(refusal('codex', ['exec', '--json', '-m', '--strange-model', '-'], ctx)).toBeUndefined();
    expect(refusal('codex', ['exec', '--json', '--', '--not-a-flag'], ctx)).toBeUndefined();
    expect(refusal('my-own-agent', ['--anything', '-x'], ctx)).toBeUndefined();
  });
});
