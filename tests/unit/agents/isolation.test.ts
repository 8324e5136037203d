import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { amp } from '../../../lib/agents/amp.ts';
import { claude } from '../../../lib/agents/claude.ts';
import { copilot } from '../../../lib/agents/copilot.ts';
import { BUILT_IN_AGENTS, getAgent } from '../../../lib/agents/index.ts';
import { isolationArgs, mcpServerNames } from '../../../lib/agents/isolation.ts';
import { tempDir } from '../../support/temp.ts';

function context(extra: Partial<{ cwd: string; home: string; env: NodeJS.ProcessEnv; write: boolean }> = {}) {
  const dir = tempDir('ralph-isolate-');
  const cwd = path.join(dir, 'repo');
  const home = path.join(dir, 'home');
  mkdirSync(cwd);
  mkdirSync(home);
  return { cwd, home, env: {}, scratch: path.join(cwd, '.ralph', 'isolation'), ...extra };
}

const request = { prompt: 'do it', extraArgs: ['--extra'], cwd: '/repo' };

describe('--isolate, per agent', () => {
  it('claude: project and local settings only, strict MCP config, the project .mcp.json handed back', () => {
    const ctx = context();
    expect(isolationArgs(claude, ctx)).toEqual(['--setting-sources', 'project,local', '--strict-mcp-config']);
    writeFileSync(path.join(ctx.cwd, '.mcp.json'), '{"mcpServers":{"db":{}}}');
    expect(isolationArgs(claude, ctx)).toEqual(['--setting-sources', 'project,local', '--strict-mcp-config', '--mcp-config', path.join(ctx.cwd, '.mcp.json')]);
  });

  it("copilot: the built-in MCP servers off, and each server of the user's mcp-config.json", () => {
    const ctx = context();
    expect(isolationArgs(copilot, ctx)).toEqual(['--disable-builtin-mcps']);
    mkdirSync(path.join(ctx.home, '.copilot'));
    writeFileSync(path.join(ctx.home, '.copilot', 'mcp-config.json'), JSON.stringify({ mcpServers: { playwright: {}, 'my-db': {} } }));
    expect(isolationArgs(copilot, ctx)).toEqual(['--disable-builtin-mcps', '--disable-mcp-server', 'playwright', '--disable-mcp-server', 'my-db']);
    // COPILOT_HOME moves the file.
    const moved = path.join(ctx.home, 'elsewhere');
    mkdirSync(moved);
    writeFileSync(path.join(moved, 'mcp-config.json'), JSON.stringify({ mcpServers: { other: {} } }));
    expect(isolationArgs(copilot, { ...ctx, env: { COPILOT_HOME: moved } })).toEqual(['--disable-builtin-mcps', '--disable-mcp-server', 'other']);
  });

  it('amp: an empty settings file of ralph’s own instead of the user’s (not written in a dry run)', () => {
    const ctx = context();
    const file = path.join(ctx.scratch, 'amp-settings.json');
    expect(isolationArgs(amp, { ...ctx, write: false })).toEqual(['--settings-file', file]);
    expect(existsSync(file)).toBe(false);
    expect(isolationArgs(amp, ctx)).toEqual(['--settings-file', file]);
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it.each([
    ['codex', ['--ignore-user-config']],
    ['gemini', ['--extensions', 'none']],
    ['opencode', ['--pure']],
    ['cursor', []],
  ])('%s: %j', async (name, args) => {
    expect(isolationArgs(await getAgent(name), context())).toEqual(args);
  });

  it('every adapter says what isolation covers and leaves, or has none; each places the flags before the extra args', async () => {
    for (const name of BUILT_IN_AGENTS) {
      const agent = await getAgent(name);
      if (agent.isolation) {
        expect(agent.isolation.covers.length, name).toBeGreaterThan(10);
        expect(agent.isolation.leaves.length, name).toBeGreaterThan(10);
      }
      const command = agent.command({ ...request, isolationArgs: ['--ISOLATED'] });
      const at = command.args.indexOf('--ISOLATED');
      expect(at, name).toBeGreaterThan(-1);
      expect(command.args.indexOf('--extra'), name).toBe(at + 1);
      expect(agent.command(request).args, name).not.toContain('--ISOLATED');
    }
    expect((await getAgent('cursor')).isolation).toBeUndefined();
  });

  it('reads MCP server names, and none from a missing or broken file', () => {
    const ctx = context();
    const file = path.join(ctx.home, 'servers.json');
    expect(mcpServerNames(file)).toEqual([]);
    writeFileSync(file, '{ not json');
    expect(mcpServerNames(file)).toEqual([]);
    writeFileSync(file, '{"mcpServers":["not","an","object"]}');
    expect(mcpServerNames(file)).toEqual([]);
  });
});
